/**
 * The TaskDeps of the workflow's tasks on AWS: the AWS backend configured from the environment the
 * stack sets on every Task Lambda (lib/handler-environment.ts, names in core/backends/aws/config.ts),
 * and the account preflight (core/backends/aws/preflight.ts) PlanRun runs: the deps of every Task at
 * once, which the AWS rehearsal and the tests on moto build here. Each Lambda builds only its own
 * Task's share, from the same parts and wiring (lambdas/<task>/handler.ts, aws-function-deps.ts).
 * It sits above both the workflow (TaskDeps is its type) and the backends: wiring, so neither has
 * to know the other.
 */
import { AwsBackend } from '../backends/aws/aws-backend';
import { makeAwsClients, type AwsClients } from '../backends/aws/clients';
import { awsConfigFromEnv } from '../backends/aws/config';
import type { AwsBackendConfig } from '../backends/aws/config';
import type { TaskDeps } from '../workflow/tasks/types';
import { athenaCompaction } from './athena-compaction-deps';
import { awsFunctionTaskDeps } from './aws-function-deps';
import { awsPreflight } from './aws-preflight-deps';

export interface AwsTaskDepsOptions {
  /** SDK clients to use instead of the default ones of the Lambda's role (tests, rehearsal: a moto endpoint). */
  readonly clients?: AwsClients;
  /** Called once with each SDK client before use (the Lambda: X-Ray capture). */
  readonly instrumentClient?: (client: AwsClients[keyof AwsClients]) => void;
  /**
   * TaskDeps.judgeRun over this configuration's lake (core/regression/judge.ts athenaJudge): given by
   * the caller, since the judging sits above the workflow in the data path.
   */
  readonly judge: (config: AwsBackendConfig, clients: AwsClients) => TaskDeps['judgeRun'];
  /**
   * FinishRun compacts the run's step rows to Parquet with Athena (core/backends/aws/athena-compaction.ts).
   * The Lambdas do; the rehearsal does not (its Athena emulation answers queries, it does not write files).
   */
  readonly compactWithAthena?: boolean;
}

export function buildAwsTaskDeps(
  env: Readonly<Record<string, string | undefined>>,
  options: AwsTaskDepsOptions,
): TaskDeps {
  const config = awsConfigFromEnv(env);
  const clients = options.clients ?? makeAwsClients({ region: config.region });
  if (options.instrumentClient)
    for (const client of Object.values(clients) as AwsClients[keyof AwsClients][]) options.instrumentClient(client);
  const backend = new AwsBackend({ config, clients });
  return awsFunctionTaskDeps(
    env,
    {
      backend,
      preflight: awsPreflight(config, clients),
      judgeRun: options.judge(config, clients),
      ...(options.compactWithAthena ? { compactRun: athenaCompaction(config, clients) } : {}),
    },
    'the AWS deps of every Task',
  );
}
