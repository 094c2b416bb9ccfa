/**
 * Seeded simulated nights of the history test, for the bench and the tests.
 * Every series gets a lognormal history and tonight's rounds, with the first `shiftedSeries` shifted by `trueRatio`.
 * A night stops when no series continues, or at the maximum.
 */
import { SeededRandom } from '../random';
import { mean, sampleStddev } from '../stats/student-t';
import { historyTest, type HistoryLevel, type HistoryTestOptions } from './history-test';
import { normalDraw } from './normal';

export interface NightAssumption {
  /** Series judged each night. */
  readonly series: number;
  /** Tonight's true value over the history's in the shifted series. */
  readonly trueRatio: number;
  /** How many of the series are shifted. Default all. */
  readonly shiftedSeries?: number;
  /** sd of one round's log value. */
  readonly logSd: number;
  readonly historyRuns: number;
  readonly test: HistoryTestOptions;
  readonly trials: number;
  readonly seed: number;
}

export interface NightFigures {
  readonly expectedRounds: number;
  /** Share of nights that ran more than one round. */
  readonly moreThanOneRound: number;
  /** Share of the shifted series called moved. That is a false alarm when trueRatio is 1. */
  readonly movedShare: number;
  /** Share of the shifted series called moved below their history. */
  readonly movedBelowShare: number;
  /** Share of unshifted series called moved, which are false alarms. NaN when every series is shifted. */
  readonly unshiftedMovedShare: number;
}

/** A history of n runs drawn from the same noise, as its estimated level. */
function drawHistory(rng: SeededRandom, a: NightAssumption): HistoryLevel {
  const xs = Array.from({ length: a.historyRuns }, () => a.logSd * normalDraw(rng));
  return { logMean: mean(xs), logSd: sampleStddev(xs), df: a.historyRuns - 1, runs: a.historyRuns };
}

export function simulateNights(a: NightAssumption): NightFigures {
  const rng = new SeededRandom(a.seed);
  const shifted = a.shiftedSeries ?? a.series;
  const shiftOf = (i: number) => (i < shifted ? Math.log(a.trueRatio) : 0);
  let rounds = 0;
  let more = 0;
  let moved = 0;
  let below = 0;
  let falseAlarms = 0;
  for (let t = 0; t < a.trials; t++) {
    const histories = Array.from({ length: a.series }, () => drawHistory(rng, a));
    const values: number[][] = histories.map(() => []);
    for (let k = 1; ; k++) {
      values.forEach((v, i) => v.push(shiftOf(i) + a.logSd * normalDraw(rng)));
      const looks = histories.map((h, i) => historyTest(values[i]!, h, a.test));
      if (k < a.test.maxRounds && looks.some((l) => l.call === 'continue')) continue;
      rounds += k;
      if (k > 1) more++;
      looks.forEach((l, i) => {
        if (l.call !== 'moved') return;
        if (i >= shifted) falseAlarms++;
        else {
          moved++;
          if (l.ratio < 1) below++;
        }
      });
      break;
    }
  }
  return {
    expectedRounds: rounds / a.trials,
    moreThanOneRound: more / a.trials,
    movedShare: moved / (a.trials * shifted),
    movedBelowShare: below / (a.trials * shifted),
    unshiftedMovedShare: falseAlarms / (a.trials * (a.series - shifted)),
  };
}
