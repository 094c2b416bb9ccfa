/**
 * The client runner's command line, built by the Tasks and parsed back by the runner.
 * docs/architecture.md describes it.
 */
import type { RunnerPhase } from './types';

/** The runner's exit status. sysbench's own exit code is in result.json, never the runner's. */
export enum RunnerExitCode {
  /** result.json was written. sysbench ran, or result.json says why it did not. */
  Ok = 0,
  /** Bad command line. Nothing was written. */
  Usage = 2,
  /** Setup failed. The reason is in output.log. */
  Setup = 3,
  /** An S3 upload of the output failed. */
  Upload = 4,
}

export type RunnerDriver = 'mysql' | 'pgsql';

/** One invocation of the runner, parsed. */
export interface RunnerArgv {
  readonly phase: RunnerPhase;
  /** A stock test or a custom script's file name. */
  readonly workload: string;
  /** A local directory or s3:// prefix that the phase's files go to. */
  readonly out: string;
  readonly host: string;
  readonly port: number;
  /** A second port on the same host. sysbench connects round-robin to both. */
  readonly extraPort?: number;
  readonly user: string;
  readonly driver: RunnerDriver;
  /** Where the password comes from, an environment variable locally or a secret on AWS. */
  readonly password: { readonly env: string } | { readonly secret: string };
  /** Where a custom workload's script is, a directory locally or an S3 prefix on AWS. */
  readonly scripts?: { readonly dir: string } | { readonly uri: string };
  /** Run phase only. This job first prepares the step's data and writes a prepare's files here. */
  readonly prepareOut?: string;
  /** The prepare's endpoint. Defaults to host and port. */
  readonly prepareHost?: string;
  readonly preparePort?: number;
  /** The prepare's sysbench options, each as --name=value. */
  readonly prepareOptions: readonly string[];
  /** Run phase only. Other clients' prepare locations this job waits for. */
  readonly awaitPrepare: readonly string[];
  /** The run starts this many seconds after the last prepare ended. */
  readonly startAfterPrepareS?: number;
  /** The step's sysbench options, after `--`. */
  readonly sysbenchOptions: readonly string[];
}

export const RUNNER_USAGE =
  'usage: runner --phase prepare|run --workload NAME --out LOCATION --host H --port P --user U (--password-env ' +
  'VAR | --password-secret SECRET_ARN) [--driver mysql|pgsql] [--script-dir DIR | --script-uri ' +
  's3://bucket/prefix/] [--extra-port P2] [--prepare-out LOCATION2 [--prepare-host H2 --prepare-port P2] ' +
  '[--prepare-option OPT]...] [--await-prepare LOCATION3]... [--start-after-prepare S] -- <sysbench options...>';

/** A bad command line. The runner prints the message and its usage, and exits with the usage code. */
export class RunnerUsageError extends Error {
  override readonly name = 'RunnerUsageError';
}

/** The argv of one invocation, without `node runner.js`. */
export function formatRunnerArgv(a: RunnerArgv): string[] {
  const args = [
    '--phase',
    a.phase,
    '--workload',
    a.workload,
    '--out',
    a.out,
    '--host',
    a.host,
    '--port',
    String(a.port),
    '--user',
    a.user,
  ];
  if (a.driver === 'pgsql') args.push('--driver', 'pgsql');
  if ('env' in a.password) args.push('--password-env', a.password.env);
  else args.push('--password-secret', a.password.secret);
  if (a.scripts !== undefined) {
    if ('dir' in a.scripts) args.push('--script-dir', a.scripts.dir);
    else args.push('--script-uri', a.scripts.uri);
  }
  if (a.extraPort !== undefined) args.push('--extra-port', String(a.extraPort));
  if (a.prepareOut !== undefined) args.push('--prepare-out', a.prepareOut);
  if (a.prepareHost !== undefined) args.push('--prepare-host', a.prepareHost);
  if (a.preparePort !== undefined) args.push('--prepare-port', String(a.preparePort));
  for (const opt of a.prepareOptions) args.push('--prepare-option', opt);
  for (const location of a.awaitPrepare) args.push('--await-prepare', location);
  if (a.startAfterPrepareS !== undefined) args.push('--start-after-prepare', String(a.startAfterPrepareS));
  args.push('--', ...a.sysbenchOptions);
  return args;
}

