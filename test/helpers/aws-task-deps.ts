/**
 * The TaskDeps of every Task on AWS at once (core/task-deps/aws-task-deps.ts: the AWS backend with
 * every part, the Athena judge and compaction) from a Task Lambda's environment, with every SDK
 * client traced as the Lambdas trace theirs: the tests that run the Tasks on moto. Each deployed
 * function builds only its own Task's share of these (lambdas/<task>/handler.ts), from the same
 * parts (core/backends/aws/parts) and the same wiring (core/task-deps/aws-function-deps.ts).
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { AwsClients } from '../../core/backends/aws/clients';
import { athenaJudge } from '../../core/regression/judge';
import { buildAwsTaskDeps as buildDeps } from '../../core/task-deps/aws-task-deps';
import type { TaskDeps } from '../../core/workflow/tasks/types';

export interface AwsTaskDepsOverrides {
  /** SDK clients to use instead of the default ones of the Lambda's role (tests: a moto endpoint). */
  readonly clients?: AwsClients;
}

export function buildAwsTaskDeps(
  env: Readonly<Record<string, string | undefined>>,
  tracer: Tracer,
  overrides: AwsTaskDepsOverrides = {},
): Promise<TaskDeps> {
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
