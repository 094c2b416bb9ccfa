/**
 * compareRuns: steps matched across two runs, B/A per metric with its 95% interval (or the level asked) from the
 * repeats or from batch means of the per-interval samples, direction-aware verdicts, and steps
 * that failed or were client-bound shown but not judged.
 */
import { compareRuns, type CompareSide, type IntervalSample } from '../../core/regression/compare';
import type { StepRow } from '../../core/regression/metrics';
import { comparisonReport } from '../../core/regression/render';
import { renderTerminal } from '../../core/report/report';
import { historyRun, nightlySpec, summaryRow } from '../helpers/regression-fixtures';

/**
 * A run with the given repeats (tps, latency) of the one step,
 * each with 30 interval samples wobbling 3% around its TPS.
 */
function side(index: number, repeats: readonly Partial<StepRow>[]): CompareSide {
  const run = historyRun(index);
  const steps = repeats.map((r, k) => summaryRow(run.run_id, { cell_id: `r6g-r${k + 1}`, repeat: k + 1, ...r }));
  const intervals = new Map<string, IntervalSample[]>();
  for (const s of steps) {
    if (s.tps === null) continue;
    intervals.set(
      `${s.cell_id}/${s.step_id}`,
      Array.from({ length: 30 }, (_, t) => {
        const w = 1 + 0.03 * Math.sin(t * 2.3 + s.repeat);
        return { tps: s.tps! * w, qps: s.qps! * w, lat_pct_ms: s.lat_pct_ms! / w, errors_per_s: s.errors_per_s ?? 0 };
      }),
    );
  }
  return {
    run: {
      run_id: run.run_id,
      spec_name: 'nightly',
      started_at: run.started_at,
      status: 'succeeded',
      backend: 'local',
      plan: run.plan,
    },
    steps,
    intervals,
  };
}

const verdicts = (c: ReturnType<typeof compareRuns>) =>
  Object.fromEntries(c.steps[0]!.metrics.map((m) => [m.metric, m.verdict]));

