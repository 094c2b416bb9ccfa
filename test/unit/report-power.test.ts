/** Power: how many repeats a side a comparison needs to resolve a ratio of the observed size (core/report/stats.ts). */
import { repeatsToResolve, studentTQuantile } from '../../core/report/stats';

describe('repeatsToResolve', () => {
  it(
    '5% apart with 5% run-to-run noise a side needs 18 repeats (Cohen d ~ 0.98: about 17 per group at 80% ' +
      'power, 5% two-sided)',
    () => {
      // Arrange: per-repeat coefficients of variation 5%, ratio 1.05
      const a = { mean: 105, sd: 5.25, n: 3 };
      const b = { mean: 100, sd: 5, n: 3 };
      // Act
      const n = repeatsToResolve(a, b);
      // Assert: the smallest n with (t(.975, df) + t(.8, df)) * sqrt(2 cv^2 / n) <= ln(1.05)
      expect(n).toBe(18);
      const enough = (k: number): boolean => {
        const df = 2 * (k - 1); // equal variances of the means: Welch's df is 2(n - 1)
        return (
          (studentTQuantile(0.975, df) + studentTQuantile(0.8, df)) * Math.sqrt((2 * 0.05 ** 2) / k) <= Math.log(1.05)
        );
      };
      expect([enough(17), enough(18)]).toEqual([false, true]);
    },
  );

  it('a larger difference or less noise needs fewer repeats; no difference or too few samples cannot be said', () => {
    // Act
    const big = repeatsToResolve({ mean: 120, sd: 6, n: 3 }, { mean: 100, sd: 5, n: 3 });
    const quiet = repeatsToResolve({ mean: 105, sd: 1.05, n: 3 }, { mean: 100, sd: 1, n: 3 });
    const same = repeatsToResolve({ mean: 100, sd: 5, n: 3 }, { mean: 100, sd: 5, n: 3 });
    const single = repeatsToResolve({ mean: 105, sd: Number.NaN, n: 1 }, { mean: 100, sd: 5, n: 3 });
    const hopeless = repeatsToResolve({ mean: 100.1, sd: 30, n: 3 }, { mean: 100, sd: 30, n: 3 });
    // Assert
    expect(big).toBe(3);
    expect(quiet).toBe(3);
    expect([same, single, hopeless]).toEqual([null, null, null]);
  });
});
