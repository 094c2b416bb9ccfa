/**
 * The change-point detector on synthetic series whose change points are known: a step down, a step
 * up, a regression that is fixed later, a change of spread, outliers, and no change; the statistics
 * against their definitions computed the slow way; reproducibility and early stopping.
 */
import { bestSplit, eDivisive, vStatistics } from '../../core/regression/edivisive';
import { segmentedSeries, seriesOfKind } from '../../bench/synthetic-series';

const HISTORY = { significance: 0.01, permutations: 199 } as const;

/** Matteson and James' Q(tau, kappa) from its definition (U-statistics), every pair summed anew. */
function qSlow(x: readonly number[], tau: number, kappa: number): number {
  const X = x.slice(0, tau);
  const Y = x.slice(tau, kappa);
  const n = X.length;
  const m = Y.length;
  let cross = 0;
  for (const a of X) for (const b of Y) cross += Math.abs(a - b);
  let wx = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) wx += Math.abs(X[i]! - X[j]!);
  let wy = 0;
  for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) wy += Math.abs(Y[i]! - Y[j]!);
  return (
    (2 / (n + m)) * cross -
    (n > 1 ? ((2 * m) / ((n + m) * (n - 1))) * wx : 0) -
    (m > 1 ? ((2 * n) / ((n + m) * (m - 1))) * wy : 0)
  );
}

/** signal-processing-algorithms' statistic from its definition (V-statistics, Y to the end). */
function vSlow(x: readonly number[], tau: number): number {
  const n = tau;
  const m = x.length - tau;
  if (n === 0) return 0;
  let cross = 0;
  let wx = 0;
  let wy = 0;
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < x.length; j++) {
      const d = Math.abs(x[i]! - x[j]!);
      if (i < tau && j >= tau) cross += d;
      else if (i < tau && j < tau) wx += d;
      else if (i >= tau && j >= tau) wy += d;
    }
  }
  return ((n * m) / (n + m)) * ((2 * cross) / (n * m) - wx / (n * n) - wy / (m * m));
}

