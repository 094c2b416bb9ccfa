/**
 * The sysbench command builder and the runner argv. The option tables are checked against the
 * real sysbench 1.0.20 (with --mysql-dry-run, no server needed): what the builder emits sysbench
 * accepts, and what it refuses sysbench refuses too.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { RunnerJob } from '../../core/backend';
import type { DataPlan, StepPlan } from '../../core/plan/types';
import { buildSysbenchArgs, SysbenchOptionError } from '../../core/plan/sysbench-args';
import { runnerArgs } from '../../core/sysbench/command';

const ROOT = join(__dirname, '..', '..');
const HOOK = join(ROOT, 'client', 'lua', 'aurora_bench_hook.lua');
const FULLSCAN = join(ROOT, 'client', 'workloads', 'fullscan_1kb.lua');

const data: DataPlan = { tables: 4, tableSize: 1000, reuse: 'cell', prepareThreads: 2 };
const step = (over: Partial<StepPlan> = {}): StepPlan => ({
  stepId: 'rw-t8-max',
  index: 0,
  workload: 'rw',
  test: 'oltp_read_write',
  options: {},
  threads: 8,
  rate: 0,
  durationS: 60,
  warmupS: 0,
  reportIntervalS: 1,
  percentile: 95,
  target: 'writer',
  clients: 1,
  prepare: true,
  waitS: 60,
  ...over,
});
const fullscanStep = (over: Partial<StepPlan> = {}): StepPlan => {
  const { test: _unused, ...base } = step({ workload: 'scan', stepId: 'scan-t1-max', threads: 1 });
  return { ...base, script: { name: 'fullscan_1kb.lua', sha256: 'x' }, ...over };
};

/** Runs the real sysbench on the options, with the MySQL driver in dry-run mode. */
function sysbenchAccepts(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; output: string } {
  const r = spawnSync('sysbench', [script, 'cleanup', '--mysql-dry-run=on', ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 20000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('buildSysbenchArgs', () => {
  it('run: the benchmark database, tables, size, threads, time, report interval and percentile', () => {
    expect(buildSysbenchArgs(step(), data, 'run')).toEqual([
      '--mysql-db=sbtest',
      '--tables=4',
      '--table-size=1000',
      '--threads=8',
      '--time=60',
      '--report-interval=1',
      '--percentile=95',
      '--histogram=on',
    ]);
  });

  it('run: warmup through --report-checkpoints (1.0.20 has no --warmup-time), rate, options with on/off', () => {
    const args = buildSysbenchArgs(
      step({
        warmupS: 30,
        durationS: 300,
        rate: 500,
        percentile: 99,
        reportIntervalS: 20,
        options: {
          range_selects: false,
          skip_trx: true,
          point_selects: 4,
          db_ps_mode: 'disable',
          histogram: true,
          rand_type: 'uniform',
        },
      }),
      data,
      'run',
    );

    expect(args).toEqual([
      '--mysql-db=sbtest',
      '--tables=4',
      '--table-size=1000',
      '--threads=8',
      '--time=330',
      '--report-checkpoints=30',
      '--report-interval=20',
      '--percentile=99',
      '--rate=500',
      '--range_selects=off',
      '--skip_trx=on',
      '--point_selects=4',
      '--db-ps-mode=disable',
      '--histogram=on',
      '--rand-type=uniform',
    ]);
  });

  it('prepare: the benchmark database, prepareThreads, no time, no histogram, table-shaping options kept', () => {
    const args = buildSysbenchArgs(
      step({ options: { auto_inc: false, mysql_storage_engine: 'innodb', histogram: true } }),
      data,
      'prepare',
    );

    expect(args).toEqual([
      '--mysql-db=sbtest',
      '--tables=4',
      '--table-size=1000',
      '--threads=2',
      '--auto_inc=off',
      '--mysql_storage_engine=innodb',
    ]);
  });

  it('run: the histogram (the latency distribution) is on unless the step sets it', () => {
    expect(buildSysbenchArgs(step(), data, 'run')).toContain('--histogram=on');
    expect(
      buildSysbenchArgs(step({ options: { histogram: false } }), data, 'run').filter((a) =>
        a.startsWith('--histogram'),
      ),
    ).toEqual(['--histogram=off']);
    expect(buildSysbenchArgs(step(), data, 'prepare').some((a) => a.startsWith('--histogram'))).toBe(false);
  });

  it("accepts either spelling and emits sysbench's own", () => {
    expect(
      buildSysbenchArgs(
        step({ options: { 'skip-trx': true, 'db-ps-mode': 'auto', 'mysql-ignore-errors': '1213,1020' } }),
        data,
        'run',
      ).slice(8),
    ).toEqual(['--skip_trx=on', '--db-ps-mode=auto', '--mysql-ignore-errors=1213,1020']);
  });

  it.each([
    [{ foo: 1 }, 'sysbench option "foo" (workload rw) is not accepted by sysbench 1.0.20\'s oltp_read_write'],
    [
      { threads: 4 },
      'sysbench option "threads" (workload rw) cannot be set in options: set by the workload\'s "threads"',
    ],
    [{ 'warmup-time': 10 }, 'sysbench 1.0.20 has no --warmup-time: set "warmupS"'],
    [{ mysql_password: 'x' }, "cannot be set in options: set by the runner from the cell's credentials"],
    [
      { 'mysql-debug': true },
      'sysbench option "mysql-debug" (workload rw) cannot be set in options: it makes sysbench print the ' +
        'database password into its output',
    ],
    [
      { mysql_db: 'other' },
      'sysbench option "mysql_db" (workload rw) cannot be set in options: the benchmark database is always sbtest',
    ],
    [
      { skip_trx: true, 'skip-trx': false },
      'sysbench option "skip-trx" (workload rw) is given twice (also as "skip_trx")',
    ],
    [{ range_selects: 3 }, 'sysbench option "range_selects" is on/off (use true or false), got 3'],
    [{ point_selects: 'many' }, 'sysbench option "point_selects" needs a number, got "many"'],
    [{ point_selects: 1.5 }, 'sysbench option "point_selects" needs an integer, got 1.5'],
    [{ 'bad name': 1 }, 'sysbench option name "bad name" (workload rw) is not a valid option name'],
  ])('refuses %j', (options, message) => {
    // Wrong on purpose: what a spec's catch-all options may still carry.
    const bad = step({ options: options as unknown as StepPlan['options'] });
    expect(() => buildSysbenchArgs(bad, data, 'run')).toThrow(SysbenchOptionError);
    expect(() => buildSysbenchArgs(bad, data, 'run')).toThrow(message);
  });

  it('knows the options of fullscan_1kb.lua, and lets unknown custom scripts declare their own', () => {
    expect(() => buildSysbenchArgs(fullscanStep({ options: { skip_trx: true } }), data, 'run')).toThrow(
      'sysbench option "skip_trx" (workload scan) is not accepted by sysbench 1.0.20\'s fullscan_1kb.lua',
    );
    const custom = fullscanStep({ script: { name: 'mine.lua', sha256: 'y' }, options: { my_knob: 3 } });
    expect(buildSysbenchArgs(custom, data, 'run')).toContain('--my_knob=3');
  });

  it('refuses a step without test or script and nonsense numbers, naming the field', () => {
    const { test: _unused, ...noWorkload } = step();
    expect(() => buildSysbenchArgs(noWorkload as StepPlan, data, 'run')).toThrow(
      'step rw-t8-max has neither a test nor a script',
    );
    expect(() => buildSysbenchArgs(step({ threads: 0 }), data, 'run')).toThrow(
      'step rw-t8-max threads must be an integer >= 1, got 0',
    );
    expect(() => buildSysbenchArgs(step(), { ...data, prepareThreads: 0 }, 'prepare')).toThrow(
      'data.prepareThreads must be an integer >= 1, got 0',
    );
  });

  it('emits only options the real sysbench 1.0.20 accepts (stock test)', () => {
    const args = buildSysbenchArgs(
      step({
        warmupS: 1,
        durationS: 1,
        rate: 10,
        options: {
          range_selects: false,
          skip_trx: true,
          point_selects: 4,
          db_ps_mode: 'disable',
          histogram: true,
          rand_type: 'uniform',
          mysql_storage_engine: 'innodb',
        },
      }),
      data,
      'run',
    );

    const r = sysbenchAccepts('oltp_read_write', args);

    expect(r.output).not.toContain('invalid option');
    expect(r.output).toContain("Dropping table 'sbtest4'...");
    expect(r.status).toBe(0);
  });

  it('emits only options the real sysbench accepts (fullscan_1kb.lua through the hook)', () => {
    const r = sysbenchAccepts(HOOK, buildSysbenchArgs(fullscanStep(), { ...data, tables: 1 }, 'run'), {
      AURORA_BENCH_SCRIPT: FULLSCAN,
    });

    expect(r.output).not.toContain('invalid option');
    expect(r.output).toContain("Dropping table 'fullscan1'...");
    expect(r.status).toBe(0);
  });

  it('sysbench itself refuses the options the builder refuses', () => {
    expect(sysbenchAccepts('oltp_read_write', ['--foo=1']).output).toContain('invalid option: --foo=1');
    expect(sysbenchAccepts('oltp_read_write', ['--warmup-time=5']).output).toContain('invalid option: --warmup-time=5');
    expect(sysbenchAccepts(HOOK, ['--skip_trx=on'], { AURORA_BENCH_SCRIPT: FULLSCAN }).output).toContain(
      'invalid option: --skip_trx=on',
    );
  });
});

describe('runnerArgs', () => {
  const job = (over: Partial<RunnerJob> = {}): RunnerJob => ({
    jobId: 'c1-r0/rw-t8-max/run/client-1',
    phase: 'run',
    clientId: 'client-1',
    endpoint: { instanceId: 'c1-w', role: 'writer', host: '127.0.0.1', port: 40123 },
    workload: 'oltp_read_write',
    sysbenchArgs: ['--tables=4', '--threads=8'],
    outputPrefix: 'raw/x/',
    ...over,
  });

  it('local: password from an environment variable, output directory', () => {
    expect(runnerArgs(job(), { user: 'sbtest', passwordEnv: 'AB_PASSWORD', outLocation: '/tmp/lake/raw/x/' })).toEqual([
      '--phase',
      'run',
      '--workload',
      'oltp_read_write',
      '--out',
      '/tmp/lake/raw/x/',
      '--host',
      '127.0.0.1',
      '--port',
      '40123',
      '--user',
      'sbtest',
      '--password-env',
      'AB_PASSWORD',
      '--',
      '--tables=4',
      '--threads=8',
    ]);
  });

  it('a PostgreSQL engine: --driver pgsql before the password flag; mysql (absent) adds nothing', () => {
    const pg = runnerArgs(job({ driver: 'pgsql' }), {
      user: 'sbtest',
      passwordEnv: 'AB_PASSWORD',
      outLocation: '/tmp/o/',
    });
    expect(pg.slice(pg.indexOf('--user'), pg.indexOf('--'))).toEqual([
      '--user',
      'sbtest',
      '--driver',
      'pgsql',
      '--password-env',
      'AB_PASSWORD',
    ]);
    expect(
      runnerArgs(job({ driver: 'mysql' }), { user: 'sbtest', passwordEnv: 'AB_PASSWORD', outLocation: '/tmp/o/' }),
    ).not.toContain('--driver');
  });

  it('AWS: secret ARN, custom script from S3 (prefix gets its slash), S3 output', () => {
    const args = runnerArgs(job({ workload: 'fullscan_1kb.lua', phase: 'prepare' }), {
      user: 'admin',
      passwordSecret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-abc',
      scriptUri: 's3://lake/scripts/run-1',
      outLocation: 's3://lake/raw/x/',
    });

    expect(args).toEqual([
      '--phase',
      'prepare',
      '--workload',
      'fullscan_1kb.lua',
      '--out',
      's3://lake/raw/x/',
      '--host',
      '127.0.0.1',
      '--port',
      '40123',
      '--user',
      'admin',
      '--password-secret',
      'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-abc',
      '--script-uri',
      's3://lake/scripts/run-1/',
      '--',
      '--tables=4',
      '--threads=8',
    ]);
  });

  it.each([
    [{ user: 'u', outLocation: '/o' }, 'exactly one of passwordEnv or passwordSecret is required'],
    [
      { user: 'u', outLocation: '/o', passwordEnv: 'A', passwordSecret: 'B' },
      'exactly one of passwordEnv or passwordSecret is required',
    ],
    [
      { user: 'u', outLocation: '/o', passwordEnv: 'NOT-A-VAR' },
      'passwordEnv "NOT-A-VAR" is not an environment variable name',
    ],
    [
      { user: 'u', outLocation: '/o', passwordEnv: 'A', scriptDir: '/s', scriptUri: 's3://b/' },
      'give only one of scriptDir or scriptUri',
    ],
    [
      { user: 'u', outLocation: '/o', passwordEnv: 'A', scriptUri: 'https://b/' },
      'scriptUri "https://b/" must start with s3://bucket',
    ],
  ])('refuses %j', (opts, message) => {
    expect(() => runnerArgs(job(), opts)).toThrow(`runner for job c1-r0/rw-t8-max/run/client-1: ${message}`);
  });

  it(
    'data.reuse step: the job that prepares first gets the prepare location, endpoint and options; the others ' +
      'the prepare to wait for',
    () => {
      const opts = {
        user: 'admin',
        passwordSecret: 'arn:aws:secretsmanager:us-east-1:1:secret:s',
        outLocation: 's3://lake/raw/run/client-1/',
        locationOf: (p: string) => `s3://lake/${p}`,
      };
      const reader = { instanceId: 'c1-r1', role: 'reader' as const, host: 'reader.local', port: 3306 };
      const writer = { instanceId: 'c1-w', role: 'writer' as const, host: 'writer.local', port: 3306 };

      const first = runnerArgs(
        job({
          endpoint: reader,
          prepareFirst: {
            outputPrefix: 'raw/prepare/client-1/',
            endpoint: writer,
            sysbenchArgs: ['--tables=4', '--threads=2'],
          },
          startAfterPrepareS: 5,
        }),
        opts,
      );
      const second = runnerArgs(
        job({ clientId: 'client-2', awaitPrepareOf: ['raw/prepare/client-1/'], startAfterPrepareS: 5 }),
        opts,
      );

      expect(first.slice(first.indexOf('--prepare-out'), first.indexOf('--'))).toEqual([
        '--prepare-out',
        's3://lake/raw/prepare/client-1/',
        '--prepare-host',
        'writer.local',
        '--prepare-port',
        '3306',
        '--prepare-option',
        '--tables=4',
        '--prepare-option',
        '--threads=2',
        '--start-after-prepare',
        '5',
      ]);
      expect(first.slice(first.indexOf('--host'), first.indexOf('--host') + 2)).toEqual(['--host', 'reader.local']);
      expect(first.slice(first.indexOf('--') + 1)).toEqual(['--tables=4', '--threads=8']);
      expect(second.slice(second.indexOf('--await-prepare'), second.indexOf('--'))).toEqual([
        '--await-prepare',
        's3://lake/raw/prepare/client-1/',
        '--start-after-prepare',
        '5',
      ]);
      expect(runnerArgs(job(), opts)).not.toContain('--await-prepare');
      expect(() => runnerArgs(job({ awaitPrepareOf: ['raw/p/'] }), { ...opts, locationOf: undefined })).toThrow(
        'the prepare output location is unknown',
      );
      expect(() => runnerArgs(job({ phase: 'prepare', awaitPrepareOf: ['raw/p/'] }), opts)).toThrow(
        'only a run job prepares first or waits for a prepare',
      );
      expect(() => runnerArgs(job({ awaitPrepareOf: ['raw/p/'], startAfterPrepareS: 1.5 }), opts)).toThrow(
        'startAfterPrepareS 1.5 is not whole seconds',
      );
      expect(runnerArgs(job({ awaitPrepareOf: [] }), opts)).not.toContain('--start-after-prepare');
    },
  );

  it(
    "a duet member's first job prepares its own data and awaits the other members' prepares; its other jobs " +
      "await every member's",
    () => {
      const opts = {
        user: 'admin',
        passwordEnv: 'AB_PW',
        outLocation: '/lake/raw/a/run/client-1',
        locationOf: (p: string) => `/lake/${p}`,
      };
      const writer = { instanceId: 'a-w', role: 'writer' as const, host: '127.0.0.1', port: 4001 };
      const prepareOf = (member: string) => `raw/${member}/prepare/client-1/`;

      const preparer = runnerArgs(
        job({
          endpoint: writer,
          prepareFirst: { outputPrefix: prepareOf('a'), endpoint: writer, sysbenchArgs: ['--tables=1'] },
          awaitPrepareOf: [prepareOf('b')],
          startAfterPrepareS: 2,
        }),
        opts,
      );
      const awaiting = runnerArgs(
        job({ clientId: 'client-2', awaitPrepareOf: [prepareOf('a'), prepareOf('b')], startAfterPrepareS: 2 }),
        opts,
      );

      expect(preparer.slice(preparer.indexOf('--prepare-out'), preparer.indexOf('--'))).toEqual([
        '--prepare-out',
        '/lake/raw/a/prepare/client-1/',
        '--prepare-host',
        '127.0.0.1',
        '--prepare-port',
        '4001',
        '--prepare-option',
        '--tables=1',
        '--await-prepare',
        '/lake/raw/b/prepare/client-1/',
        '--start-after-prepare',
        '2',
      ]);
      expect(awaiting.slice(awaiting.indexOf('--await-prepare'), awaiting.indexOf('--'))).toEqual([
        '--await-prepare',
        '/lake/raw/a/prepare/client-1/',
        '--await-prepare',
        '/lake/raw/b/prepare/client-1/',
        '--start-after-prepare',
        '2',
      ]);
      expect(() =>
        runnerArgs(
          job({
            prepareFirst: { outputPrefix: prepareOf('a'), endpoint: writer, sysbenchArgs: [] },
            awaitPrepareOf: [prepareOf('a'), prepareOf('b')],
          }),
          opts,
        ),
      ).toThrow(`it would wait for its own prepare (${prepareOf('a')})`);
    },
  );

  it('refuses a custom workload without a script location, a path as workload, and a bad port', () => {
    const opts = { user: 'u', outLocation: '/o', passwordEnv: 'A' };
    expect(() => runnerArgs(job({ workload: 'fullscan_1kb.lua' }), opts)).toThrow(
      'custom workload fullscan_1kb.lua needs scriptDir or scriptUri',
    );
    expect(() => runnerArgs(job({ workload: '../x.lua' }), { ...opts, scriptDir: '/s' })).toThrow(
      'workload "../x.lua" must be a plain .lua file name',
    );
    expect(() => runnerArgs(job({ endpoint: { instanceId: 'w', role: 'writer', host: 'h', port: 0 } }), opts)).toThrow(
      'endpoint port 0 is not a TCP port',
    );
  });
});