describe('compare two runs', () => {
  it('from repeats: 3 repeats each at the same level are within the noise', () => {
    // Arrange
    const a = side(1, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10 },
      { tps: 1030, qps: 20600, lat_pct_ms: 9.8 },
      { tps: 980, qps: 19600, lat_pct_ms: 10.3 },
    ]);
    const b = side(2, [
      { tps: 1010, qps: 20200, lat_pct_ms: 10.1 },
      { tps: 990, qps: 19800, lat_pct_ms: 9.9 },
      { tps: 1020, qps: 20400, lat_pct_ms: 10 },
    ]);
    // Act
    const c = compareRuns(a, b);
    // Assert
    expect(c.steps).toHaveLength(1);
    expect(c.steps[0]!.metrics.map((m) => m.source)).toEqual(['repeats', 'repeats', 'repeats', 'repeats']);
    expect(verdicts(c)).toEqual({
      tps: 'within-noise',
      qps: 'within-noise',
      latency: 'within-noise',
      errors: 'within-noise',
    });
    expect(c.steps[0]!.metrics[0]!.ratio!.low).toBeLessThan(1);
    expect(c.steps[0]!.metrics[0]!.ratio!.high).toBeGreaterThan(1);
    expect(c.regressions).toBe(0);
  });

  it('says how many improved/regressed calls its level gives by chance for the metrics it judged', () => {
    // Arrange: one step, four metrics judged from three repeats a side
    const a = side(1, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10 },
      { tps: 1030, qps: 20600, lat_pct_ms: 9.8 },
      { tps: 980, qps: 19600, lat_pct_ms: 10.3 },
    ]);
    const b = side(2, [
      { tps: 1010, qps: 20200, lat_pct_ms: 10.1 },
      { tps: 990, qps: 19800, lat_pct_ms: 9.9 },
      { tps: 1020, qps: 20400, lat_pct_ms: 10 },
    ]);
    // Act
    const at95 = compareRuns(a, b);
    const at999 = compareRuns(a, b, { level: 0.999 });
    // Assert: m x (1 - level)
    expect(at95.judgedMetrics).toBe(4);
    expect(at95.expectedFalseCalls).toBeCloseTo(0.2, 10);
    expect(at999.expectedFalseCalls).toBeCloseTo(0.004, 10);
    expect(renderTerminal(comparisonReport(at95))).toMatch(
      new RegExp(
        /4 metrics judged at 95%: if nothing had changed, about 0\.2 of them would still be called/.source +
          / improved or regressed by chance \(1 in 20 each\)/.source,
      ),
    );
    expect(at95.sameRun).toBe(false);
  });

  it('warns when a run is compared with itself', () => {
    // Arrange
    const a = side(1, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10 },
      { tps: 1030, qps: 20600, lat_pct_ms: 9.8 },
    ]);
    // Act
    const c = compareRuns(a, a);
    // Assert
    expect(c.sameRun).toBe(true);
    expect(renderTerminal(comparisonReport(c))).toMatch(/WARNING: run \S+ is compared with itself/);
  });

  it('from repeats: 20% less TPS and 25% more latency are regressions, and the ratio is B/A with its interval', () => {
    // Arrange
    const a = side(1, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10 },
      { tps: 1020, qps: 20400, lat_pct_ms: 10.2 },
      { tps: 990, qps: 19800, lat_pct_ms: 9.9 },
    ]);
    const b = side(2, [
      { tps: 800, qps: 16000, lat_pct_ms: 12.5 },
      { tps: 810, qps: 16200, lat_pct_ms: 12.6 },
      { tps: 795, qps: 15900, lat_pct_ms: 12.4 },
    ]);
    // Act
    const c = compareRuns(a, b);
    // Assert
    expect(verdicts(c)).toEqual({ tps: 'regressed', qps: 'regressed', latency: 'regressed', errors: 'within-noise' });
    const tps = c.steps[0]!.metrics[0]!;
    expect(tps.ratio!.estimate).toBeCloseTo(2405 / 3010, 6);
    expect(tps.ratio!.high).toBeLessThan(0.85);
    expect(c.regressions).toBe(3);
    expect(renderTerminal(comparisonReport(c))).toMatch(
      /REGRESSED: rw t8 \[r6g\] TPS 79\.9% \(7\d\.\d%–8\d\.\d%\) \(B\/A\)/,
    );
  });

  it(
    'with one repeat: from batch means of the per-interval samples, said to be within-run noise only; faster ' +
      'is an improvement',
    () => {
      // Arrange
      const a = side(1, [{ tps: 1000, qps: 20000, lat_pct_ms: 10 }]);
      const b = side(2, [{ tps: 1200, qps: 24000, lat_pct_ms: 8 }]);
      // Act
      const c = compareRuns(a, b);
      // Assert
      expect(c.steps[0]!.metrics[0]!.source).toBe('intervals');
      expect(c.steps[0]!.metrics[0]!.ratio!.estimate).toBeCloseTo(1.2, 9);
      expect(verdicts(c)).toMatchObject({ tps: 'improved', qps: 'improved', latency: 'improved' });
      expect(c.steps[0]!.notes).toEqual([expect.stringMatching(/noise within each run only/)]);
      expect(c.improvements).toBe(3);
    },
  );

  it('shows a step that failed or was client-bound in either run, not judged, and lists steps only one run has', () => {
    // Arrange
    const a = side(1, [{ tps: 1000 }, { tps: 1000, saturated_clients: 1 }]);
    const failing = side(2, [
      { tps: 500 },
      {
        tps: null,
        qps: null,
        lat_pct_ms: null,
        errors_per_s: null,
        status: 'failed',
        error: 'FATAL: Too many connections',
      },
    ]);
    const b = {
      ...failing,
      steps: [...failing.steps, summaryRow(failing.run.run_id, { workload: 'ro', step_id: 'ro-t8-max' })],
    };
    // Act
    const c = compareRuns(a, b);
    // Assert
    expect(c.steps[0]!.judged).toBe(false);
    expect(c.steps[0]!.notes).toEqual([
      expect.stringMatching(/^A client-bound in r6g-r2/),
      'B failed in r6g-r2: FATAL: Too many connections',
    ]);
    expect(new Set(c.steps[0]!.metrics.map((m) => m.verdict))).toEqual(new Set(['not-judged']));
    expect(c.regressions).toBe(0);
    expect(c.onlyInB).toEqual(['ro t8 [r6g]']);
  });

  it('judges errors/s as a difference, and only beyond 0.1% of the transactions', () => {
    // Arrange
    const a = side(1, [
      { tps: 1000, errors_per_s: 0 },
      { tps: 1000, errors_per_s: 0 },
    ]);
    const few = side(2, [
      { tps: 1000, errors_per_s: 0.2 },
      { tps: 1000, errors_per_s: 0.3 },
    ]);
    const many = side(3, [
      { tps: 1000, errors_per_s: 40 },
      { tps: 1000, errors_per_s: 45 },
    ]);
    // Act
    const cFew = compareRuns(a, few);
    const cMany = compareRuns(a, many);
    // Assert
    expect(cFew.steps[0]!.metrics[3]!.verdict).toBe('within-noise');
    expect(cMany.steps[0]!.metrics[3]!.verdict).toBe('regressed');
    expect(cMany.steps[0]!.metrics[3]!.difference!.estimate).toBeCloseTo(42.5, 9);
  });

  it(
    'at a higher level the intervals widen: a 5.7% gain between two tight pairs of repeats is beyond the ' +
      'noise at 95%, within it at 99.9%',
    () => {
      // Arrange
      const a = side(1, [
        { tps: 1000, qps: 20000, lat_pct_ms: 10 },
        { tps: 1010, qps: 20200, lat_pct_ms: 10 },
      ]);
      const b = side(2, [
        { tps: 1060, qps: 21200, lat_pct_ms: 10 },
        { tps: 1065, qps: 21300, lat_pct_ms: 10 },
      ]);
      // Act
      const at95 = compareRuns(a, b);
      const at999 = compareRuns(a, b, { level: 0.999 });
      // Assert
      expect(at95.level).toBe(0.95);
      expect(at999.level).toBe(0.999);
      expect(verdicts(at95)['tps']).toBe('improved');
      expect(verdicts(at999)['tps']).toBe('within-noise');
      const [t95, t999] = [at95, at999].map((c) => c.steps[0]!.metrics[0]!.ratio!);
      expect(t999!.estimate).toBe(t95!.estimate);
      expect(t999!.low).toBeLessThan(t95!.low);
      expect(t999!.high).toBeGreaterThan(t95!.high);
      expect(renderTerminal(comparisonReport(at999))).toContain('B/A per step (99.9% interval)');
      expect(renderTerminal(comparisonReport(at95))).toContain('B/A per step (95% interval)');
      expect(() => compareRuns(a, b, { level: 95 })).toThrow('confidence level 95: give one from 0.5 to 0.9999');
    },
  );

  it('names what differs when the two runs measured the step differently', () => {
    // Arrange
    const a = side(1, [{ tps: 1000 }, { tps: 1000 }]);
    const b = side(2, [{ tps: 1000 }, { tps: 1000 }]);
    const longer = historyRun(
      2,
      nightlySpec({ defaults: { durationS: 300, warmupS: 10, reportIntervalS: 1, percentile: 95 } }),
    );
    // Act
    const c = compareRuns(a, { ...b, run: { ...b.run, plan: longer.plan } });
    // Assert
    expect(c.steps[0]!.notes).toContain('the measurement differs: durationS 60 → 300');
  });
});

