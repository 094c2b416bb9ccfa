/** Task deps for a definition whose states call no Task handler: the backend is never used. */
import type { Backend } from '../../core/backend';
import type { TaskDeps } from '../../core/workflow/tasks/types';

export const NO_TASK_DEPS: TaskDeps = {
  backend: {} as Backend,
  now: () => new Date(),
  toolVersion: 'test',
  gitSha: null,
  serverVersion: null,
  readyTimeoutS: 60,
  judgeRun: () => Promise.reject(new Error('no Task runs in these tests')),
};
