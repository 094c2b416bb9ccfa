import {
  batchMeansCi,
  describeRatio,
  mean,
  meanCi,
  ratioVerdict,
  sampleStddev,
  studentTQuantile,
  summarize,
  welchDifferenceCi,
  welchRatioCi,
} from '../../core/report/stats';
import { studentTCdf } from '../../core/stats/student-t';

describe('report statistics', () => {
  it('computes mean and sample standard deviation', () => {
    // Arrange
    const xs = [2, 4, 4, 4, 5, 5, 7, 9];
    // Act / Assert
    expect(mean(xs)).toBe(5);
    expect(sampleStddev(xs)).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(sampleStddev([3])).toBeNaN();
  });

  it.each([
    [1, 12.706204736],
    [2, 4.30265273],
    [5, 2.570581836],
    [10, 2.228138852],
    [30, 2.042272456],
    [1e7, 1.959964],
  ])('gives the two-sided 95%% Student-t quantile for df=%p', (df, expected) => {
    // Act
    const t = studentTQuantile(0.975, df);
    // Assert
    expect(t).toBeCloseTo(expected, 5);
    expect(studentTCdf(t, df)).toBeCloseTo(0.975, 10);
  });

  it('handles fractional degrees of freedom between the integers', () => {
    // Act
    const t = studentTQuantile(0.975, 4.5);
    // Assert: strictly between t(4)=2.776 and t(5)=2.571
    expect(t).toBeLessThan(2.776445);
    expect(t).toBeGreaterThan(2.570582);
  });

  it('builds a t interval for a mean', () => {
    // Act
    const ci = meanCi([1, 2, 3, 4, 5]);
    // Assert: 3 +- 2.776445 * sqrt(2.5)/sqrt(5)
    expect(ci.estimate).toBe(3);
    expect(ci.halfWidth).toBeCloseTo(2.776445 * Math.sqrt(0.5), 5);
    expect(ci.low).toBeCloseTo(3 - ci.halfWidth, 12);
    expect(meanCi([7]).halfWidth).toBeNaN();
  });

  it('uses batch means for autocorrelated interval samples', () => {
    // Arrange: 1..20 in 4 batches -> batch means 3, 8, 13, 18
    const series = Array.from({ length: 20 }, (_, i) => i + 1);
    // Act
    const ci = batchMeansCi(series, 4);
    // Assert
    expect(ci.n).toBe(4);
    expect(ci.estimate).toBe(10.5);
    expect(ci.halfWidth).toBeCloseTo(3.182446 * (sampleStddev([3, 8, 13, 18]) / 2), 5);
    // wider than the naive interval that treats the 20 samples as independent
    expect(ci.halfWidth).toBeGreaterThan(meanCi(series).halfWidth);
  });

  it('builds a Welch interval for a difference of means', () => {
    // Arrange: means 12 and 22, both sd 2, n 3 -> df 4
    const a = summarize([10, 12, 14]);
    const b = summarize([20, 22, 24]);
    // Act
    const ci = welchDifferenceCi(a, b);
    // Assert
    expect(ci.estimate).toBe(-10);
    expect(ci.df).toBeCloseTo(4, 12);
    expect(ci.halfWidth).toBeCloseTo(2.776445 * Math.sqrt(8 / 3), 5);
  });

  it('says a ratio is within the noise when its interval straddles 1, and names the side otherwise', () => {
    // Arrange: S1 read-only QPS, r6g vs r5 (the study: 190953 vs 206528 = 92.46%) with tight repeats
    const r6g = summarize([190000, 190953, 191900]);
    const r5 = summarize([205600, 206528, 207500]);
    const noisyA = summarize([100, 140, 80]);
    const noisyB = summarize([110, 90, 130]);
    // Act
    const clear = welchRatioCi(r6g, r5);
    const noisy = welchRatioCi(noisyA, noisyB);
    // Assert
    expect(clear.estimate).toBeCloseTo(190953 / 206528, 3);
    expect(clear.low).toBeLessThan(clear.estimate);
    expect(clear.high).toBeGreaterThan(clear.estimate);
    expect(ratioVerdict(clear)).toBe('lower');
    expect(ratioVerdict(noisy)).toBe('within-noise');
    expect(describeRatio('QPS', 'r6g', 'r5', clear)).toMatch(
      /^QPS r6g\/r5 = 92\.5% \(95% CI .*\): r6g is worse beyond the noise\.$/,
    );
    expect(describeRatio('QPS', 'a', 'b', noisy)).toMatch(/within the noise/);
    expect(ratioVerdict(welchRatioCi(summarize([1]), r5))).toBe('unknown');
  });
});
