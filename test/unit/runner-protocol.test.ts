/**
 * The runner's protocol steps, each alone (core/runner/protocol.ts): awaiting other clients'
 * prepares, the synchronized start, a step that does not run, the password's way to sysbench,
 * the command result.json shows, and one CPU sample.
 */
import {
  awaitPrepares,
  cpuSampleLine,
  displayCommand,
  hostTicks,
  passwordTransport,
  preparedFailed,
  processTicks,
  readAwaitedPrepare,
  resultJson,
  runStartDelayMs,
  signalExitCode,
  type AwaitIo,
  type StopSignal,
} from '../../core/runner/protocol';

const result = (exitCode: number, endedAt = '2026-11-27T10:00:00.000Z') =>
  JSON.stringify({ phase: 'prepare', exitCode, startedAt: '2026-11-27T09:59:00.000Z', endedAt });

/** Locations whose result.json appears after a number of looks; pauses counted; a signal after some pauses. */
function io(appearsAfter: Record<string, [number, string]>, signalAfterPauses?: [number, StopSignal]) {
  const looks: Record<string, number> = {};
  let pauses = 0;
  const log: string[] = [];
  const x: AwaitIo = {
    readResult: (location) => {
      looks[location] = (looks[location] ?? 0) + 1;
      log.push(location);
      const [after, text] = appearsAfter[location]!;
      return Promise.resolve((looks[location] ?? 0) > after ? text : undefined);
    },
    pause: () => {
      pauses++;
      return Promise.resolve();
    },
    stopped: () =>
      signalAfterPauses !== undefined && pauses >= signalAfterPauses[0] ? signalAfterPauses[1] : undefined,
  };
  return { io: x, looks, log, pauses: () => pauses };
}

describe('awaiting other clients prepares', () => {
  it('looks at each unseen location once a pause until every one is seen, and collects their end times', async () => {
    const t = io({ a: [0, result(0, '2026-11-27T10:00:01.000Z')], b: [2, result(0, '2026-11-27T10:00:05.000Z')] });
    const outcome = await awaitPrepares(['a', 'b'], t.io);
    expect(outcome).toEqual({ ends: ['2026-11-27T10:00:01.000Z', '2026-11-27T10:00:05.000Z'] });
    expect(t.log).toEqual(['a', 'b', 'b', 'b']);
    expect(t.pauses()).toBe(2);
  });

  it('stops at the first failed prepare: the run does not run, with that exit code; no wait for the rest', async () => {
    const t = io({ a: [1, result(1)], b: [100, result(0)] });
    const outcome = await awaitPrepares(['a', 'b'], t.io);
    expect(outcome.notRun).toEqual({ reason: "the data's prepare (a) failed: exit code 1", exitCode: 1 });
    expect(t.pauses()).toBe(1);
  });

  it('a result.json whose exit code does not read is a failure with exit code 1', async () => {
    const outcome = await awaitPrepares(['a'], io({ a: [0, '{"phase":'] }).io);
    expect(outcome.notRun).toEqual({ reason: "the data's prepare (a) failed: exit code unknown", exitCode: 1 });
  });

  it('a signal while waiting: not run, with the signal exit code and the locations still awaited', async () => {
    const t = io({ a: [0, result(0)], b: [100, result(0)], c: [100, result(0)] }, [3, 'TERM']);
    const outcome = await awaitPrepares(['a', 'b', 'c'], t.io);
    expect(outcome.notRun).toEqual({
      reason: "stopped by SIGTERM while waiting for the data's prepare (b c)",
      exitCode: 143,
    });
    expect(t.pauses()).toBe(3);
  });
});

describe('the synchronized start', () => {
  const ends = ['2026-11-27T10:00:01.000Z', '2026-11-27T10:00:03.250Z'];
  it('starts S seconds after the last prepare ended, the same moment whenever a client learns of it', () => {
    expect(runStartDelayMs(ends, 2, Date.parse('2026-11-27T10:00:03.500Z'))).toBe(1750);
    expect(runStartDelayMs(ends, 2, Date.parse('2026-11-27T10:00:05.000Z'))).toBe(250);
  });
  it('starts at once once the moment is past, without --start-after-prepare, or when an end time does not read', () => {
    expect(runStartDelayMs(ends, 2, Date.parse('2026-11-27T10:00:09.000Z'))).toBe(0);
    expect(runStartDelayMs(ends, undefined, 0)).toBe(0);
    expect(runStartDelayMs([...ends, ''], 2, 0)).toBe(0);
    expect(runStartDelayMs([], 2, 0)).toBe(0);
  });
});

