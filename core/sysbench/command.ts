/**
 * The argv of the client runner (runnerArgs): its contract is core/sysbench/runner-argv.ts (RunnerArgv,
 * docs/architecture.md), called the same way by the local backend and, through SSM Run Command, by the AWS backend. The
 * sysbench options it passes on are the step's (core/plan/sysbench-args.ts).
 */
import { SysbenchOptionError } from '../plan/sysbench-args';
import { formatRunnerArgv, type RunnerArgv } from './runner-argv';
import type { RunnerPhase } from './types';

/** One invocation of the client runner: what its argv is made of (the Backend port's RunnerJob is one). */
export interface RunnerInvocation {
  readonly jobId: string;
  readonly phase: RunnerPhase;
  readonly workload: string;
  readonly endpoint: { readonly host: string; readonly port: number };
  readonly sysbenchArgs: readonly string[];
  /** sysbench's database driver (the engine's, core/aurora/engines.ts); absent: mysql. */
  readonly driver?: 'mysql' | 'pgsql';
  /** The job prepares the step's data first (Backend RunnerJob.prepareFirst). */
  readonly prepareFirst?: {
    readonly outputPrefix: string;
    readonly endpoint: { readonly host: string; readonly port: number };
    readonly sysbenchArgs: readonly string[];
  };
  /** The job waits for other clients' prepares under these prefixes (RunnerJob.awaitPrepareOf). */
  readonly awaitPrepareOf?: readonly string[];
  /** With either: when the run starts, in seconds after the last prepare ended (RunnerJob.startAfterPrepareS). */
  readonly startAfterPrepareS?: number;
}

export interface RunnerArgsOptions {
  /** Database user (CellResources.credentials.user). */
  readonly user: string;
  /** Name of the environment variable holding the password (local backend). */
  readonly passwordEnv?: string;
  /** Secrets Manager ARN of the RDS-managed secret (AWS backend). */
  readonly passwordSecret?: string;
  /** Directory holding custom Lua workloads (local backend). */
  readonly scriptDir?: string;
  /** s3://bucket/prefix/ custom Lua workloads are downloaded from (AWS backend). */
  readonly scriptUri?: string;
  /** Local directory or s3://bucket/prefix/ the runner writes its files under. */
  readonly outLocation: string;
  /**
   * Where a lake prefix is for the runner (a local directory, s3://bucket/prefix/):
   * the prepare's output of a job that prepares first or waits for one.
   */
  readonly locationOf?: (outputPrefix: string) => string;
}

/**
 * The runner fields of a job that prepares its step's data first (prepareOut, prepareHost,
 * preparePort, prepareOptions), waits for other clients' prepares (awaitPrepare), or both (a duet
 * member's first job); empty lists for any other job.
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

/** The argv of the client runner (without `node client/runner.js` itself) for one job. */
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
