/**
 * The TaskDeps of a Task Lambda: the AWS backend configured from the environment the stack sets
 * (lib/handler-environment.ts), its SDK clients traced by X-Ray, and the account preflight
 * (core/backends/aws/preflight.ts) PlanRun runs.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { AwsBackend, awsConfigFromEnv, makeAwsClients, preflightNotes, runAwsPreflight, type AwsClients } from '../../core/backends/aws';
import { bundledPrices } from '../../core/plan/cost';
import type { TaskDeps } from '../../core/workflow/tasks';

/** Set by the stack from package.json at synth time. */
export const TOOL_VERSION_ENV = 'AURORA_BENCH_TOOL_VERSION';
export const GIT_SHA_ENV = 'AURORA_BENCH_GIT_SHA';

export interface AwsTaskDepsOverrides {
  /** SDK clients to use instead of the default ones of the Lambda's role (tests: a moto endpoint). */
  readonly clients?: AwsClients;
}

export async function buildAwsTaskDeps(env: Readonly<Record<string, string | undefined>>, tracer: Tracer, overrides: AwsTaskDepsOverrides = {}): Promise<TaskDeps> {
  const config = awsConfigFromEnv(env);
  const clients = overrides.clients ?? makeAwsClients({ region: config.region });
  for (const client of Object.values(clients) as AwsClients[keyof AwsClients][]) tracer.captureAWSv3Client(client);
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
  };
}
