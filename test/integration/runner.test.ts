/**
 * client/runner.js for real: sysbench 1.0.20 against a throwaway mariadbd, the files the runner
 * writes, and the parser reading them. Small data (2 x 500 rows), runs of 2-3 s.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunnerOutput } from '../../core/sysbench/parse-file';
import { parseClientCpu } from '../../core/sysbench/parser';
import type { RunnerResult } from '../../core/sysbench/types';
import { RUNNER_JS, RUNNER_NODE } from '../helpers/runner-bundle';
import { sqlString, startMariadb, type ThrowawayMariadb } from '../helpers/sysbench-mariadb';

const ROOT = join(__dirname, '..', '..');
const WORKLOADS = join(ROOT, 'client', 'workloads');
// Characters sysbench's config file keeps: this password travels in the runner's private config file.
const PASSWORD = 'S3cr#t=pw!$x';

interface RunnerExit {
  readonly code: number | null;
  readonly stderr: string;
}

function startRunner(args: string[], env: Record<string, string> = {}) {
  const child = spawn(RUNNER_NODE, [RUNNER_JS, ...args], {
    env: { ...process.env, AB_TEST_PASSWORD: PASSWORD, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<RunnerExit>((resolve) => child.once('close', (code) => resolve({ code, stderr })));
  return { child, done };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until output.log holds a hook interval line (a guard of 30 s, not an assertion on time). */
async function waitForInterval(outDir: string): Promise<void> {
  const log = join(outDir, 'output.log');
  for (let i = 0; i < 300; i++) {
    if (existsSync(log) && readFileSync(log, 'utf8').includes('{"aurora_bench":1,')) return;
    await sleep(100);
  }
  throw new Error(`no interval line in ${log}: ${existsSync(log) ? readFileSync(log, 'utf8') : '(missing)'}`);
}

/** A /proc/<pid>/ file as text (NUL separators kept), or undefined when the process is gone or not ours. */
function readProc(pid: number, file: 'cmdline' | 'environ'): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every process's command line, arguments joined by spaces (read-only scan of /proc). */
function processCommandLines(): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = readProc(Number(entry), 'cmdline');
    if (cmdline !== undefined && cmdline !== '')
      found.push({ pid: Number(entry), cmdline: cmdline.replace(/\0/g, ' ') });
  }
  return found;
}

