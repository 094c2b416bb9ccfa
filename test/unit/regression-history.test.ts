/**
 * buildHistory over lake rows: series per step and measurement definition, change points with the
 * runs on each side and the size of the change, and the latest run's verdict against the last
 * stable segment.
 */
import { buildHistory, verdictRows, type HistoryRunRow } from '../../core/regression/history';
import type { StepRow } from '../../core/regression/metrics';
import { NormalSource } from '../../bench/synthetic-series';
import { historyRun, nightlySpec, summaryRow } from '../helpers/regression-fixtures';
import { historyReport } from '../../core/regression/render';
import { renderTerminal } from '../../core/report/report';

/** n runs of the nightly spec whose TPS (and latency, inversely) follow `level(i)` with 2% noise. */
function runsWith(
  n: number,
  level: (i: number) => number,
  seed = 1,
  sd = 0.02,
): { runs: HistoryRunRow[]; steps: StepRow[] } {
  const noise = new NormalSource(seed);
  const runs: HistoryRunRow[] = [];
  const steps: StepRow[] = [];
  for (let i = 1; i <= n; i++) {
    const run = historyRun(i);
    const tps = level(i) * (1 + sd * noise.next());
    runs.push(run);
    steps.push(summaryRow(run.run_id, { tps, qps: tps * 20, lat_pct_ms: 10_000 / tps }));
  }
  return { runs, steps };
}

/** The noise seed of runsWith whose 2% step gives a split with p just above 0.01 (found by trying seeds). */
const NEAR_MISS_SEED = 9;

const metric = (h: ReturnType<typeof buildHistory>, name: string) =>
  h.steps[0]!.metrics.find((m) => m.metric === name)!;