/** sysbench options the runner sets itself from its own flags. */
const CONNECTION_OPTIONS = new Set([
  '--mysql-host',
  '--mysql-port',
  '--mysql-user',
  '--mysql-password',
  '--mysql-socket',
  '--config-file',
  '--db-driver',
  '--pgsql-host',
  '--pgsql-port',
  '--pgsql-user',
  '--pgsql-password',
]);

const isTcpPort = (s: string): boolean => /^[0-9]+$/.test(s) && Number(s) >= 1 && Number(s) <= 65535;

/**
 * Parses and checks a command line. The runner makes the file-system checks itself.
 * `env` is where --password-env must name a set variable.
 */
export function parseRunnerArgv(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): RunnerArgv {
  const usage = (msg: string): never => {
    throw new RunnerUsageError(msg);
  };
  const flags = new Map<string, string>();
  const prepareOptions: string[] = [];
  const awaitPrepare: string[] = [];
  let i = 0;
  for (; i < argv.length;) {
    const arg = argv[i]!;
    let flag: string;
    let value: string;
    if (arg === '--') {
      i++;
      break;
    } else if (/^--[^=]*=/.test(arg)) {
      flag = arg.slice(0, arg.indexOf('='));
      value = arg.slice(arg.indexOf('=') + 1);
      i++;
    } else if (arg.startsWith('--')) {
      flag = arg;
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      value = argv[i + 1]!;
      i += 2;
    } else {
      return usage(`unexpected argument '${arg}' (sysbench options go after --)`);
    }
    switch (flag) {
      case '--phase':
      case '--workload':
      case '--out':
      case '--host':
      case '--port':
      case '--extra-port':
      case '--user':
      case '--driver':
      case '--password-env':
      case '--password-secret':
      case '--script-dir':
      case '--script-uri':
      case '--prepare-out':
      case '--prepare-host':
      case '--prepare-port':
      case '--start-after-prepare':
        flags.set(flag, value);
        break;
      case '--prepare-option':
        prepareOptions.push(value);
        break;
      case '--await-prepare':
        if (value === '') usage('--await-prepare needs a location');
        awaitPrepare.push(value);
        break;
      default:
        usage(`unknown flag ${flag}`);
    }
  }
  const sysbenchOptions = argv.slice(i);
  const get = (flag: string): string => flags.get(flag) ?? '';

  const phase = get('--phase');
  if (phase === '') usage('--phase is required (prepare or run)');
  if (phase !== 'prepare' && phase !== 'run') usage(`--phase must be prepare or run, got '${phase}'`);
  const driver = flags.get('--driver') ?? 'mysql';
  if (driver !== 'mysql' && driver !== 'pgsql') usage(`--driver must be mysql or pgsql, got '${driver}'`);
  const workload = get('--workload');
  if (workload === '') usage('--workload is required');
  const custom = workload.endsWith('.lua');
  if (custom && !/^[A-Za-z0-9_][A-Za-z0-9_.-]*\.lua$/.test(workload))
    usage(`--workload '${workload}' must be a plain .lua file name (no directories)`);
  if (!custom && !/^[a-z][a-z0-9_]*$/.test(workload))
    usage(`--workload '${workload}' is neither a stock test name (oltp_read_only) nor a .lua file name`);
  const out = get('--out');
  if (out === '') usage('--out is required (a directory or s3://bucket/prefix/)');
  const host = get('--host');
  if (host === '') usage('--host is required');
  const port = get('--port');
  if (!isTcpPort(port)) usage(`--port must be a TCP port number, got '${port}'`);
  const extraPort = flags.get('--extra-port');
  if (extraPort !== undefined && extraPort !== '' && !isTcpPort(extraPort))
    usage(`--extra-port must be a TCP port number, got '${extraPort}'`);
  const user = get('--user');
  if (user === '') usage('--user is required');
  const passwordEnv = flags.get('--password-env');
  const passwordSecret = flags.get('--password-secret');
  if ((passwordEnv === undefined) === (passwordSecret === undefined))
    usage('exactly one of --password-env or --password-secret is required');
  if (passwordEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv))
      usage(`--password-env must name an environment variable, got '${passwordEnv}'`);
    if (env[passwordEnv] === undefined) usage(`--password-env: environment variable ${passwordEnv} is not set`);
  }
  if (passwordSecret === '') usage('--password-secret needs a secret ARN or name');
  const scriptDir = flags.get('--script-dir');
  const scriptUri = flags.get('--script-uri');
  if (scriptDir !== undefined && scriptUri !== undefined) usage('give only one of --script-dir or --script-uri');
  if (custom && scriptDir === undefined && scriptUri === undefined)
    usage(`--workload ${workload} is a custom script: --script-dir or --script-uri is required`);
  if (scriptUri !== undefined && !/^s3:\/\/./.test(scriptUri))
    usage(`--script-uri must start with s3://, got '${scriptUri}'`);
  const prepareOut = flags.get('--prepare-out') || undefined;
  if ((prepareOut !== undefined || awaitPrepare.length > 0) && phase !== 'run')
    usage('--prepare-out and --await-prepare go with --phase run');
  for (const location of awaitPrepare)
    if (location === prepareOut) usage(`--await-prepare ${location} is this job's own --prepare-out`);
  const startAfter = flags.get('--start-after-prepare') || undefined;
  if (startAfter !== undefined) {
    if (!/^[0-9]+$/.test(startAfter)) usage(`--start-after-prepare must be whole seconds, got '${startAfter}'`);
    if (prepareOut === undefined && awaitPrepare.length === 0)
      usage('--start-after-prepare needs --prepare-out or --await-prepare');
  }
  const prepareHost = flags.get('--prepare-host') || undefined;
  const preparePort = flags.get('--prepare-port') || undefined;
  if (
    prepareOut === undefined &&
    (prepareHost !== undefined || preparePort !== undefined || prepareOptions.length > 0)
  ) {
    usage('--prepare-host, --prepare-port and --prepare-option need --prepare-out');
  }
  if (preparePort !== undefined && !isTcpPort(preparePort))
    usage(`--prepare-port must be a TCP port number, got '${preparePort}'`);
  for (const opt of [...sysbenchOptions, ...prepareOptions]) {
    if (!/^--./.test(opt)) usage(`sysbench option '${opt}' after -- must look like --name=value`);
    const given = opt.split('=')[0]!;
    const name = given.replace(/_/g, '-');
    if (CONNECTION_OPTIONS.has(name))
      usage(`sysbench option ${given} is set by the runner from its own flags; do not pass it after --`);
    // sysbench 1.0.20's drv_mysql.c would then log the connect arguments, password included.
    if (name === '--mysql-debug')
      usage(`sysbench option ${given} would print the database password into the output; it is not allowed`);
  }
  for (const location of [out, ...(prepareOut !== undefined ? [prepareOut] : []), ...awaitPrepare]) {
    if (location.startsWith('s3://') && !/^s3:\/\/./.test(location)) usage(`${location}: s3:// needs a bucket`);
  }
  return {
    phase: phase as RunnerPhase,
    workload,
    out,
    host,
    port: Number(port),
    ...(extraPort ? { extraPort: Number(extraPort) } : {}),
    user,
    driver: driver as RunnerDriver,
    password: passwordEnv !== undefined ? { env: passwordEnv } : { secret: passwordSecret! },
    ...(scriptDir !== undefined
      ? { scripts: { dir: scriptDir } }
      : scriptUri !== undefined
        ? { scripts: { uri: scriptUri } }
        : {}),
    ...(prepareOut !== undefined ? { prepareOut } : {}),
    ...(prepareHost !== undefined ? { prepareHost } : {}),
    ...(preparePort !== undefined ? { preparePort: Number(preparePort) } : {}),
    prepareOptions,
    awaitPrepare,
    ...(startAfter !== undefined ? { startAfterPrepareS: Number(startAfter) } : {}),
    sysbenchOptions,
  };
}
