/**
 * The nightly's test of tonight's rounds against its own history (core/rounds/history-test.ts): its
 * calls on hand-made rounds, and over seeded simulated nights (core/rounds/history-simulation.ts)
 * the false-alarm rate, the detection of a 10% drop and the expected rounds, against today's
 * compare of two fixed repeats (bench/rounds-goal.ts todaysCompare: false alarm 2.2%, detection of
 * a 10% drop about 19%). Noise as the bench assumes: one round's ratio CV 5%, so one variant's
 * round has a log sd of sqrt(ln(1 + 0.05^2)) / sqrt(2), about 3.5%. Bounds: the rate plus four
 * standard errors, as in rounds-judge.test.ts.
 */
import { lookAlpha } from '../../core/rounds/interval';
import { historyBounds, historyTest, type HistoryLevel } from '../../core/rounds/history-test';
import { simulateNights } from '../../core/rounds/history-simulation';
import { studentTQuantile } from '../../core/stats/student-t';

const slack = (p: number, n: number): number => Math.max(4 * Math.sqrt((p * (1 - p)) / n), 1 / n);
const SD = Math.sqrt(Math.log(1 + 0.05 ** 2)) / Math.SQRT2;
const history: HistoryLevel = { logMean: Math.log(1000), logSd: 0.04, df: 29, runs: 30 };
const options = { maxRounds: 3 };
/** Log values of rounds whose z against `history` is the one given at every look. */
const atZ = (z: number, k: number): number[] =>
  Array.from({ length: k }, () => history.logMean + z * history.logSd * Math.sqrt(1 / k + 1 / history.runs));

describe('historyTest on hand-made rounds', () => {
  it('computes z from the mean of the log values, the history sd and both counts', () => {
    // Act
    const look = historyTest([Math.log(1000 * 1.02), Math.log(1000 * 1.04)], history, options);
    // Assert
    const diff = (Math.log(1.02) + Math.log(1.04)) / 2;
    expect(look.z).toBeCloseTo(diff / (0.04 * Math.sqrt(1 / 2 + 1 / 30)), 10);
    expect(look.ratio).toBeCloseTo(Math.exp(diff), 10);
    expect(look.rounds).toBe(2);
  });

  it('is quiet inside the futility bound, moved past the alarm bound, and continues between', () => {
    // Arrange
    const { futility, alarm } = historyBounds(1, history.df, options);
    // Act / Assert
    expect(futility).toBeLessThan(alarm);
    expect(historyTest(atZ(futility * 0.9, 1), history, options).call).toBe('quiet');
    expect(historyTest(atZ(-alarm * 1.05, 1), history, options)).toMatchObject({ call: 'moved', movedAt: 1 });
    expect(historyTest(atZ((futility + alarm) / 2, 1), history, options).call).toBe('continue');
  });

  it('lets the last look decide: what is not an alarm there is quiet', () => {
    // Arrange
    const last = historyBounds(3, history.df, options);
    // Act / Assert
    expect(last.futility).toBe(last.alarm);
    expect(historyTest(atZ(last.alarm * 0.95, 3), history, options).call).toBe('quiet');
    expect(historyTest(atZ(last.alarm * 1.05, 3), history, options).call).toBe('moved');
  });

  it('keeps an alarm of an earlier look when later rounds pull the mean back', () => {
    // Arrange: round 1 far below, then two rounds that bring the mean inside the bounds.
    const { alarm } = historyBounds(1, history.df, options);
    const first = atZ(-alarm * 1.2, 1)[0]!;
    const back = history.logMean + (history.logMean - first) / 2;
    // Act
    const look = historyTest([first, back, back], history, options);
    // Assert
    expect(Math.abs(look.z)).toBeLessThan(historyBounds(3, history.df, options).alarm);
    expect(look).toMatchObject({ call: 'moved', movedAt: 1 });
  });

  it('spends alpha over the looks as t quantiles with the history df', () => {
    // Act
    const alarms = [1, 2, 3].map((k) => historyBounds(k, history.df, { ...options, alpha: 0.022 }).alarm);
    // Assert
    alarms.forEach((a, i) =>
      expect(a).toBeCloseTo(studentTQuantile(1 - lookAlpha(0.022, i + 1, 3, 1) / 2, history.df), 10),
    );
    expect(lookAlpha(0.022, 1, 3, 1) + lookAlpha(0.022, 2, 3, 1) + lookAlpha(0.022, 3, 3, 1)).toBeCloseTo(0.022, 12);
  });

  it('refuses no rounds and a history without noise', () => {
    // Act / Assert
    expect(() => historyTest([], history, options)).toThrow(RangeError);
    expect(() => historyTest([1], { ...history, logSd: 0 }, options)).toThrow(/positive sd/);
  });
});

describe('simulated nights against a month of history (30 runs), at most 3 rounds', () => {
  const base = { logSd: SD, historyRuns: 30, test: options };

  it('alarms at most as often as today, runs about one round when nothing changed', () => {
    // Act
    const n = 20000;
    const quiet = simulateNights({ ...base, series: 1, trueRatio: 1, trials: n, seed: 1 });
    // Assert
    expect(quiet.movedShare).toBeLessThanOrEqual(0.022 + slack(0.022, n));
    expect(quiet.expectedRounds).toBeLessThanOrEqual(1.2);
  });

  it('detects a 10% drop far more often than today (about 19%), on the side of the drop', () => {
    // Act
    const n = 4000;
    const moved = simulateNights({ ...base, series: 1, trueRatio: 0.9, trials: n, seed: 2 });
    // Assert
    expect(moved.movedShare).toBeGreaterThan(0.6);
    expect(moved.movedBelowShare).toBe(moved.movedShare);
  });

  it("detects a drop of one of the nightly's six series alone, without alarming on the others", () => {
    // Act
    const n = 4000;
    const one = simulateNights({ ...base, series: 6, shiftedSeries: 1, trueRatio: 0.9, trials: n, seed: 5 });
    // Assert
    expect(one.movedBelowShare).toBeGreaterThan(0.6);
    expect(one.unshiftedMovedShare).toBeLessThanOrEqual(0.022 + slack(0.022, n * 5));
  });

  it("keeps the nightly's six series (2 variants x 3 steps) at most 1.2 rounds on a quiet night", () => {
    // Act
    const n = 5000;
    const quiet = simulateNights({ ...base, series: 6, trueRatio: 1, trials: n, seed: 3 });
    // Assert
    expect(quiet.expectedRounds).toBeLessThanOrEqual(1.2);
    expect(quiet.movedShare).toBeLessThanOrEqual(0.022 + slack(0.022, n * 6));
  });

  it('would alarm too often spending three times the alpha (about 2.2% a look): why the looks share it', () => {
    // Arrange: the alarm bound of a single test at 2.2% on every look, futility as before.
    const greedy = { ...options, alpha: 0.022 * 3 };
    // Act
    const n = 20000;
    const out = simulateNights({ ...base, series: 1, trueRatio: 1, trials: n, seed: 4, test: greedy });
    // Assert
    expect(out.movedShare).toBeGreaterThan(0.022 + slack(0.022, n));
  });
});