describe('history of an experiment', () => {
  it(
    'finds a 20% TPS drop at the run it happened, with the runs on each side, its size and p-value; the ' +
      'latest run is within the noise of the runs since',
    () => {
      // Arrange: runs 1-12 at 1000 TPS, 13-24 at 800
      const { runs, steps } = runsWith(24, (i) => (i <= 12 ? 1000 : 800));
      // Act
      const h = buildHistory({ experiment: 'nightly', runs, steps });
      // Assert
      expect(h.steps).toHaveLength(1);
      const tps = metric(h, 'tps');
      expect(tps.changePoints).toHaveLength(1);
      const cp = tps.changePoints[0]!;
      expect(cp.runId).toBe('nightly-013');
      expect(cp.previousRunId).toBe('nightly-012');
      expect(cp.before.runIds).toEqual(runs.slice(0, 12).map((r) => r.run_id));
      expect(cp.after.runIds).toEqual(runs.slice(12).map((r) => r.run_id));
      expect(cp.direction).toBe('regressed');
      expect(cp.change.kind).toBe('ratio');
      expect(cp.change.estimate).toBeCloseTo(0.8, 1);
      expect(cp.change.low).toBeLessThan(0.8);
      expect(cp.change.high).toBeGreaterThan(0.78);
      expect(cp.change.high).toBeLessThan(0.83);
      expect(cp.pValue).toBeLessThanOrEqual(0.01);
      // latency went up at the same run: a regression too
      expect(metric(h, 'latency').changePoints.map((c) => [c.runId, c.direction])).toEqual([
        ['nightly-013', 'regressed'],
      ]);
      expect(tps.latest).toMatchObject({ runId: 'nightly-024', verdict: 'within-noise', sinceRunId: null });
      expect(tps.latest!.baseline!.runIds).toEqual(runs.slice(12, 23).map((r) => r.run_id));
    },
  );

  it('calls the latest run REGRESSED when it is 25% below the prediction interval of the stable runs before it', () => {
    // Arrange: 15 runs at 1000, the 16th at 750
    const { runs, steps } = runsWith(16, (i) => (i <= 15 ? 1000 : 750));
    // Act
    const h = buildHistory({ experiment: 'nightly', runs, steps });
    // Assert
    const latest = metric(h, 'tps').latest!;
    expect(latest.verdict).toBe('regressed');
    expect(latest.ratio).toBeCloseTo(0.75, 1);
    expect(latest.interval!.low).toBeGreaterThan(latest.value!);
    expect(latest.baseline!.n).toBe(15);
    expect(metric(h, 'latency').latest!.verdict).toBe('regressed');
    // The same as flat rows, one per metric, for a verdicts table or a CI check
    expect(verdictRows(h).map((r) => [r.run_id, r.variant, r.workload, r.metric, r.verdict, r.baseline_runs])).toEqual([
      ['nightly-016', 'r6g', 'rw', 'tps', 'regressed', 15],
      ['nightly-016', 'r6g', 'rw', 'qps', 'regressed', 15],
      ['nightly-016', 'r6g', 'rw', 'latency', 'regressed', 15],
      ['nightly-016', 'r6g', 'rw', 'errors', 'within-noise', 15],
    ]);
  });

  it('calls a TPS rise an improvement and judges runs just after a change against the segment before it', () => {
    // Arrange: 12 runs at 1000, then 3 at 1300: a change point, but too few runs after it to be a level of their own
    const { runs, steps } = runsWith(15, (i) => (i <= 12 ? 1000 : 1300));
    // Act
    const h = buildHistory({ experiment: 'nightly', runs, steps });
    // Assert
    const latest = metric(h, 'tps').latest!;
    expect(metric(h, 'tps').changePoints.map((c) => [c.runId, c.direction])).toEqual([['nightly-013', 'improved']]);
    expect(latest.verdict).toBe('improved');
    expect(latest.sinceRunId).toBe('nightly-013');
    expect(latest.baseline!.runIds).toEqual(runs.slice(0, 12).map((r) => r.run_id));
    expect(metric(h, 'latency').latest!.verdict).toBe('improved');
  });

  it(
    'shows failed and client-bound runs with their reason, leaves them out of the series, and does not judge ' +
      'a failed latest run',
    () => {
      // Arrange
      const { runs, steps } = runsWith(8, () => 1000);
      steps[3] = summaryRow(runs[3]!.run_id, {
        status: 'failed',
        error: 'FATAL: Lost connection',
        tps: null,
        qps: null,
        lat_pct_ms: null,
        errors_per_s: null,
      });
      steps[5] = summaryRow(runs[5]!.run_id, { saturated_clients: 1 });
      steps[7] = summaryRow(runs[7]!.run_id, {
        status: 'failed',
        error: 'FATAL: Too many connections',
        tps: null,
        qps: null,
        lat_pct_ms: null,
        errors_per_s: null,
      });
      // Act
      const h = buildHistory({ experiment: 'nightly', runs, steps });
      // Assert
      const s = h.steps[0]!;
      expect(s.points[3]!.note).toMatch(/^failed in r6g-r1: FATAL: Lost connection/);
      expect(s.points[5]!.note).toMatch(/^client-bound in r6g-r1/);
      expect(metric(h, 'tps').values.map((v) => v === null)).toEqual([
        false,
        false,
        false,
        true,
        false,
        true,
        false,
        true,
      ]);
      expect(metric(h, 'tps').latest).toMatchObject({
        verdict: 'not-judged',
        reason: expect.stringMatching(/Too many connections/),
      });
    },
  );

  it('starts a new series when the measurement changes (saying what), not when a server parameter does', () => {
    // Arrange: runs 1-4 as specified, 5-8 with another parameter value, 9-12 with 120 s steps
    const parameter = nightlySpec({
      variants: [
        { name: 'r6g', instanceClass: 'db.r6g.large', instanceParameters: { max_prepared_stmt_count: 50000 } },
      ],
    });
    const longer = nightlySpec({ defaults: { durationS: 120, warmupS: 10, reportIntervalS: 1, percentile: 95 } });
    const runs = [1, 2, 3, 4]
      .map((i) => historyRun(i))
      .concat(
        [5, 6, 7, 8].map((i) => historyRun(i, parameter)),
        [9, 10, 11, 12].map((i) => historyRun(i, longer)),
      );
    const steps = runs.map((r) => summaryRow(r.run_id));
    // Act
    const h = buildHistory({ experiment: 'nightly', runs, steps });
    // Assert
    expect(h.steps).toHaveLength(2);
    expect(h.steps[0]!.points.map((p) => p.runId)).toEqual(runs.slice(0, 8).map((r) => r.run_id));
    expect(h.steps[0]!.current).toBe(false);
    expect(h.steps[1]!.current).toBe(true);
    expect(h.steps[1]!.startedBecause).toEqual({
      previousHash: h.steps[0]!.measurementHash,
      lastRunBefore: 'nightly-008',
      differences: ['durationS 60 → 120'],
    });
    expect(h.notices).toEqual([
      expect.stringMatching(
        /^rw t8 \[r6g\]: the measurement changed at run nightly-009 \(durationS 60 → 120\): a new series starts there/,
      ),
    ]);
    expect(metric(h, 'tps').latest).toBeNull();
  });

  it(
    'judges errors only above 0.1% of the throughput: a deadlock a minute is within the noise, 5% of ' +
      'transactions failing is a regression',
    () => {
      // Arrange
      const { runs, steps } = runsWith(10, () => 1000);
      const withErrors = (rate: number) => steps.map((s, i) => (i === 9 ? { ...s, errors_per_s: rate } : s));
      // Act
      const normal = buildHistory({ experiment: 'nightly', runs, steps: withErrors(1 / 60) });
      const failing = buildHistory({ experiment: 'nightly', runs, steps: withErrors(50) });
      // Assert
      expect(metric(normal, 'errors').latest!.verdict).toBe('within-noise');
      expect(metric(failing, 'errors').latest!.verdict).toBe('regressed');
    },
  );

  it('searches change points in the last `window` runs of a long series, and says where it started', () => {
    // Arrange: a drop at run 20 of 80, and a rise at run 65
    const { runs, steps } = runsWith(80, (i) => (i < 20 ? 1200 : i < 65 ? 1000 : 1100));
    // Act
    const windowed = buildHistory({ experiment: 'nightly', runs, steps }, { window: 40 });
    const all = buildHistory({ experiment: 'nightly', runs, steps }, { window: 'all' });
    // Assert
    expect(metric(windowed, 'tps').searchedFrom).toBe('nightly-041');
    expect(metric(windowed, 'tps').changePoints.map((c) => c.runId)).toEqual(['nightly-065']);
    expect(metric(all, 'tps').searchedFrom).toBeNull();
    expect(metric(all, 'tps').changePoints.map((c) => c.runId)).toEqual(['nightly-020', 'nightly-065']);
  });

  it('says when there are too few runs to judge the latest one', () => {
    // Arrange
    const { runs, steps } = runsWith(3, () => 1000);
    // Act
    const h = buildHistory({ experiment: 'nightly', runs, steps });
    // Assert
    expect(metric(h, 'tps').latest).toMatchObject({
      verdict: 'unknown',
      reason: 'fewer than 3 earlier runs in a stable segment to judge the latest run against',
    });
  });

  it('says nothing could be judged yet when the latest run has no known noise, not "no regression"', () => {
    // Arrange: three runs, fewer than the three earlier runs a verdict needs
    const { runs, steps } = runsWith(3, () => 1000);
    // Act
    const text = renderTerminal(historyReport(buildHistory({ experiment: 'nightly', runs, steps })));
    // Assert
    expect(text).toMatch(
      new RegExp(
        /Nothing could be judged in the latest run yet: 4 step metrics with the noise unknown \(fewer/.source +
          / than 3 earlier runs in a stable segment\)/.source,
      ),
    );
    expect(text).not.toMatch(/No regression/);
  });

  it('names a 0.999 prediction interval 99.9%, not a rounded 100%', () => {
    // Arrange: 15 stable runs and a 16th well below them, judged at level 0.999
    const { runs, steps } = runsWith(16, (i) => (i <= 15 ? 1000 : 750));
    // Act
    const h = buildHistory({ experiment: 'nightly', runs, steps }, { predictionLevel: 0.999 });
    const text = renderTerminal(historyReport(h));
    // Assert
    expect(metric(h, 'tps').latest!.reason).toMatch(/the 99\.9% prediction interval/);
    expect(text).toMatch(/99\.9% prediction interval/);
    expect(text).not.toMatch(/100% prediction interval/);
  });

  it('keeps a change point only at --magnitude or more (as Otava), listing a smaller one as a near miss', () => {
    // Arrange: runs 1-12 at 1000 TPS, 13-24 at 800 (20% less)
    const { runs, steps } = runsWith(24, (i) => (i <= 12 ? 1000 : 800));
    // Act
    const at10 = metric(buildHistory({ experiment: 'nightly', runs, steps }, { magnitude: 0.1 }), 'tps');
    const at25 = metric(buildHistory({ experiment: 'nightly', runs, steps }, { magnitude: 0.25 }), 'tps');
    // Assert
    expect(at10.changePoints.map((c) => c.runId)).toEqual(['nightly-013']);
    expect(at10.nearMisses).toEqual([]);
    expect(at25.changePoints).toEqual([]);
    expect(at25.nearMisses).toEqual([expect.objectContaining({ runId: 'nightly-013', why: 'magnitude' })]);
    expect(at25.nearMisses[0]!.relativeChange).toBeCloseTo(0.2, 1);
    expect(at25.nearMisses[0]!.pValue).toBeLessThanOrEqual(0.01);
  });

  it(
    'lists a split whose p-value is just above the significance as a near miss, with its exact p-value, ' +
      'reproducibly',
    () => {
      // Arrange: a 2% step in 2% noise, 8 runs on each side: borderline
      const { runs, steps } = runsWith(16, (i) => (i <= 8 ? 1000 : 980), NEAR_MISS_SEED);
      // Act
      const h = buildHistory({ experiment: 'nightly', runs, steps });
      const again = buildHistory({ experiment: 'nightly', runs, steps });
      const tps = metric(h, 'tps');
      // Assert
      expect(tps.changePoints).toEqual([]);
      expect(tps.nearMisses).toHaveLength(1);
      const miss = tps.nearMisses[0]!;
      expect(miss).toMatchObject({ runId: 'nightly-009', why: 'p-value' });
      expect(miss.pValue).toBeGreaterThan(0.01);
      expect(miss.pValue).toBeLessThanOrEqual(0.05);
      // exact: all 199 permutations ran, not the few an early stop at 0.01 would have run
      expect(miss.permutations).toBe(199);
      expect(again).toEqual(h);
      expect(renderTerminal(historyReport(h))).toMatch(
        /Near misses[\s\S]*TPS[\s\S]*not significant: p = 0\.0\d+ > 0\.01/,
      );
    },
  );

  it('draws each step on one y axis from 0, as % of its first segment, every line named in the legend', () => {
    // Arrange: 594-601 TPS, the wobble two auto-scaled axes made look like a crash
    const { runs, steps } = runsWith(10, (i) => 594 + (i % 3) * 3.5, 1, 0);
    // Act
    const chart = historyReport(buildHistory({ experiment: 'nightly', runs, steps }), { charts: true }).sections.find(
      (s) => s.id === 'trends',
    )!.charts[0]!;
    // Assert
    const option = chart.option as {
      yAxis: { min: number; max: number };
      legend: { data: string[] };
      series: { name: string; data: [number, number | null][] }[];
    };
    expect(Array.isArray(option.yAxis)).toBe(false);
    expect(option.yAxis.min).toBe(0);
    expect(option.legend.data).toEqual([
      'TPS (100% = 598 TPS)',
      'TPS segment mean',
      'p95 latency (100% = 16.74 ms)',
      'p95 latency segment mean',
    ]);
    const tps = option.series.find((s) => s.name.startsWith('TPS ('))!.data.map(([, y]) => y!);
    expect(Math.min(...tps)).toBeGreaterThan(99);
    expect(Math.max(...tps)).toBeLessThan(101);
    expect(option.yAxis.max).toBe(125);
  });
});
