/**
 * The TaskDeps of the workflow's tasks on AWS: the AWS backend configured from the environment the
 * stack sets on every Task Lambda (lib/handler-environment.ts, names in core/backends/aws/config.ts),
 * and the account preflight (core/backends/aws/preflight.ts) PlanRun runs. The Lambda handlers
 * (lambdas/runtime/aws-deps.ts adds X-Ray tracing) and the AWS rehearsal build them here, so both run
 * the tasks with the same deps. It sits above both the workflow (TaskDeps is its type) and the
 * backends: wiring, so neither has to know the other.
 */
import { compactRunOnAthena } from '../backends/aws/athena-compaction';
import { AwsBackend } from '../backends/aws/aws-backend';
import { makeAwsClients, type AwsClients } from '../backends/aws/clients';
import { awsConfigFromEnv, GIT_SHA_ENV, TOOL_VERSION_ENV } from '../backends/aws/config';
import type { AwsBackendConfig } from '../backends/aws/config';
import { preflightNotes, runAwsPreflight } from '../backends/aws/preflight';
import { bundledPrices } from '../plan/cost';
import type { TaskDeps } from '../workflow/tasks';

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

/** TaskDeps.compactRun on AWS: Athena UNLOAD into the lake's Parquet tables, summarised in one line. */
function athenaCompaction(config: AwsBackendConfig, clients: AwsClients): TaskDeps['compactRun'] {
  return async (run) => {
    if (config.athenaWorkGroup === undefined || config.glueDatabase === undefined) {
      throw new Error('the Task environment has no AURORA_BENCH_ATHENA_WORK_GROUP / AURORA_BENCH_GLUE_DATABASE: redeploy the stack (npx cdk deploy), which sets them');
    }
    const tables = await compactRunOnAthena(
      { athena: clients.athena, s3: clients.s3, bucket: config.bucket, lakePrefix: config.lakePrefix, workGroup: config.athenaWorkGroup, database: config.glueDatabase },
      run,
    );
    if (tables.length === 0) return 'nothing to compact (no JSON Lines rows left)';
    return `compacted to Parquet: ${tables.map((t) => `${t.table} (${t.jsonObjects} JSON Lines object(s)${t.unloaded ? `, ${t.parquetObjects} Parquet file(s)` : ', registered before'})`).join(', ')}`;
  };
}

export function buildAwsTaskDeps(env: Readonly<Record<string, string | undefined>>, options: AwsTaskDepsOptions): TaskDeps {
  const config = awsConfigFromEnv(env);
  const clients = options.clients ?? makeAwsClients({ region: config.region });
  if (options.instrumentClient) for (const client of Object.values(clients) as AwsClients[keyof AwsClients][]) options.instrumentClient(client);
  const backend = new AwsBackend({ config, clients });
  return {
    backend,
    now: () => new Date(),
    toolVersion: env[TOOL_VERSION_ENV] ?? 'unknown',
    gitSha: env[GIT_SHA_ENV] ?? null,
    serverVersion: null,
    // A console-started execution gets the same checks as `aurora-bench preflight` and `run --aws`.
    preflight: async (plan, spec) => preflightNotes(await runAwsPreflight({ plan, spec, clients, deployment: { config }, prices: bundledPrices() })),
    // An Aurora cluster with instances takes ~15-20 minutes; clients and SSM registration a few.
    readyTimeoutS: 90 * 60,
    judgeRun: options.judge(config, clients),
    ...(options.compactWithAthena ? { compactRun: athenaCompaction(config, clients) } : {}),
  };
}
