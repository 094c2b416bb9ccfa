/**
 * Every Lambda-backed Task by name, with the function that does its work.
 * The local runner binds these to local deps, and each Lambda handler to AWS deps.
 * The `satisfies` clause checks the map against TASK_NAMES at compile time.
 */
import type { TaskName } from './task-names';
import { computeVerdictsTask } from './tasks/compute-verdicts';
import { finishRunTask } from './tasks/finish-run';
import { judgeRoundTask } from './tasks/judge-round';
import { planRunTask } from './tasks/plan-run';
import type { TaskDeps } from './tasks/types';
import { checkCellReadyTask } from './tasks/check-cell-ready';
import { checkClientsReadyTask } from './tasks/check-clients-ready';
import { collectLateMetricsTask } from './tasks/collect-late-metrics';
import { provisionCellTask } from './tasks/provision-cell';
import { runStepTask } from './tasks/run-step';
import { startClientsTask } from './tasks/start-clients';
import { teardownCellTask } from './tasks/teardown-cell';

export const TASKS = {
  'plan-run': planRunTask,
  'provision-cell': provisionCellTask,
  'check-cell-ready': checkCellReadyTask,
  'start-clients': startClientsTask,
  'check-clients-ready': checkClientsReadyTask,
  'run-step': runStepTask,
  'collect-late-metrics': collectLateMetricsTask,
  'teardown-cell': teardownCellTask,
  'finish-run': finishRunTask,
  'compute-verdicts': computeVerdictsTask,
  // After each round of a run with questions: another round or stop.
  'judge-round': judgeRoundTask,
} as const satisfies Record<TaskName, (deps: TaskDeps, event: never) => Promise<unknown>>;

/** What the state machine passes to a task. */
export type TaskEvent<T extends TaskName> = Parameters<(typeof TASKS)[T]>[1];
/** What a task returns to the state machine. */
export type TaskResult<T extends TaskName> = Awaited<ReturnType<(typeof TASKS)[T]>>;
/** A task bound to its deps, as a Task state invokes it. */
export type BoundTask<T extends TaskName> = (event: TaskEvent<T>) => Promise<TaskResult<T>>;

/**
 * One task bound to deps.
 * @internal exported for its tests (a test seam)
 */
export function bindTask<T extends TaskName>(task: T, deps: TaskDeps): BoundTask<T> {
  const run = TASKS[task] as (deps: TaskDeps, event: TaskEvent<T>) => Promise<TaskResult<T>>;
  return (event) => run(deps, event);
}

/** Every task bound to the same deps. */
export function bindTasks(deps: TaskDeps): { readonly [T in TaskName]: BoundTask<T> } {
  const bound = {} as Record<TaskName, unknown>;
  for (const task of Object.keys(TASKS) as TaskName[]) bound[task] = bindTask(task, deps);
  return bound as { readonly [T in TaskName]: BoundTask<T> };
}
