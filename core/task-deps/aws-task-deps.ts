/**
 * The TaskDeps of every workflow Task on AWS at once, for the AWS rehearsal and the tests on moto.
 * Each Lambda builds only its own Task's share, from the same parts.
 * This wiring sits above both the workflow and the backends, so neither has to know the other.
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
  /** SDK clients to use instead of the role's defaults, such as a moto endpoint. */
  readonly clients?: AwsClients;
  /** Called once with each SDK client before use. The Lambda uses it for X-Ray capture. */
  readonly instrumentClient?: (client: AwsClients[keyof AwsClients]) => void;
  /**
   * TaskDeps.judgeRun over this configuration's lake.
   * The caller gives it, since judging sits above the workflow in the data path.
   */
  readonly judge: (config: AwsBackendConfig, clients: AwsClients) => TaskDeps['judgeRun'];
  /**
   * FinishRun compacts the run's step rows to Parquet with Athena.
   * The Lambdas do. The rehearsal does not, since its Athena emulation writes no files.
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
