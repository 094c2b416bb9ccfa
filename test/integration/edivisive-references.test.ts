/**
 * The detector against the published implementations of E-Divisive, run on the same series:
 * signal-processing-algorithms 2.1.6 (MongoDB) for the 'v-statistic-to-end' statistic and
 * apache-otava 0.8.0 (compute_change_points_orig's detector) for 'u-statistic-best-end'.
 * The statistics must agree to rounding, the change points exactly; the p-values come from
 * different random permutations, so they must agree within the Monte Carlo error of 499
 * permutations: a count of exceedances is binomial, so two estimates of the same p differ by a
 * standard deviation of sqrt(2 p (1 - p) / 499) (0.03 near p = 0.4); allowed: 4 of those + 0.01.
 *
 * Python runs test/helpers/changepoint_reference.py in .venv/references/<package> (scripts/setup.sh --test):
 * separate processes with their own packages, hence the integration layer rather than the unit one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { bestSplit, eDivisive, vStatistics, type EDivisiveStatistic } from '../../core/regression/edivisive';
import { segmentedSeries, seriesOfKind, type SyntheticSeries } from '../../bench/synthetic-series';

const REPO = join(__dirname, '..', '..');
const SIGNIFICANCE = 0.05;
const PERMUTATIONS = 499;
const pTolerance = (p: number): number => 4 * Math.sqrt((2 * p * (1 - p)) / PERMUTATIONS) + 0.01;

interface ReferencePoint {
  readonly index: number;
  readonly statistic: number;
  readonly pValue: number;
}
interface ReferenceResult {
  readonly changePoints: readonly ReferencePoint[];
  readonly bestSplit: { readonly index: number; readonly statistic: number };
  readonly statistics: readonly number[] | null;
  readonly rejected: { readonly index: number; readonly pValue: number } | null;
}

function runReference(
  implementation: 'signal-processing-algorithms' | 'apache-otava',
  series: readonly SyntheticSeries[],
): ReferenceResult[] {
  const python = join(REPO, '.venv', 'references', implementation, 'bin', 'python');
  if (!existsSync(python))
    throw new Error(`${python} is missing: run bash scripts/setup.sh --test (it installs ${implementation} there)`);
  const r = spawnSync(python, [join(REPO, 'test', 'helpers', 'changepoint_reference.py')], {
    input: JSON.stringify({
      implementation,
      series: series.map((s) => s.values),
      significance: SIGNIFICANCE,
      permutations: PERMUTATIONS,
      seed: 7,
    }),
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`${implementation} reference failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as ReferenceResult[];
}

const SERIES: SyntheticSeries[] = [
  seriesOfKind('step-down', 40, 1),
  seriesOfKind('step-up', 40, 2),
  seriesOfKind('down-up', 45, 3, 0.02, 0.1),
  segmentedSeries(
    'fixed later, 6 runs each',
    [
      { length: 6, mean: 1000, sd: 20 },
      { length: 6, mean: 700, sd: 20 },
      { length: 6, mean: 1000, sd: 20 },
    ],
    4,
  ),
  segmentedSeries(
    'three levels',
    [
      { length: 15, mean: 100, sd: 3 },
      { length: 15, mean: 90, sd: 3 },
      { length: 15, mean: 95, sd: 3 },
    ],
    5,
  ),
  seriesOfKind('variance', 80, 6),
  seriesOfKind('outliers', 40, 7),
  seriesOfKind('none', 40, 8),
  seriesOfKind('none', 25, 9, 0.05),
];

function ours(s: SyntheticSeries, statistic: EDivisiveStatistic) {
  return eDivisive(s.values, {
    significance: SIGNIFICANCE,
    permutations: PERMUTATIONS,
    seed: 11,
    statistic,
    stopEarly: false,
  });
}

describe('E-Divisive against signal-processing-algorithms 2.1.6 (MongoDB), statistic v-statistic-to-end', () => {
  let reference: ReferenceResult[];
  beforeAll(() => {
    reference = runReference('signal-processing-algorithms', SERIES);
  });

  it.each(SERIES.map((s, i) => [s.name, i] as const))(
    '%s: the same statistic at every split, the same change points, p-values within Monte Carlo error',
    (_name, i) => {
      // Arrange
      const s = SERIES[i]!;
      const ref = reference[i]!;
      // Act
      const statistics = Array.from(vStatistics(s.values));
      const r = ours(s, 'v-statistic-to-end');
      // Assert
      statistics.forEach((v, k) => expect(v).toBeCloseTo(ref.statistics![k]!, 6));
      expect(r.changePoints.map((c) => c.index)).toEqual(
        [...ref.changePoints.map((c) => c.index)].sort((a, b) => a - b),
      );
      for (const c of ref.changePoints) {
        const mine = r.changePoints.find((m) => m.index === c.index)!;
        expect(mine.statistic).toBeCloseTo(c.statistic, 6);
        expect(Math.abs(mine.pValue - c.pValue)).toBeLessThanOrEqual(pTolerance(c.pValue));
      }
      if (ref.rejected) {
        expect(r.rejected!.index).toBe(ref.rejected.index);
        expect(Math.abs(r.rejected!.pValue - ref.rejected.pValue)).toBeLessThanOrEqual(pTolerance(ref.rejected.pValue));
      }
    },
  );
});

describe('E-Divisive against apache-otava 0.8.0 (compute_change_points_orig), statistic u-statistic-best-end', () => {
  let reference: ReferenceResult[];
  beforeAll(() => {
    reference = runReference('apache-otava', SERIES);
  });

  it.each(SERIES.map((s, i) => [s.name, i] as const))(
    '%s: the same best split, the same change points, p-values within Monte Carlo error',
    (_name, i) => {
      // Arrange
      const s = SERIES[i]!;
      const ref = reference[i]!;
      // Act
      const best = bestSplit(s.values, 'u-statistic-best-end');
      const r = ours(s, 'u-statistic-best-end');
      // Assert
      expect(best.index).toBe(ref.bestSplit.index);
      expect(best.statistic).toBeCloseTo(ref.bestSplit.statistic, 6);
      expect(r.changePoints.map((c) => c.index)).toEqual(ref.changePoints.map((c) => c.index));
      for (const c of ref.changePoints) {
        const mine = r.changePoints.find((m) => m.index === c.index)!;
        expect(mine.statistic).toBeCloseTo(c.statistic, 6);
        expect(Math.abs(mine.pValue - c.pValue)).toBeLessThanOrEqual(pTolerance(c.pValue));
      }
    },
  );
});