describe('a step that does not run', () => {
  it("records its own prepare's exit code, or the signal's when the prepare exited 0 but was stopped", () => {
    expect(preparedFailed('/p', 2)).toEqual({ reason: "the data's prepare (/p) failed: exit code 2", exitCode: 2 });
    expect(preparedFailed('/p', 0, 'INT')).toEqual({
      reason: "the data's prepare (/p) failed: exit code 0",
      exitCode: 130,
    });
    expect(preparedFailed('/p', 0)).toEqual({ reason: "the data's prepare (/p) failed: exit code 0", exitCode: 1 });
    expect([signalExitCode('TERM'), signalExitCode('INT'), signalExitCode(undefined)]).toEqual([143, 130, 0]);
  });
  it('reads an awaited prepare: ok with its end time only for exit code 0', () => {
    expect(readAwaitedPrepare(result(0))).toEqual({ ok: true, endedAt: '2026-11-27T10:00:00.000Z' });
    expect(readAwaitedPrepare(result(139))).toEqual({ ok: false, exitCode: 139 });
    expect(readAwaitedPrepare('not json')).toEqual({ ok: false, exitCode: undefined });
  });
});

describe("the password's way to sysbench", () => {
  it('a config-file value between a quote character it does not contain, else the driver env variable', () => {
    expect(passwordTransport('', 'mysql')).toEqual({ kind: 'none' });
    expect(passwordTransport('a#b, c', 'mysql')).toEqual({ kind: 'config-file', line: 'mysql-password="a#b, c"\n' });
    expect(passwordTransport('has"dq', 'pgsql')).toEqual({ kind: 'config-file', line: "pgsql-password='has\"dq'\n" });
    expect(passwordTransport(`both'"`, 'mysql')).toEqual({ kind: 'env', name: 'MYSQL_PWD', value: `both'"` });
    expect(passwordTransport('two\nlines', 'pgsql')).toEqual({ kind: 'env', name: 'PGPASSWORD', value: 'two\nlines' });
    // 255 bytes a line (sb_options.c MAXSTRLEN) - len('mysql-password=""\n') = 237.
    expect(passwordTransport('x'.repeat(237), 'mysql').kind).toBe('config-file');
    expect(passwordTransport('x'.repeat(238), 'mysql').kind).toBe('env');
    expect(passwordTransport('é'.repeat(119), 'mysql').kind).toBe('env');
  });
});

describe('what result.json shows', () => {
  it('the command with the password masked and odd words quoted', () => {
    const text = displayCommand({
      workloadEnv: ['AURORA_BENCH_TEST=oltp_read_only'],
      hook: '/opt/aurora-bench/client/lua/aurora_bench_hook.lua',
      command: 'run',
      connection: ['--mysql-host=h', '--mysql-port=3306', '--mysql-user=u'],
      driver: 'mysql',
      options: ['--threads=2', "--x=it's"],
    });
    expect(text).toBe(
      'AURORA_BENCH_TEST=oltp_read_only sysbench /opt/aurora-bench/client/lua/aurora_bench_hook.lua run ' +
        "--mysql-host=h --mysql-port=3306 --mysql-user=u --mysql-password=***** --threads=2 '--x=it'\\''s'",
    );
  });
  it('result.json has the RunnerResult fields in order', () => {
    const r = {
      phase: 'run',
      exitCode: 0,
      startedAt: 'a',
      endedAt: 'b',
      sysbenchVersion: '1.0.20',
      hostname: 'h',
      command: 'c',
    } as const;
    expect(Object.keys(JSON.parse(resultJson({ ...r })) as object)).toEqual([
      'phase',
      'exitCode',
      'startedAt',
      'endedAt',
      'sysbenchVersion',
      'hostname',
      'command',
    ]);
  });
});

describe('a CPU sample', () => {
  it("reads utime+stime past a command name with spaces and ')' (proc(5)), and the host's aggregate line", () => {
    expect(processTicks('1234 (sys) bench) S 1 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0')).toBe(300);
    expect(
      hostTicks(
        'cpu  100 10 50 800 20 5 5 10 0 0\ncpu0 50 5 25 400 10 2 3 5 0 0\ncpu1 50 5 25 400 10 3 2 5 0 0\nintr 1\n',
      ),
    ).toEqual({ busy: 180, total: 1000, cores: 2 });
  });
  it('gives sysbench as % of one core and the host busy share over the interval', () => {
    const prev = { ticks: 100, busy: 1000, total: 4000, atMs: 1_700_000_000_000 };
    const cur = { ticks: 250, busy: 1300, total: 4400, atMs: 1_700_000_001_000 };
    expect(cpuSampleLine(prev, cur, 100, 2)).toBe(
      '{"t":1700000001.000,"sysbenchCpuPct":150.00,"hostCpuPct":75.00,"cores":2}\n',
    );
    expect(cpuSampleLine(prev, { ...cur, atMs: prev.atMs }, 100, 2)).toBeUndefined();
  });
});