describe('compare: the latency distribution', () => {
  it('shows p50 ... max of both runs (mean over repeats) where both recorded a histogram', () => {
    // Arrange
    const dist = (p50: number, max: number) => ({
      lat_p50_ms: p50,
      lat_p90_ms: p50 * 2,
      lat_p95_ms: p50 * 3,
      lat_p99_ms: p50 * 5,
      lat_p999_ms: p50 * 8,
      lat_max_ms: max,
    });
    const a = side(1, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10, ...dist(2, 40) },
      { tps: 1000, qps: 20000, lat_pct_ms: 10, ...dist(4, 60) },
    ]);
    const b = side(2, [
      { tps: 1000, qps: 20000, lat_pct_ms: 10, ...dist(5, 90) },
      { tps: 1000, qps: 20000, lat_pct_ms: 10, ...dist(5, 110) },
    ]);

    // Act
    const c = compareRuns(a, b);
    const text = renderTerminal(comparisonReport(c));

    // Assert
    expect(c.steps[0]!.latency).toEqual({ a: [3, 6, 9, 15, 24, 50], b: [5, 10, 15, 25, 40, 100] });
    expect(text).toContain('Latency distribution, A → B');
    expect(text).toContain('15.00 → 25.00');
  });

  it('leaves the distribution out when a run has no histogram (older lakes)', () => {
    // Arrange
    const a = side(1, [{ tps: 1000, qps: 20000, lat_pct_ms: 10 }]);
    const b = side(2, [
      {
        tps: 1000,
        qps: 20000,
        lat_pct_ms: 10,
        lat_p50_ms: 1,
        lat_p90_ms: 2,
        lat_p95_ms: 3,
        lat_p99_ms: 4,
        lat_p999_ms: 5,
        lat_max_ms: 6,
      },
    ]);

    // Act
    const c = compareRuns(a, b);

    // Assert
    expect(c.steps[0]!.latency.a).toBeNull();
    expect(renderTerminal(comparisonReport(c))).not.toContain('Latency distribution');
  });
});
