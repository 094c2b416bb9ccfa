/**
 * The runner's command line (core/sysbench/runner-argv.ts): what the Tasks format is what the
 * runner parses back, and a bad command line is refused with the message naming the flag.
 */
import { runnerArgs } from '../../core/sysbench/command';
import {
  formatRunnerArgv,
  parseRunnerArgv,
  RunnerExitCode,
  RunnerUsageError,
  type RunnerArgv,
} from '../../core/sysbench/runner-argv';

const ENV = { AB_PW: 'x' };
const base = [
  '--phase',
  'run',
  '--workload',
  'oltp_read_only',
  '--out',
  '/tmp/o',
  '--host',
  'h',
  '--port',
  '3306',
  '--user',
  'u',
  '--password-env',
  'AB_PW',
];

describe('the runner argv', () => {
  it('parses back what formatRunnerArgv formats, every field set', () => {
    const argv: RunnerArgv = {
      phase: 'run',
      workload: 'fullscan_1kb.lua',
      out: 's3://b/raw/run/',
      host: 'writer.example',
      port: 3306,
      extraPort: 3307,
      user: 'sbtest',
      driver: 'pgsql',
      password: { secret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:rds!x' },
      scripts: { uri: 's3://b/scripts/run-1/' },
      prepareOut: 's3://b/raw/prepare/',
      prepareHost: 'writer2.example',
      preparePort: 3308,
      prepareOptions: ['--tables=2', '--table-size=100'],
      awaitPrepare: ['s3://b/raw/other/', 's3://b/raw/third/'],
      startAfterPrepareS: 5,
      sysbenchOptions: ['--threads=4', '--time=10'],
    };
    expect(parseRunnerArgv(formatRunnerArgv(argv), {})).toEqual(argv);
  });

  it('parses back what the Tasks build (runnerArgs), --name=value flags too', () => {
    const args = runnerArgs(
      {
        jobId: 'j',
        phase: 'run',
        workload: 'oltp_read_only',
        endpoint: { host: 'h', port: 3306 },
        sysbenchArgs: ['--threads=2'],
        awaitPrepareOf: ['raw/p/'],
        startAfterPrepareS: 2,
      },
      { user: 'u', passwordEnv: 'AB_PW', outLocation: '/lake/raw/r/', locationOf: (p) => `/lake/${p}` },
    );
    const parsed = parseRunnerArgv(args, ENV);
    expect(parsed).toMatchObject({
      phase: 'run',
      out: '/lake/raw/r/',
      awaitPrepare: ['/lake/raw/p/'],
      startAfterPrepareS: 2,
      sysbenchOptions: ['--threads=2'],
      driver: 'mysql',
    });
    expect(parseRunnerArgv(['--phase=prepare', ...base.slice(2), '--', '--tables=1'], ENV).phase).toBe('prepare');
  });

  it.each([
    [[...base.slice(2)], '--phase is required'],
    [[...base, '--bogus', 'x'], 'unknown flag --bogus'],
    [[...base, 'stray'], "unexpected argument 'stray' (sysbench options go after --)"],
    [[...base, '--prepare-out'], '--prepare-out needs a value'],
    [[...base, '--driver', 'oracle'], "--driver must be mysql or pgsql, got 'oracle'"],
    [
      [...base.slice(0, 2), '--workload', '../x.lua', ...base.slice(4)],
      "--workload '../x.lua' must be a plain .lua file name",
    ],
    [[...base.slice(0, -2), '--password-env', 'AB_UNSET'], '--password-env: environment variable AB_UNSET is not set'],
    [[...base, '--password-secret', 'arn'], 'exactly one of --password-env or --password-secret is required'],
    [[...base, '--script-uri', 'http://x/'], "--script-uri must start with s3://, got 'http://x/'"],
    [[...base, '--extra-port', '0'], "--extra-port must be a TCP port number, got '0'"],
    [
      [...base, '--prepare-out', '/p', '--prepare-port', '70000'],
      "--prepare-port must be a TCP port number, got '70000'",
    ],
    [[...base, '--await-prepare', ''], '--await-prepare needs a location'],
    [
      [...base, '--await-prepare', '/a', '--start-after-prepare', '1.5'],
      "--start-after-prepare must be whole seconds, got '1.5'",
    ],
    [[...base, '--', 'threads=2'], "sysbench option 'threads=2' after -- must look like --name=value"],
    [[...base, '--', '--pgsql_password=x'], 'sysbench option --pgsql_password is set by the runner'],
    [
      [...base, '--prepare-out', '/p', '--prepare-option', '--mysql-host=x'],
      'sysbench option --mysql-host is set by the runner',
    ],
    [[...base.slice(0, 4), '--out', 's3://', ...base.slice(6)], 's3://: s3:// needs a bucket'],
  ])('refuses %j: %s', (args, message) => {
    expect(() => parseRunnerArgv(args, ENV)).toThrow(RunnerUsageError);
    expect(() => parseRunnerArgv(args, ENV)).toThrow(message);
  });

  it('has the exit codes the SSM commands and the workflow read', () => {
    expect([RunnerExitCode.Ok, RunnerExitCode.Usage, RunnerExitCode.Setup, RunnerExitCode.Upload]).toEqual([
      0, 2, 3, 4,
    ]);
  });
});
