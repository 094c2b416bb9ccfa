/**
 * The parser over the outputs of other sysbench versions and drivers (test/fixtures/sysbench/versions/:
 * 1.0.20 and 1.1.0 recorded by its record.sh on real MariaDB and PostgreSQL servers; 0.4 and 0.5
 * built from those versions' printf formats, see its README.md). Expected values are copied from
 * the fixture files: re-recording means updating them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSysbenchOutput } from '../../core/sysbench/parser';

const VERSIONS = join(__dirname, '..', 'fixtures', 'sysbench', 'versions');
const log = (name: string): string => readFileSync(join(VERSIONS, `${name}.log`), 'utf8');
const exitCode = (name: string): number => Number(readFileSync(join(VERSIONS, `${name}.exit`), 'utf8').trim());
const parseFixture = (name: string) => parseSysbenchOutput(log(name), { exitCode: exitCode(name), percentile: 95 });

describe('sysbench 1.1.x', () => {
  it('a complete mysql run is ok: "time elapsed" under Throughput is the total time', () => {
    const parsed = parseFixture('v1_1_mysql_read_write');

    expect(parsed.status).toBe('ok');
    expect(parsed.error).toBeNull();
    expect(parsed.sysbenchVersion).toBe('1.1.0');
    expect(parsed.summary).toEqual({
      tps: 1079.54,
      qps: expect.any(Number) as number,
      events: 3243,
      totalTimeS: 3.0041,
      reads: 45402,
      writes: 12972,
      other: 6486,
      transactions: 3243,
      queries: 64860,
      errors: 0,
      reconnects: 0,
      latencyMs: {
        min: 0.61,
        avg: 1.85,
        max: 31.93,
        percentile: 95,
        value: 3.75,
        sum: 5999.21,
        percentiles: { '50': 1.496, '90': 2.662, '95': 3.748, '99': 8.895, '99.9': 24.384 },
      },
    });
    expect(parsed.intervals.map((i) => [i.t, i.tps, i.latencyMs])).toEqual([
      [1, 1196.48, 3.25],
      [2, 913.42, 5.88],
      [3, 1126.91, 3.13],
    ]);
    expect(parsed.histogram?.reduce((a, b) => a + b.count, 0)).toBe(3243);
  });

  it('the pgsql driver prints the same blocks; the percentile it printed (99) wins', () => {
    const parsed = parseFixture('v1_1_pgsql_read_write');

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.transactions).toBe(4070);
    expect(parsed.summary?.totalTimeS).toBe(3.0067);
    expect(parsed.summary?.latencyMs).toEqual({
      min: 0.47,
      avg: 1.47,
      max: 98.36,
      percentile: 99,
      value: 6.55,
      sum: 6002.76,
    });
    expect(parsed.intervals.map((i) => [i.t, i.latencyMs])).toEqual([
      [1, 9.22],
      [2, 2.71],
      [3, 8.13],
    ]);
  });

  it('rate mode with --debug: DEBUG lines skipped, queue lines merged', () => {
    const parsed = parseFixture('v1_1_mysql_rate_debug');

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.transactions).toBe(97);
    expect(parsed.summary?.totalTimeS).toBe(2.021);
    expect(parsed.intervals.map((i) => [i.t, i.queueLength, i.concurrency])).toEqual([
      [1, 0, 0],
      [2, 0, 0],
    ]);
  });

  it('a checkpoint report (warmup) is not the summary; later intervals only', () => {
    const parsed = parseFixture('v1_1_mysql_checkpoint');

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.transactions).toBe(9677);
    expect(parsed.summary?.totalTimeS).toBe(3.0053);
    expect(parsed.intervals.map((i) => i.t)).toEqual([2, 3]);
  });
});

describe('sysbench 1.0.x: the pgsql driver, debug lines, text around', () => {
  it('pgsql driver with histogram', () => {
    const parsed = parseFixture('v1_0_pgsql_read_write');

    expect(parsed.status).toBe('ok');
    expect(parsed.sysbenchVersion).toBe('1.0.20');
    expect(parsed.summary?.transactions).toBe(2720);
    expect(parsed.summary?.errors).toBe(12);
    expect(parsed.summary?.totalTimeS).toBe(3.9848);
    expect(parsed.summary?.latencyMs.max).toBe(1004.06);
    expect(parsed.intervals.map((i) => i.tps)).toEqual([202.77, 1100.74, 1414.99]);
    expect(parsed.histogram?.reduce((a, b) => a + b.count, 0)).toBe(2720);
  });

  it('--debug: the DEBUG lines around and after the summary change nothing', () => {
    const parsed = parseFixture('v1_0_mysql_debug');

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.transactions).toBe(196223);
    expect(parsed.summary?.totalTimeS).toBe(2.0014);
    expect(parsed.summary?.latencyMs.value).toBe(0.03);
    expect(parsed.intervals.map((i) => i.tps)).toEqual([87623.74]);
  });

  it("a hand-run log with the script's own lines before and after", () => {
    const parsed = parseFixture('v1_0_text_around');

    expect(parsed.status).toBe('ok');
    expect(parsed.summary?.transactions).toBe(4476);
    expect(parsed.summary?.latencyMs).toMatchObject({
      min: 0.39,
      avg: 0.89,
      max: 14.72,
      percentile: 95,
      value: 1.82,
      sum: 3997.36,
    });
    expect(parsed.intervals.map((i) => i.tps)).toEqual([2059.06]);
  });
});

describe('sysbench 0.4 and 0.5: refused', () => {
  it.each([
    ['v0_5_constructed', '0.5'],
    ['v0_4_constructed', '0.4.12'],
  ])('%s: failed with an error naming the version and what to do, no summary', (name, version) => {
    const parsed = parseFixture(name);

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toContain(`sysbench ${version} output is not supported`);
    expect(parsed.error).toContain('re-run the benchmark with sysbench 1.0 or later');
    expect(parsed.summary).toBeNull();
    expect(parsed.sysbenchVersion).toBe(version);
  });

  it('a 0.x summary without its banner (the head of the log cut off) is refused too', () => {
    const text = log('v0_5_constructed');
    const cut = text.slice(text.indexOf('OLTP test statistics:'));

    const parsed = parseSysbenchOutput(cut, { exitCode: 0 });

    expect(parsed.status).toBe('failed');
    expect(parsed.error).toContain('sysbench 0.4 or 0.5 output is not supported');
  });
});

describe('latency percentiles from the histogram (summary.latencyMs.percentiles)', () => {
  it.each([
    ['v1_0_pgsql_read_write', 95],
    ['v1_0_text_around', 95],
    ['v1_1_mysql_read_write', 95],
  ])('%s: the p95 read off the histogram is the 95th percentile sysbench printed (2 decimals)', (name, pct) => {
    const parsed = parseFixture(name);

    const p = parsed.summary?.latencyMs.percentiles;
    expect(parsed.summary?.latencyMs.percentile).toBe(pct);
    expect(p).toBeDefined();
    expect(p!['95'].toFixed(2)).toBe(parsed.summary!.latencyMs.value.toFixed(2));
  });

  it('p50 <= p90 <= p95 <= p99 <= p99.9, all within [min, max] of the summary (bucket values, 3 decimals)', () => {
    const parsed = parseFixture('v1_1_mysql_read_write');

    const p = parsed.summary!.latencyMs.percentiles!;
    const series = [p['50'], p['90'], p['95'], p['99'], p['99.9']];
    expect([...series].sort((a, b) => a - b)).toEqual(series);
    expect(series[0]).toBeGreaterThanOrEqual(parsed.summary!.latencyMs.min - 0.01);
    expect(series[4]).toBeLessThanOrEqual(parsed.summary!.latencyMs.max * 1.02);
  });

  it('no histogram, no percentiles', () => {
    const parsed = parseFixture('v1_1_pgsql_read_write');

    expect(parsed.summary?.latencyMs.percentiles).toBeUndefined();
  });
});