describe('E-Divisive means on series with known change points', () => {
  it.each([
    ['step-down', 40],
    ['step-up', 40],
    ['step-down', 100],
    ['step-up', 100],
  ] as const)(
    'finds a %s of 10%% (noise 2%%, %i runs) within one run of its index, p <= 0.01, for every seed',
    (kind, length) => {
      for (let seed = 1; seed <= 5; seed++) {
        // Arrange
        const s = seriesOfKind(kind, length, seed);
        // Act
        const r = eDivisive(s.values, { ...HISTORY, seed });
        // Assert: the known change (a first value after it can look
        // like the values before), nothing else in these seeds
        expect(r.changePoints).toHaveLength(1);
        expect(Math.abs(r.changePoints[0]!.index - s.changePoints[0]!)).toBeLessThanOrEqual(1);
        expect(r.changePoints[0]!.pValue).toBeLessThanOrEqual(0.01);
      }
    },
  );

  it('finds a regression fixed later (down 30% for 6 runs) at both runs; the to-end statistic does not', () => {
    let bestEnd = 0;
    let toEnd = 0;
    for (let seed = 1; seed <= 10; seed++) {
      // Arrange: 6 runs at 1000, 6 at 700, 6 at 1000 (noise 2%)
      const s = segmentedSeries(
        'fixed later',
        [
          { length: 6, mean: 1000, sd: 20 },
          { length: 6, mean: 700, sd: 20 },
          { length: 6, mean: 1000, sd: 20 },
        ],
        seed,
      );
      // Act
      const u = eDivisive(s.values, { ...HISTORY, seed, statistic: 'u-statistic-best-end' });
      const v = eDivisive(s.values, { ...HISTORY, seed, statistic: 'v-statistic-to-end' });
      // Assert (below)
      if (JSON.stringify(u.changePoints.map((c) => c.index)) === JSON.stringify([6, 12])) bestEnd++;
      if (JSON.stringify(v.changePoints.map((c) => c.index)) === JSON.stringify([6, 12])) toEnd++;
    }
    expect(bestEnd).toBe(10);
    expect(toEnd).toBe(0);
  });

  it('finds a change of spread (sd x5, same level) within 3 of 160 runs, and nothing in the calm part', () => {
    for (let seed = 1; seed <= 5; seed++) {
      // Arrange: the change is at run 80
      const s = seriesOfKind('variance', 160, seed);
      // Act
      const r = eDivisive(s.values, { ...HISTORY, seed });
      // Assert: a spread change needs more runs than a level change (100 runs find it about half the time)
      expect(r.changePoints.length).toBeGreaterThanOrEqual(1);
      expect(Math.abs(r.changePoints[0]!.index - 80)).toBeLessThanOrEqual(3);
      expect(r.changePoints.every((c) => c.index >= 77)).toBe(true);
    }
  });

  it('does not call single outliers (6 sd, away from the ends) change points', () => {
    for (let seed = 1; seed <= 10; seed++) {
      // Arrange
      const s = seriesOfKind('outliers', 60, seed);
      // Act
      const r = eDivisive(s.values, { ...HISTORY, seed });
      // Assert
      expect(r.changePoints).toEqual([]);
    }
  });

  it("finds nothing in at most 2 of 40 change-free series (the test's level is 1%)", () => {
    // Arrange
    const series = Array.from({ length: 40 }, (_, i) => seriesOfKind('none', 50, 100 + i));
    // Act
    const withChange = series.filter(
      (s, i) => eDivisive(s.values, { ...HISTORY, seed: i }).changePoints.length > 0,
    ).length;
    // Assert
    expect(withChange).toBeLessThanOrEqual(2);
  });

  it(
    'gives the same change points and p-values for the same seed, and stops early only where the decision is ' +
      'already made',
    () => {
      // Arrange
      const s = segmentedSeries(
        'two steps',
        [
          { length: 15, mean: 100, sd: 3 },
          { length: 15, mean: 90, sd: 3 },
          { length: 15, mean: 95, sd: 3 },
        ],
        3,
      );
      // Act
      const a = eDivisive(s.values, { ...HISTORY, seed: 9 });
      const b = eDivisive(s.values, { ...HISTORY, seed: 9 });
      const full = eDivisive(s.values, { ...HISTORY, seed: 9, stopEarly: false });
      // Assert
      expect(b).toEqual(a);
      expect(full.changePoints).toEqual(a.changePoints);
      expect(a.rejected!.stoppedEarly).toBe(true);
      expect(a.rejected!.permutations).toBeLessThan(199);
      expect(full.rejected!.permutations).toBe(199);
      expect(full.rejected!.pValue).toBeGreaterThan(0.01);
    },
  );

  it("computes signal-processing-algorithms' statistic at every split as its definition does", () => {
    // Arrange
    const s = seriesOfKind('down-up', 37, 5, 0.05).values;
    // Act
    const fast = Array.from(vStatistics(s));
    // Assert
    fast.forEach((v, tau) => expect(v).toBeCloseTo(vSlow(s, tau), 8));
  });

  it("finds Matteson and James' best split (over tau and kappa) as the definition does", () => {
    // Arrange
    const s = seriesOfKind('down-up', 25, 8, 0.03).values;
    let best = { index: -1, statistic: -Infinity };
    for (let tau = 1; tau < s.length; tau++)
      for (let kappa = tau + 1; kappa <= s.length; kappa++) {
        const q = qSlow(s, tau, kappa);
        if (q > best.statistic) best = { index: tau, statistic: q };
      }
    // Act
    const fast = bestSplit(s, 'u-statistic-best-end');
    // Assert
    expect(fast.index).toBe(best.index);
    expect(fast.statistic).toBeCloseTo(best.statistic, 8);
  });

  it('refuses a series with a missing value and options outside their range', () => {
    expect(() => eDivisive([1, 2, Number.NaN, 3])).toThrow(/series\[2\] is not a finite number/);
    expect(() => eDivisive([1, 2, 3], { significance: 1.5 })).toThrow(/significance must be in \(0, 1\)/);
    expect(() => eDivisive([1, 2, 3], { permutations: 0 })).toThrow(/permutations must be a positive integer/);
  });
});
