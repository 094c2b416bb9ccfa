/**
 * The TaskDeps of a Task Lambda: core/task-deps/aws-task-deps.ts from the Lambda's environment, with
 * every SDK client traced by X-Ray.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { AwsClients } from '../../core/backends/aws/clients';
import { athenaJudge } from '../../core/regression/judge';
import { buildAwsTaskDeps as buildDeps } from '../../core/task-deps/aws-task-deps';
import type { TaskDeps } from '../../core/workflow/tasks';

export interface AwsTaskDepsOverrides {
  /** SDK clients to use instead of the default ones of the Lambda's role (tests: a moto endpoint). */
  readonly clients?: AwsClients;
}

export function buildAwsTaskDeps(env: Readonly<Record<string, string | undefined>>, tracer: Tracer, overrides: AwsTaskDepsOverrides = {}): Promise<TaskDeps> {
  // A promise (a bad environment rejects it) as the handlers and tests await it.
  return Promise.resolve().then(() =>
    buildDeps(env, {
      ...overrides,
      instrumentClient: (client) => tracer.captureAWSv3Client(client),
      judge: (config, clients) => athenaJudge(config, clients.athena),
      compactWithAthena: true,
    }),
  );
}
