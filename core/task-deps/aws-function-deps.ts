/**
 * The TaskDeps of one Task's Lambda.
 * Each handler constructs only the SDK clients and backend parts its Task calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * An operation the function was not built with throws NotBuiltForThisFunctionError.
 */
import type { Backend } from '../backend';
import type { AwsClientOptions } from '../backends/aws/client-config';
import { awsConfigFromEnv, GIT_SHA_ENV, TOOL_VERSION_ENV, type AwsBackendConfig } from '../backends/aws/config';
import { NotBuiltForThisFunctionError } from '../backends/aws/parts/compose';
import type { TaskDeps } from '../workflow/tasks/types';

/** An Aurora cluster with instances takes 15-20 minutes. Clients and SSM registration take a few. */
const AWS_READY_TIMEOUT_S = 90 * 60;

/** What a handler builds its deps from, the Lambda's environment as the stack sets it. */
export interface AwsFunctionContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly config: AwsBackendConfig;
  /** The options of every SDK client the function constructs. */
  readonly clientOptions: AwsClientOptions;
  /** Each SDK client the function constructs goes through this once, for X-Ray capture. */
  readonly instrument: <C>(client: C) => C;
}

export function awsFunctionContext(
  env: Readonly<Record<string, string | undefined>>,
  instrument: (client: unknown) => void,
): AwsFunctionContext {
  const config = awsConfigFromEnv(env);
  return {
    env,
    config,
    clientOptions: { region: config.region },
    instrument: (client) => {
      instrument(client);
      return client;
    },
  };
}

/** The Task-specific deps, the backend parts and whatever else the Task uses. */
export interface AwsFunctionParts {
  readonly backend: Backend;
  readonly preflight?: NonNullable<TaskDeps['preflight']>;
  readonly judgeRun?: TaskDeps['judgeRun'];
  readonly compactRun?: NonNullable<TaskDeps['compactRun']>;
  readonly judgeRounds?: NonNullable<TaskDeps['judgeRounds']>;
  readonly historyLevels?: NonNullable<TaskDeps['historyLevels']>;
}

export function awsFunctionTaskDeps(
  env: Readonly<Record<string, string | undefined>>,
  parts: AwsFunctionParts,
  builtFor: string,
): TaskDeps {
  return {
    backend: parts.backend,
    now: () => new Date(),
    toolVersion: env[TOOL_VERSION_ENV] ?? 'unknown',
    gitSha: env[GIT_SHA_ENV] ?? null,
    serverVersion: null,
    readyTimeoutS: AWS_READY_TIMEOUT_S,
    judgeRun:
      parts.judgeRun ??
      (() =>
        Promise.reject(
          new NotBuiltForThisFunctionError(
            `${builtFor} was built without the run's judging (ComputeVerdicts judges runs)`,
          ),
        )),
    ...(parts.preflight ? { preflight: parts.preflight } : {}),
    ...(parts.compactRun ? { compactRun: parts.compactRun } : {}),
    ...(parts.judgeRounds ? { judgeRounds: parts.judgeRounds } : {}),
    ...(parts.historyLevels ? { historyLevels: parts.historyLevels } : {}),
  };
}
