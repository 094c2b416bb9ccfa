/**
 * The parser over real sysbench 1.0.20 outputs recorded by test/fixtures/sysbench/record.sh.
 * Expected values are copied from the fixture files: re-recording means updating them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunnerOutput } from '../../core/sysbench/parse-file';
import {
  histogramPercentile,
  parseClientCpu,
  parseSysbenchOutput,
  summarizeClientCpu,
} from '../../core/sysbench/parser';

const FIXTURES = join(__dirname, '..', 'fixtures', 'sysbench');
const log = (name: string): string => readFileSync(join(FIXTURES, `${name}.log`), 'utf8');
const exitCode = (name: string): number => Number(readFileSync(join(FIXTURES, `${name}.exit`), 'utf8').trim());
const parseFixture = (name: string, percentile = 95) =>
  parseSysbenchOutput(log(name), { exitCode: exitCode(name), percentile });

describe('parseSysbenchOutput: successful runs', () => {
  it('reads the text interval lines and the summary of a plain oltp_read_write run', () => {
    const parsed = parseFixture('plain_read_write');

    expect(parsed.status).toBe('ok');
    expect(parsed.error).toBeNull();
    expect(parsed.intervals).toEqual([
      {
        t: 1,
        threads: 2,
        tps: 630.88,
        qps: 12687.47,
        readsPerS: 8888.21,
        writesPerS: 2533.5,
        otherPerS: 1265.75,
        latencyMs: 7.3,
        errorsPerS: 2,
        reconnectsPerS: 0,
      },
      {
        t: 2,
        threads: 2,
        tps: 717.05,
        qps: 14382.09,
        readsPerS: 10079.76,
        writesPerS: 2865.22,
        otherPerS: 1437.11,
        latencyMs: 6.55,
        errorsPerS: 3,
        reconnectsPerS: 0,
      },
    ]);
    expect(parsed.summary).toEqual({
      tps: 660.12,
      qps: 13246.4,
      events: 1983,
      totalTimeS: 3.0026,
      reads: 27874,
      writes: 7944,
      other: 3974,
      transactions: 1983,
      queries: 39792,
      errors: 8,
      reconnects: 0,
      latencyMs: { min: 2, avg: 3.02, max: 19.52, percentile: 95, value: 6.91, sum: 5995.38 },
    });
    expect(parsed.histogram).toBeUndefined();
  });

  it('reads the hook JSON lines, with more precision than the text lines', () => {
    const parsed = parseFixture('hook_read_write');

    expect(parsed.status).toBe('ok');
    expect(parsed.intervals.map((i) => i.t)).toEqual([1, 2, 3]);
    expect(parsed.intervals[2]).toEqual({
      t: 3,
      threads: 2,
      tps: 543.001,
      qps: 10872.023,
      readsPerS: 7618.016,
      writesPerS: 2166.005,
      otherPerS: 1088.002,
      latencyMs: 12.752,
      errorsPerS: 2,
      reconnectsPerS: 0,
    });
    expect(parsed.summary?.transactions).toBe(1879);
    expect(parsed.summary?.tps).toBe(622.88);
    expect(parsed.summary?.errors).toBe(10);
    expect(parsed.summary?.totalTimeS).toBe(3.0149);
    expect(parsed.summary?.latencyMs).toEqual({
      min: 1.22,
      avg: 3.2,
      max: 36.53,
      percentile: 95,
      value: 8.13,
      sum: 6022.01,
    });
  });

  it('takes the percentile sysbench printed (99) over the one it was told to expect', () => {
    const parsed = parseFixture('plain_percentile99', 95);

    expect(parsed.intervals[1]!.latencyMs).toBe(1.67);
    expect(parsed.summary?.latencyMs.percentile).toBe(99);
    expect(parsed.summary?.latencyMs.value).toBe(1.64);
    expect(parsed.summary?.tps).toBe(1992.95);
  });

  it('merges the rate-mode queue lines into their text intervals', () => {
    const parsed = parseFixture('plain_rate');

    expect(parsed.intervals).toHaveLength(3);
    expect(parsed.intervals[0]).toEqual({
      t: 1,
      threads: 2,
      tps: 111.77,
      qps: 1788.29,
      readsPerS: 1564.75,
      writesPerS: 0,
      otherPerS: 223.54,
      latencyMs: 18.61,
      errorsPerS: 0,
      reconnectsPerS: 0,
      queueLength: 0,
      concurrency: 0,
    });
    expect(parsed.summary?.tps).toBe(96.99);
    expect(parsed.summary?.transactions).toBe(293);
  });

  it('reads queue length and concurrency from the hook in rate mode, at percentile 99', () => {
    const parsed = parseFixture('hook_rate', 99);

    expect(parsed.intervals.map((i) => [i.queueLength, i.concurrency])).toEqual([
      [0, 0],
      [16, 2],
      [0, 1],
    ]);
    expect(parsed.intervals[1]!.latencyMs).toBe(112.67);
    expect(parsed.summary?.latencyMs).toEqual({
      min: 1.08,
      avg: 12.32,
      max: 113.91,
      percentile: 99,
      value: 110.66,
      sum: 3709.32,
    });
  });

  it('reads the latency histogram and still finds the summary after it', () => {
    const parsed = parseFixture('plain_histogram');

    expect(parsed.histogram).toHaveLength(172);
    expect(parsed.histogram![0]).toEqual({ valueMs: 0.034, count: 5 });
    expect(parsed.histogram![171]).toEqual({ valueMs: 22.689, count: 1 });
    expect(parsed.histogram!.reduce((a, b) => a + b.count, 0)).toBe(85803);
    expect(parsed.summary?.events).toBe(85803);
    expect(parsed.summary?.tps).toBe(42792.45);
    expect(parsed.intervals).toHaveLength(2);
  });

  it('treats a checkpoint report as the end of warmup: later intervals and the final summary only', () => {
    const parsed = parseFixture('hook_warmup');

    expect(parsed.status).toBe('ok');
    // t=1 is warmup, and t=2 is the partial interval sysbench prints right after the checkpoint.
    expect(parsed.intervals.map((i) => i.t)).toEqual([3, 4]);
    expect(parsed.intervals[0]!.tps).toBe(1673.703);
    expect(parsed.summary?.transactions).toBe(3313);
    expect(parsed.summary?.tps).toBe(1653.56);
    expect(parsed.summary?.totalTimeS).toBe(4.0037);
    expect(parsed.summary?.latencyMs.value).toBe(1.58);
  });

  it('reads the fullscan_1kb workload run through the hook', () => {
    const parsed = parseFixture('fullscan_run');

    expect(parsed.status).toBe('ok');
    expect(parsed.intervals.map((i) => i.tps)).toEqual([16.73, 22.943, 51.584]);
    expect(parsed.summary?.transactions).toBe(92);
    expect(parsed.summary?.reads).toBe(92);
    expect(parsed.summary?.writes).toBe(0);
    expect(parsed.summary?.tps).toBe(30.53);
    expect(parsed.summary?.latencyMs.value).toBe(158.63);
  });

  it.each(['prepare_read_write', 'fullscan_prepare'])(
    'calls a clean prepare output (%s) ok, without summary',
    (name) => {
      const parsed = parseFixture(name);

      expect(parsed).toEqual({ status: 'ok', error: null, summary: null, intervals: [], sysbenchVersion: '1.0.20' });
    },
  );
});

describe('parseSysbenchOutput: failures', () => {
  it('connection refused: the FATAL reason with the host and port', () => {
    const parsed = parseFixture('fatal_connection_refused');

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe(
      "unable to connect to MySQL server on host '127.0.0.1', port 36365, aborting...; error 2002: Can't " +
        "connect to server on '127.0.0.1' (115)",
    );
    expect(parsed.summary).toBeNull();
    expect(parsed.intervals).toEqual([]);
  });

  it('too many connections', () => {
    const parsed = parseFixture('fatal_too_many_connections');

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe(
      "unable to connect to MySQL server on host '127.0.0.1', port 33509, aborting...; error 1040: " +
        'Too many connections',
    );
  });

  it('table missing', () => {
    const parsed = parseFixture('fatal_table_missing');

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe("mysql_stmt_prepare() failed; MySQL error: 1146 \"Table 'empty.sbtest1' doesn't exist\"");
  });

  it('rate mode overloaded: the event queue filled up', () => {
    const parsed = parseFixture('rate_queue_full');

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe(
      'The event queue is full. This means the worker threads are unable to keep up with the specified event ' +
        'generation rate',
    );
  });

  it('server killed mid-run: keeps the intervals printed before the lost connections', () => {
    const parsed = parseFixture('server_killed');

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toMatch(
      /^mysql_stmt_execute\(\) returned error 2013 \(Lost connection to server during query\) for query '[^']+'; /,
    );
    expect(parsed.summary).toBeNull();
    expect(parsed.intervals.map((i) => [i.t, i.tps])).toEqual([
      [1, 321.466],
      [2, 506.999],
    ]);
  });

  it('crash (exit 139): says so and keeps the intervals', () => {
    const parsed = parseFixture('crash_connections_killed');

    expect(exitCode('crash_connections_killed')).toBe(139);
    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('sysbench crashed (signal 11 / exit 139)');
    expect(parsed.summary).toBeNull();
    expect(parsed.intervals.map((i) => [i.t, i.threads, i.tps])).toEqual([
      [1, 4, 671.141],
      [2, 4, 655.682],
    ]);
  });

  it('a cut output without an exit code still fails, for want of a summary', () => {
    const parsed = parseSysbenchOutput(log('crash_connections_killed'));

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('sysbench output ended before its summary (crashed or killed?)');
    expect(parsed.intervals).toHaveLength(2);
  });

  it("sums every thread's read-back counts, also where two threads' objects share a line, and skips a cut one", () => {
    // Arrange: three threads' counts, two of them written on one
    // line (text and newline written apart), and one cut by a crash
    const text = [
      log('plain_read_write'),
      '{"aurora_bench_read_back":{"checks":10,"stale":1,"foreign":0}}{"aurora_bench_read_back":{"checks":20,' +
        '"stale":0,"foreign":2}}',
      '',
      '{"aurora_bench_read_back":{"checks":30,"stale":0,"foreign":0}}',
      '{"aurora_bench_read_back":{"checks":4',
    ].join('\n');
    // Act
    const parsed = parseSysbenchOutput(text, { exitCode: 0, percentile: 95 });
    // Assert
    expect(parsed.readBack).toEqual({ checks: 60, stale: 1, foreign: 2 });
    expect(parsed.status).toBe('ok');
  });

  it('skips a JSON line cut in the middle', () => {
    const text = log('hook_read_write');
    const cut = text.slice(0, text.indexOf('"t":3') + 20);

    const parsed = parseSysbenchOutput(cut);

    expect(parsed.intervals.map((i) => i.t)).toEqual([1, 2]);
    expect(parsed.status).toBe('failed');
  });

  it('a stop signal after the summary: failed, summary kept', () => {
    const parsed = parseSysbenchOutput(log('plain_read_write'), { exitCode: 143 });

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('sysbench was stopped by signal 15 (SIGTERM) (exit 143)');
    expect(parsed.summary?.transactions).toBe(1983);
  });

  it('a non-zero exit without any FATAL line', () => {
    const parsed = parseSysbenchOutput(log('plain_read_write'), { exitCode: 1 });

    expect(parsed.error).toBe('sysbench exited with code 1');
  });

  it("the runner's own error line", () => {
    const parsed = parseSysbenchOutput(
      'aurora-bench runner: could not read secret arn:aws:secretsmanager:us-east-1:1:secret:x: AccessDenied\n',
    );

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('could not read secret arn:aws:secretsmanager:us-east-1:1:secret:x: AccessDenied');
  });

  it('empty output', () => {
    expect(parseSysbenchOutput('')).toEqual({
      status: 'failed',
      error: 'no sysbench output',
      summary: null,
      intervals: [],
    });
  });
});

describe('client CPU samples', () => {
  const lines = [
    '{"t":1795237588.572,"sysbenchCpuPct":26.96,"hostCpuPct":71.28,"cores":2}',
    '{"t":1795237589.574,"sysbenchCpuPct":185.5,"hostCpuPct":97.1,"cores":2}',
    '{"t":1795237590.576,"sysbenchCpuPct":25.94,"hostCpuPct":69.94,"cores":2}',
  ];

  it('parses the lines and skips a last line cut by a kill', () => {
    const samples = parseClientCpu(lines.join('\n') + '\n{"t":17952375');

    expect(samples).toEqual([
      { t: 1795237588.572, sysbenchCpuPct: 26.96, hostCpuPct: 71.28, cores: 2 },
      { t: 1795237589.574, sysbenchCpuPct: 185.5, hostCpuPct: 97.1, cores: 2 },
      { t: 1795237590.576, sysbenchCpuPct: 25.94, hostCpuPct: 69.94, cores: 2 },
    ]);
  });

  it('names the line and the field of a bad sample', () => {
    expect(() => parseClientCpu(`${lines[0]}\n{"t":1,"sysbenchCpuPct":"x","hostCpuPct":1,"cores":2}\n`)).toThrow(
      'client_cpu.jsonl line 2: field "sysbenchCpuPct" must be a number, got "x"',
    );
    expect(() => parseClientCpu(`garbage\n${lines[0]}\n`)).toThrow('client_cpu.jsonl line 1: not JSON');
  });

  it('summarizes host CPU and sysbench CPU; not saturated on average', () => {
    const summary = summarizeClientCpu(parseClientCpu(lines.join('\n')));

    expect(summary).toEqual({
      avg: 79.44,
      max: 97.1,
      sysbenchAvg: 79.47,
      sysbenchMax: 185.5,
      samples: 3,
      saturated: false,
    });
  });

  it('flags saturation: host >= 95%, sysbench >= 90% of the cores, or of the cores its threads can use', () => {
    const s = (sysbenchCpuPct: number, hostCpuPct: number) => ({ t: 1, sysbenchCpuPct, hostCpuPct, cores: 2 });

    expect(summarizeClientCpu([s(50, 95)]).saturated).toBe(true);
    expect(summarizeClientCpu([s(180, 90)]).saturated).toBe(true);
    expect(summarizeClientCpu([s(179, 94.9)]).saturated).toBe(false);
    expect(summarizeClientCpu([s(92, 60)], { threads: 1 }).saturated).toBe(true);
    expect(summarizeClientCpu([s(92, 60)]).saturated).toBe(false);
    expect(summarizeClientCpu([])).toEqual({
      avg: null,
      max: null,
      sysbenchAvg: null,
      sysbenchMax: null,
      samples: 0,
      saturated: false,
    });
  });
});

describe('parseRunnerOutput (aurora-bench parse)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parse-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a runner directory: output.log with the exit code of result.json', () => {
    writeFileSync(join(dir, 'output.log'), log('crash_connections_killed'));
    writeFileSync(join(dir, 'result.json'), JSON.stringify({ phase: 'run', exitCode: 139 }));

    const parsed = parseRunnerOutput(dir);

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toBe('sysbench crashed (signal 11 / exit 139)');
    expect(parsed.intervals).toHaveLength(2);
  });

  it('a directory without result.json: the runner did not finish', () => {
    writeFileSync(join(dir, 'output.log'), log('plain_read_write'));

    expect(parseRunnerOutput(dir).error).toBe('runner did not finish (no result.json)');
  });

  it('a raw sysbench log file', () => {
    const parsed = parseRunnerOutput(join(FIXTURES, 'hook_rate.log'));

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.tps).toBe(100.17);
  });

  it('clear errors for a missing path, a directory without output.log and a bad result.json', () => {
    expect(() => parseRunnerOutput(join(dir, 'nope'))).toThrow(`${join(dir, 'nope')}: no such file or directory`);
    expect(() => parseRunnerOutput(dir)).toThrow(`${dir}: not a runner output directory (no output.log)`);
    writeFileSync(join(dir, 'output.log'), log('plain_read_write'));
    writeFileSync(join(dir, 'result.json'), '{"exitCode":"zero"}');
    expect(() => parseRunnerOutput(dir)).toThrow(
      `${join(dir, 'result.json')}: field "exitCode" must be an integer, got "zero"`,
    );
  });
});

describe('histogramPercentile', () => {
  it('is the first bucket whose running count reaches floor(n * p / 100 + 0.5), as sysbench reads its own', () => {
    const histogram = [
      { valueMs: 1, count: 5 },
      { valueMs: 2, count: 4 },
      { valueMs: 3, count: 1 },
    ];

    expect(histogramPercentile(histogram, 50)).toBe(1);
    expect(histogramPercentile(histogram, 56)).toBe(2);
    expect(histogramPercentile(histogram, 90)).toBe(2);
    expect(histogramPercentile(histogram, 95)).toBe(3);
    expect(histogramPercentile(histogram, 99.9)).toBe(3);
    expect(histogramPercentile([], 50)).toBeNull();
  });

  it('the recorded 1.0.20 histogram: every percentile of the summary', () => {
    const parsed = parseFixture('plain_histogram');

    expect(parsed.summary?.latencyMs.percentiles).toEqual({
      '50': 0.039,
      '90': 0.044,
      '95': 0.048,
      '99': 0.063,
      '99.9': 2.264,
    });
  });
});