/** Processes whose command line holds the given text (read-only scan of /proc). */
function processesWith(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const readResult = (dir: string): RunnerResult =>
  JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as RunnerResult;

describe('client/runner.js against a throwaway MariaDB', () => {
  let db: ThrowawayMariadb;
  let work: string;
  let outN = 0;
  const outDir = () => join(work, `out-${++outN}`);
  const conn = () => [
    '--host',
    '127.0.0.1',
    '--port',
    String(db.port),
    '--user',
    'sbtest',
    '--password-env',
    'AB_TEST_PASSWORD',
  ];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'runner-test-'));
    db = await startMariadb({ password: PASSWORD });
  });
  afterAll(async () => {
    await db.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses bad usage with exit 2 and a message naming the flag', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--workload', 'oltp_read_only', '--out', outDir(), ...conn()], {}, '--phase is required'],
      [
        ['--phase', 'warm', '--workload', 'oltp_read_only', '--out', outDir(), ...conn()],
        {},
        "--phase must be prepare or run, got 'warm'",
      ],
      [
        ['--phase', 'run', '--workload', 'oltp_read_only', '--out', outDir(), ...conn(), '--bogus', 'x'],
        {},
        'unknown flag --bogus',
      ],
      [
        [
          '--phase',
          'prepare',
          '--workload',
          'oltp_read_only',
          '--out',
          outDir(),
          ...conn(),
          '--await-prepare',
          outDir(),
        ],
        {},
        '--prepare-out and --await-prepare go with --phase run',
      ],
      [
        ['--phase', 'run', '--workload', 'oltp_read_only', '--out', outDir(), ...conn(), '--prepare-option=--tables=1'],
        {},
        '--prepare-option need --prepare-out',
      ],
      [
        [
          '--phase',
          'run',
          '--workload',
          'oltp_read_only',
          '--out',
          outDir(),
          ...conn(),
          '--prepare-out',
          '/tmp/p1',
          '--await-prepare',
          '/tmp/p1',
        ],
        {},
        "--await-prepare /tmp/p1 is this job's own --prepare-out",
      ],
      [
        ['--phase', 'run', '--workload', 'oltp_read_only', '--out', outDir(), ...conn(), '--start-after-prepare', '2'],
        {},
        '--start-after-prepare needs --prepare-out or --await-prepare',
      ],
      [
        [
          '--phase',
          'run',
          '--workload',
          'oltp_read_only',
          '--out',
          outDir(),
          ...conn().slice(0, -2),
          '--password-env',
          'AB_UNSET_VAR',
        ],
        {},
        '--password-env: environment variable AB_UNSET_VAR is not set',
      ],
      [
        ['--phase', 'run', '--workload', 'fullscan_1kb.lua', '--out', outDir(), ...conn()],
        {},
        '--script-dir or --script-uri is required',
      ],
      [
        ['--phase', 'run', '--workload', 'oltp_read_only', '--out', outDir(), ...conn(), '--', '--mysql-password=x'],
        {},
        'sysbench option --mysql-password is set by the runner',
      ],
      [
        ['--phase', 'run', '--workload', 'oltp_read_only', '--out', outDir(), ...conn(), '--', '--mysql_debug=on'],
        {},
        'sysbench option --mysql_debug would print the database password into the output; it is not allowed',
      ],
      [
        [
          '--phase',
          'run',
          '--workload',
          'oltp_read_only',
          '--out',
          outDir(),
          '--host',
          'h',
          '--port',
          '99999',
          '--user',
          'u',
          '--password-env',
          'AB_TEST_PASSWORD',
        ],
        {},
        "--port must be a TCP port number, got '99999'",
      ],
    ];
    for (const [args, env, message] of cases) {
      const { done } = startRunner(args, env);
      const r = await done;
      expect({ code: r.code, hasMessage: r.stderr.includes(message) }).toEqual({ code: 2, hasMessage: true });
    }
  });

  it('connects with any password RDS can generate and others, never on a command line, output or result', async () => {
    // Arrange: one database user per password. The first ones break an unquoted sysbench config
    // value (src/sb_options.c read_config: '#' starts a comment, ' and " open a quoted value, ','
    // and whitespace split values); RDS allows every printable ASCII character but '/', '"' and '@'
    // in 8 to 41 characters (botocore rds CreateDBCluster MasterUserPassword). The last ones fit no
    // config-file value (both quote characters, a newline, longer than a 255-byte line) and go
    // through MYSQL_PWD.
    const rdsAlphabet = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).filter(
      (c) => !'/"@'.includes(c),
    );
    const randomRds = Array.from(randomBytes(41), (b) => rdsAlphabet[b % rdsAlphabet.length]).join('');
    const passwords: Record<string, string> = {
      pw_hash: '#starts-with-a-hash',
      pw_squote: "'starts-with-a-quote",
      pw_comma: 'has,commas,inside',
      pw_space: ' has  spaces inside ',
      pw_dquote: 'has"double"quotes',
      pw_bslash: 'back\\slash\\',
      pw_equals: '=equals=signs==',
      pw_semi: 'semi;colon;',
      pw_random: randomRds,
      pw_both: `both'and"quotes, #`,
      pw_newline: 'first line\nsecond line',
      pw_long: randomBytes(150).toString('hex'),
    };
    for (const [user, pw] of Object.entries(passwords)) {
      db.sql(
        ['%', 'localhost', '127.0.0.1']
          .map(
            (h) => `CREATE USER '${user}'@'${h}' IDENTIFIED BY ${sqlString(pw)}; GRANT ALL ON *.* TO '${user}'@'${h}';`,
          )
          .join(' '),
      );
    }
    const prep = await startRunner([
      '--phase',
      'prepare',
      '--workload',
      'oltp_point_select',
      '--out',
      outDir(),
      ...conn(),
      '--',
      '--tables=1',
      '--table-size=20',
    ]).done;
    expect(prep.code).toBe(0);

    for (const [user, pw] of Object.entries(passwords)) {
      const out = outDir();
      const seen = { onCommandLine: 0, sysbench: 0, configFile: false, mysqlPwd: false, inOtherEnvVar: false };

      // Act: a 1 s run; every process's command line (and sysbench's environment) is sampled while it lasts.
      const { done } = startRunner(
        [
          '--phase',
          'run',
          '--workload',
          'oltp_point_select',
          '--out',
          out,
          '--host',
          '127.0.0.1',
          '--port',
          String(db.port),
          '--user',
          user,
          '--password-env',
          'AB_PW',
          '--',
          '--tables=1',
          '--table-size=20',
          '--time=1',
          '--report-interval=1',
        ],
        { AB_PW: pw },
      );
      // An object, not a let: the loop reads what the promise's
      // callback wrote (a let narrows to false for the compiler).
      const sysbenchRun = { finished: false };
      void done.then(() => (sysbenchRun.finished = true));
      while (!sysbenchRun.finished) {
        for (const proc of processCommandLines()) {
          if (proc.cmdline.includes(pw)) seen.onCommandLine++;
          if (!proc.cmdline.includes(`--mysql-user=${user}`) || !proc.cmdline.startsWith('sysbench')) continue;
          seen.sysbench++;
          if (proc.cmdline.includes('--config-file=')) seen.configFile = true;
          for (const v of (readProc(proc.pid, 'environ') ?? '').split('\0')) {
            if (v === `MYSQL_PWD=${pw}`) seen.mysqlPwd = true;
            else if (v.includes(pw)) seen.inOtherEnvVar = true;
          }
        }
        await sleep(5);
      }
      const r = await done;

      // Assert
      const viaEnv = ['pw_both', 'pw_newline', 'pw_long'].includes(user);
      expect({ user, code: r.code, exit: readResult(out).exitCode }).toEqual({ user, code: 0, exit: 0 });
      expect({
        user,
        sawSysbench: seen.sysbench > 0,
        onCommandLine: seen.onCommandLine,
        inOtherEnvVar: seen.inOtherEnvVar,
      }).toEqual({
        user,
        sawSysbench: true,
        onCommandLine: 0,
        inOtherEnvVar: false,
      });
      expect({ user, configFile: seen.configFile, mysqlPwd: seen.mysqlPwd }).toEqual({
        user,
        configFile: !viaEnv,
        mysqlPwd: viaEnv,
      });
      const parsed = parseRunnerOutput(out);
      expect({ user, status: parsed.status, transactions: (parsed.summary?.transactions ?? 0) > 0 }).toEqual({
        user,
        status: 'ok',
        transactions: true,
      });
      for (const f of ['output.log', 'result.json', 'client_cpu.jsonl'])
        expect({ user, f, leaked: readFileSync(join(out, f), 'utf8').includes(pw) }).toEqual({
          user,
          f,
          leaked: false,
        });
      expect(r.stderr.includes(pw)).toBe(false);
    }
  });

  it('prepare: cleanup then prepare, result.json last, the parser calls it ok', async () => {
    const out = outDir();

    const { done } = startRunner([
      '--phase',
      'prepare',
      '--workload',
      'oltp_read_write',
      '--out',
      out,
      ...conn(),
      '--',
      '--tables=2',
      '--table-size=500',
      '--threads=2',
    ]);
    const r = await done;

    expect(r.code).toBe(0);
    const result = readResult(out);
    expect(result.phase).toBe('prepare');
    expect(result.exitCode).toBe(0);
    expect(result.sysbenchVersion).toBe('1.0.20');
    expect(result.command).toContain(' cleanup --mysql-host=127.0.0.1');
    expect(result.command).toContain(' prepare --mysql-host=127.0.0.1');
    const log = readFileSync(join(out, 'output.log'), 'utf8');
    expect(log).toContain("Dropping table 'sbtest1'...");
    expect(log).toContain("Inserting 500 records into 'sbtest2'");
    expect(log.indexOf("Dropping table 'sbtest2'...")).toBeLessThan(log.indexOf("Creating table 'sbtest1'..."));
    expect(parseRunnerOutput(out)).toEqual({
      status: 'ok',
      error: null,
      summary: null,
      intervals: [],
      sysbenchVersion: '1.0.20',
    });
    expect(
      db.sql('SELECT COUNT(*) FROM sbtest.sbtest1; SELECT COUNT(*) FROM sbtest.sbtest2').trim().split('\n'),
    ).toEqual(['500', '500']);
  });

  it("run: the hook's JSON intervals, the summary, CPU samples, and no password anywhere", async () => {
    const out = outDir();

    const { done } = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_write',
      '--out',
      out,
      ...conn(),
      '--',
      '--tables=2',
      '--table-size=500',
      '--threads=2',
      '--time=3',
      '--report-interval=1',
      '--percentile=99',
    ]);
    const r = await done;

    expect(r.code).toBe(0);
    const result = readResult(out);
    expect(result.exitCode).toBe(0);
    expect(result.command).toContain('AURORA_BENCH_TEST=oltp_read_write sysbench ');
    expect(result.command).toContain('--mysql-password=***** --tables=2');
    for (const f of ['output.log', 'result.json', 'client_cpu.jsonl'])
      expect(readFileSync(join(out, f), 'utf8')).not.toContain(PASSWORD);
    expect(r.stderr).not.toContain(PASSWORD);

    const parsed = parseRunnerOutput(out);
    expect(parsed.status).toBe('ok');
    expect(parsed.intervals.length).toBeGreaterThanOrEqual(2);
    expect(parsed.intervals[0]!.t).toBe(1);
    // Every interval ran the requested threads, but the one reported at --time: the workers stop at
    // the time limit as the reporter reports that last second, so one may have stopped already. On
    // an overloaded machine one 1-s interval may complete no transaction (tps 0, no latency), so
    // throughput is asserted over the whole run.
    const ranThreads = (iv: { t: number; threads: number }) => iv.threads === 2 || (iv.t === 3 && iv.threads === 1);
    expect(parsed.intervals.filter((iv) => !(ranThreads(iv) && iv.tps >= 0 && iv.latencyMs >= 0))).toEqual([]);
    expect(parsed.intervals.reduce((sum, iv) => sum + iv.tps, 0)).toBeGreaterThan(0);
    expect(parsed.intervals.some((iv) => iv.tps > 0 && iv.latencyMs > 0)).toBe(true);
    expect(parsed.summary!.latencyMs.percentile).toBe(99);
    expect(parsed.summary!.transactions).toBeGreaterThan(0);
    expect(parsed.summary!.events).toBe(parsed.summary!.transactions);
    expect(
      readFileSync(join(out, 'output.log'), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{"aurora_bench":1,')),
    ).toHaveLength(parsed.intervals.length);

    const samples = parseClientCpu(readFileSync(join(out, 'client_cpu.jsonl'), 'utf8'));
    expect(samples.length).toBeGreaterThanOrEqual(2);
    const cores = cpus().length;
    // A sample is one interval's CPU share: on a loaded machine sysbench may get no CPU tick in one
    // (0%), so only the run as a whole must show its CPU (it completed transactions).
    expect(samples.reduce((sum, s) => sum + s.sysbenchCpuPct, 0)).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s.cores).toBe(cores);
      expect(s.sysbenchCpuPct).toBeGreaterThanOrEqual(0);
      expect(s.sysbenchCpuPct).toBeLessThanOrEqual(100 * cores + 5);
      expect(s.hostCpuPct).toBeGreaterThanOrEqual(0);
      expect(s.hostCpuPct).toBeLessThanOrEqual(100);
      expect(Math.abs(s.t - Date.parse(result.startedAt) / 1000)).toBeLessThan(60);
    }
  });

  it('a custom workload from --script-dir: fullscan_1kb.lua prepare and run', async () => {
    const prepareOut = outDir();
    const runOut = outDir();

    const prep = await startRunner([
      '--phase',
      'prepare',
      '--workload',
      'fullscan_1kb.lua',
      '--script-dir',
      WORKLOADS,
      '--out',
      prepareOut,
      ...conn(),
      '--',
      '--tables=1',
      '--table-size=300',
      '--threads=2',
    ]).done;
    const run = await startRunner([
      '--phase',
      'run',
      '--workload',
      'fullscan_1kb.lua',
      '--script-dir',
      WORKLOADS,
      '--out',
      runOut,
      ...conn(),
      '--',
      '--tables=1',
      '--table-size=300',
      '--threads=2',
      '--time=2',
      '--report-interval=1',
    ]).done;

    expect([prep.code, readResult(prepareOut).exitCode, run.code, readResult(runOut).exitCode]).toEqual([0, 0, 0, 0]);
    expect(db.sql('SELECT COUNT(*), MIN(id), MAX(id), MIN(LENGTH(text25)) FROM sbtest.fullscan1').trim()).toBe(
      '300\t1\t300\t40',
    );
    const parsed = parseRunnerOutput(runOut);
    expect(parsed.status).toBe('ok');
    expect(parsed.intervals.length).toBeGreaterThanOrEqual(1);
    expect(parsed.summary!.transactions).toBeGreaterThan(0);
    // One full-table SELECT per event, nothing else.
    expect([parsed.summary!.reads, parsed.summary!.writes, parsed.summary!.other]).toEqual([
      parsed.summary!.transactions,
      0,
      0,
    ]);
    expect(readResult(runOut).command).toContain(`AURORA_BENCH_SCRIPT=${join(WORKLOADS, 'fullscan_1kb.lua')} sysbench`);
  });

  it('--prepare-out: prepare then run, --await-prepare on that data, duet members await each other', async () => {
    const prepareOut = outDir();
    const firstOut = outDir();
    const secondOut = outDir();
    // The duet's other member: its own data (here its own database
    // on the same server), prepared by its own first client.
    const memberPrepareOut = outDir();
    const memberOut = outDir();
    db.sql('CREATE DATABASE IF NOT EXISTS sbtest_b');
    const runOpts = ['--', '--tables=1', '--table-size=200', '--threads=1', '--time=2', '--report-interval=1'];

    // The awaiting client starts first: it must wait for both prepares, not run on old tables.
    const second = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      secondOut,
      ...conn(),
      '--await-prepare',
      prepareOut,
      '--await-prepare',
      memberPrepareOut,
      '--start-after-prepare',
      '2',
      ...runOpts,
    ]);
    const member = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      memberOut,
      ...conn(),
      '--prepare-out',
      memberPrepareOut,
      '--prepare-option=--mysql-db=sbtest_b',
      '--prepare-option=--tables=1',
      '--prepare-option=--table-size=300',
      '--await-prepare',
      prepareOut,
      '--start-after-prepare=2',
      ...runOpts,
      '--mysql-db=sbtest_b',
    ]);
    const first = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      firstOut,
      ...conn(),
      '--prepare-out',
      prepareOut,
      '--prepare-host',
      '127.0.0.1',
      '--prepare-port',
      String(db.port),
      '--prepare-option',
      '--tables=1',
      '--prepare-option=--table-size=200',
      '--prepare-option',
      '--threads=1',
      '--await-prepare',
      memberPrepareOut,
      '--start-after-prepare=2',
      ...runOpts,
    ]);
    const exits = await Promise.all([first.done, second.done, member.done]);

    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    const prepared = readResult(prepareOut);
    const memberPrepared = readResult(memberPrepareOut);
    expect([memberPrepared.phase, memberPrepared.exitCode]).toEqual(['prepare', 0]);
    expect(readFileSync(join(memberPrepareOut, 'output.log'), 'utf8')).toContain(
      "Inserting 300 records into 'sbtest1'",
    );
    const lastPrepareEnded = Math.max(Date.parse(prepared.endedAt), Date.parse(memberPrepared.endedAt));
    expect([prepared.phase, prepared.exitCode]).toEqual(['prepare', 0]);
    expect(prepared.command).toContain(' cleanup --mysql-host=127.0.0.1');
    expect(prepared.command).toContain('--mysql-password=***** --tables=1 --table-size=200 --threads=1');
    expect(readFileSync(join(prepareOut, 'output.log'), 'utf8')).toContain("Inserting 200 records into 'sbtest1'");
    expect(readFileSync(join(prepareOut, 'server_variables.jsonl'), 'utf8')).toContain('"name"');
    expect(parseRunnerOutput(prepareOut).status).toBe('ok');
    for (const out of [firstOut, secondOut, memberOut]) {
      const result = readResult(out);
      expect([result.phase, result.exitCode]).toEqual(['run', 0]);
      // The run's own times: it started (on every client of both members)
      // 2 s after the last prepare ended, and no prepare is in its output.
      expect(Date.parse(result.startedAt)).toBeGreaterThanOrEqual(lastPrepareEnded + 2000);
      expect(result.command).not.toContain(' prepare ');
      expect(readFileSync(join(out, 'output.log'), 'utf8')).not.toContain('Inserting');
      const parsed = parseRunnerOutput(out);
      expect(parsed.status).toBe('ok');
      expect(parsed.summary!.transactions).toBeGreaterThan(0);
    }
    // Started together: the same moment on every client (the spread
    // is the processes' wake-up, well under the 2 s of slack).
    const starts = [firstOut, secondOut, memberOut].map((out) => Date.parse(readResult(out).startedAt));
    expect(Math.max(...starts) - Math.min(...starts)).toBeLessThan(1000);
    expect(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1').trim()).toBe('200');
    expect(db.sql('SELECT COUNT(*) FROM sbtest_b.sbtest1').trim()).toBe('300');
  });

  it('--prepare-out: a failed prepare fails itself and the runs of every client awaiting it', async () => {
    const prepareOut = outDir();
    const firstOut = outDir();
    const secondOut = outDir();
    const memberPrepareOut = outDir();
    const memberOut = outDir();
    db.sql('CREATE DATABASE IF NOT EXISTS sbtest_b');
    const runOpts = ['--', '--tables=1', '--table-size=200', '--threads=1', '--time=2'];

    const first = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      firstOut,
      ...conn(),
      '--prepare-out',
      prepareOut,
      // A database that does not exist: sysbench prepare fails (FATAL: ... Unknown database).
      '--prepare-option=--mysql-db=no_such_database',
      '--prepare-option=--tables=1',
      ...runOpts,
    ]);
    const second = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      secondOut,
      ...conn(),
      '--await-prepare',
      prepareOut,
      ...runOpts,
    ]);
    const member = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      memberOut,
      ...conn(),
      '--prepare-out',
      memberPrepareOut,
      '--prepare-option=--mysql-db=sbtest_b',
      '--prepare-option=--tables=1',
      '--prepare-option=--table-size=200',
      '--await-prepare',
      prepareOut,
      ...runOpts,
      '--mysql-db=sbtest_b',
    ]);
    const exits = await Promise.all([first.done, second.done, member.done]);

    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    expect(readResult(memberPrepareOut).exitCode).toBe(0);
    const prepared = readResult(prepareOut);
    expect(prepared.phase).toBe('prepare');
    expect(prepared.exitCode).not.toBe(0);
    const prepareParsed = parseRunnerOutput(prepareOut);
    expect(prepareParsed.status).toBe('failed');
    expect(prepareParsed.error).toContain('no_such_database');
    for (const out of [firstOut, secondOut, memberOut]) {
      const result = readResult(out);
      expect(result.phase).toBe('run');
      expect(result.exitCode).not.toBe(0);
      const parsed = parseRunnerOutput(out);
      expect(parsed.status).toBe('failed');
      expect(parsed.error).toContain(
        `not run: the data's prepare (${prepareOut}) failed: exit code ${prepared.exitCode}`,
      );
      expect(parsed.intervals).toEqual([]);
    }
  });

  it('SIGTERM: stops sysbench, still writes result.json, exits (the password never on a command line)', async () => {
    const out = outDir();
    const { child, done } = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      out,
      ...conn(),
      '--',
      '--tables=2',
      '--table-size=500',
      '--threads=2',
      '--time=120',
      '--report-interval=1',
    ]);
    await waitForInterval(out);
    // While sysbench runs: its command line is visible, the password (in the config file) is not.
    expect(processesWith(`--mysql-port=${db.port}`).length).toBeGreaterThan(0);
    expect(processesWith(PASSWORD)).toEqual([]);

    child.kill('SIGTERM');
    const r = await done;

    expect(r.code).toBe(0);
    expect(r.stderr).toContain('stopped by SIGTERM');
    expect(readResult(out).exitCode).toBe(143);
    const parsed = parseRunnerOutput(out);
    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('sysbench was stopped by signal 15 (SIGTERM) (exit 143)');
    expect(parsed.intervals.length).toBeGreaterThanOrEqual(1);
    expect(processesWith(`--mysql-port=${db.port}`)).toEqual([]);
  });

  it('the server dies mid-run: the runner still reports, the parser keeps the intervals and says why', async () => {
    const out = outDir();
    const { done } = startRunner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_write',
      '--out',
      out,
      ...conn(),
      '--',
      '--tables=2',
      '--table-size=500',
      '--threads=2',
      '--time=60',
      '--report-interval=1',
    ]);
    await waitForInterval(out);

    await db.crash();
    const r = await done;

    expect(r.code).toBe(0);
    const result = readResult(out);
    expect(result.exitCode).not.toBe(0);
    const parsed = parseRunnerOutput(out);
    expect(parsed.status).toBe('failed');
    expect(parsed.error).toMatch(/Lost connection to server|error 2013|error 2006|crashed/);
    expect(parsed.summary).toBeNull();
    expect(parsed.intervals.length).toBeGreaterThanOrEqual(1);
    expect(parsed.intervals[0]!.t).toBe(1);
  });
});
