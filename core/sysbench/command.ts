/** The argv of the client runner. Both backends call it the same way. */
import { SysbenchOptionError } from '../plan/sysbench-args';
import { formatRunnerArgv, type RunnerArgv } from './runner-argv';
import type { RunnerPhase } from './types';

/** One invocation of the client runner. The Backend port's RunnerJob is one. */
export interface RunnerInvocation {
  readonly jobId: string;
  readonly phase: RunnerPhase;
  readonly workload: string;
  readonly endpoint: { readonly host: string; readonly port: number };
  readonly sysbenchArgs: readonly string[];
  /** sysbench's database driver for the engine. Absent means mysql. */
  readonly driver?: 'mysql' | 'pgsql';
  /** The job prepares the step's data first. */
  readonly prepareFirst?: {
    readonly outputPrefix: string;
    readonly endpoint: { readonly host: string; readonly port: number };
    readonly sysbenchArgs: readonly string[];
  };
  /** The job waits for other clients' prepares under these prefixes. */
  readonly awaitPrepareOf?: readonly string[];
  /** With either, the run starts this many seconds after the last prepare ended. */
  readonly startAfterPrepareS?: number;
}

export interface RunnerArgsOptions {
  /** Database user. */
  readonly user: string;
  /** Name of the environment variable holding the password, on the local backend. */
  readonly passwordEnv?: string;
  /** Secrets Manager ARN of the RDS-managed secret, on the AWS backend. */
  readonly passwordSecret?: string;
  /** Directory holding custom Lua workloads, on the local backend. */
  readonly scriptDir?: string;
  /** The s3:// prefix custom Lua workloads are downloaded from, on the AWS backend. */
  readonly scriptUri?: string;
  /** Local directory or s3:// prefix the runner writes its files under. */
  readonly outLocation: string;
  /** Where a lake prefix is for the runner, for a prepare's output. */
  readonly locationOf?: (outputPrefix: string) => string;
}

/**
 * The runner fields of a job that prepares first, waits for other prepares, or both.
 * Any other job gets empty lists.
 */
export function prepareRunnerArgv(
  job: Pick<RunnerInvocation, 'jobId' | 'phase' | 'prepareFirst' | 'awaitPrepareOf' | 'startAfterPrepareS'>,
  locationOf: ((outputPrefix: string) => string) | undefined,
): Pick<
  RunnerArgv,
  'prepareOut' | 'prepareHost' | 'preparePort' | 'prepareOptions' | 'awaitPrepare' | 'startAfterPrepareS'
> {
  const awaited = job.awaitPrepareOf ?? [];
  if (job.prepareFirst === undefined && awaited.length === 0) return { prepareOptions: [], awaitPrepare: [] };
  const fail = (msg: string) => new SysbenchOptionError(`runner for job ${job.jobId}: ${msg}`);
  if (job.phase !== 'run') throw fail('only a run job prepares first or waits for a prepare');
  if (locationOf === undefined) throw fail('the prepare output location is unknown (locationOf)');
  if (job.prepareFirst !== undefined && awaited.includes(job.prepareFirst.outputPrefix))
    throw fail(`it would wait for its own prepare (${job.prepareFirst.outputPrefix})`);
  const startAfter = job.startAfterPrepareS;
  if (startAfter !== undefined && !(Number.isInteger(startAfter) && startAfter >= 0))
    throw fail(`startAfterPrepareS ${startAfter} is not whole seconds`);
  const start = startAfter !== undefined ? { startAfterPrepareS: startAfter } : {};
  const awaitPrepare = awaited.map((prefix) => locationOf(prefix));
  const prepare = job.prepareFirst;
  if (prepare === undefined) return { prepareOptions: [], awaitPrepare, ...start };
  const port = prepare.endpoint.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw fail(`prepare endpoint port ${port} is not a TCP port`);
  return {
    prepareOut: locationOf(prepare.outputPrefix),
    prepareHost: prepare.endpoint.host,
    preparePort: port,
    prepareOptions: prepare.sysbenchArgs,
    awaitPrepare,
    ...start,
  };
}

/** The runner's argv for one job, without `node client/runner.js`. */
export function runnerArgs(job: RunnerInvocation, opts: RunnerArgsOptions): string[] {
  const fail = (msg: string) => new SysbenchOptionError(`runner for job ${job.jobId}: ${msg}`);
  if ((opts.passwordEnv === undefined) === (opts.passwordSecret === undefined))
    throw fail('exactly one of passwordEnv or passwordSecret is required');
  if (opts.passwordEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(opts.passwordEnv))
    throw fail(`passwordEnv "${opts.passwordEnv}" is not an environment variable name`);
  if (opts.scriptDir !== undefined && opts.scriptUri !== undefined)
    throw fail('give only one of scriptDir or scriptUri');
  if (opts.scriptUri !== undefined && !/^s3:\/\/[^/]+/.test(opts.scriptUri))
    throw fail(`scriptUri "${opts.scriptUri}" must start with s3://bucket`);
  const custom = job.workload.endsWith('.lua');
  if (custom && !/^[A-Za-z0-9_][A-Za-z0-9_.-]*\.lua$/.test(job.workload))
    throw fail(`workload "${job.workload}" must be a plain .lua file name`);
  if (!custom && !/^[a-z][a-z0-9_]*$/.test(job.workload))
    throw fail(`workload "${job.workload}" is neither a stock test nor a .lua file name`);
  if (custom && opts.scriptDir === undefined && opts.scriptUri === undefined)
    throw fail(`custom workload ${job.workload} needs scriptDir or scriptUri`);
  if (opts.outLocation === '') throw fail('outLocation is empty');
  if (opts.user === '') throw fail('user is empty');
  const port = job.endpoint.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw fail(`endpoint port ${port} is not a TCP port`);
  const scriptUri =
    opts.scriptUri === undefined ? undefined : opts.scriptUri.endsWith('/') ? opts.scriptUri : `${opts.scriptUri}/`;
  return formatRunnerArgv({
    phase: job.phase,
    workload: job.workload,
    out: opts.outLocation,
    host: job.endpoint.host,
    port,
    user: opts.user,
    driver: job.driver ?? 'mysql',
    password: opts.passwordEnv !== undefined ? { env: opts.passwordEnv } : { secret: opts.passwordSecret! },
    ...(opts.scriptDir !== undefined
      ? { scripts: { dir: opts.scriptDir } }
      : scriptUri !== undefined
        ? { scripts: { uri: scriptUri } }
        : {}),
    ...prepareRunnerArgv(job, opts.locationOf),
    sysbenchOptions: job.sysbenchArgs,
  });
}
