/**
 * Tonight's rounds of one series (variant, step, metric) tested against the series' own stable
 * history, after every round: stop "quiet" as soon as tonight is clearly within the noise, "moved"
 * as soon as it is clearly beyond it, else run another round; the last look decides.
 *
 * Method: a two-sided group-sequential test with futility stopping (Jennison and Turnbull, "Group
 * Sequential Methods with Applications to Clinical Trials", Chapman & Hall/CRC 2000, chapters 2 and
 * 5). After round k, z = (mean of tonight's log values - history log mean) / (sd · sqrt(1/k + 1/n)),
 * with the history's mean, sd and degrees of freedom over its n stable runs. Tonight's rounds are
 * independent of the history, so under no change each look's z is exactly Student's t with the
 * history's df. The alarm bound of look k is that t quantile at the alpha the look spends
 * (Pocock-type spending, interval.ts lookAlpha), so by the union bound all looks together alarm at
 * most alpha when nothing changed. The futility ("quiet") bound is non-binding: stopping early for
 * quiet only removes chances to alarm, so the type-I error stays at most alpha however it is set.
 * It sets the cost instead: a quiet night stops after one round unless |z| falls in the grey zone.
 */
import { mean, studentTQuantile } from '../stats/student-t';
import { lookAlpha } from './interval';

/** A series' stable history on the log scale: its mean, sd of one run's value, df and runs. */
export interface HistoryLevel {
  readonly logMean: number;
  readonly logSd: number;
  readonly df: number;
  readonly runs: number;
}

export interface HistoryTestOptions {
  readonly maxRounds: number;
  /** The false-alarm rate over all looks when nothing changed. Default HISTORY_TEST_DEFAULTS.alpha. */
  readonly alpha?: number;
  /** Quiet when |z| is below the t quantile at 1 - futility/2. Default HISTORY_TEST_DEFAULTS.futility. */
  readonly futility?: number;
}

/**
 * alpha 0.022 is today's compare's false-alarm rate (bench/rounds-goal.ts todaysCompare). futility
 * 0.03: |z| above about 2.2 at the first look (t with a month of runs) continues, so a quiet night
 * of the nightly's six series runs one round in about nine nights of ten (bench/rounds-goal.ts).
 */
export const HISTORY_TEST_DEFAULTS = { alpha: 0.022, futility: 0.03 } as const;

type HistoryCall = 'quiet' | 'moved' | 'continue';

export interface HistoryLook {
  readonly rounds: number;
  /** Tonight's geometric mean over the history's: exp(mean log - history log mean). */
  readonly ratio: number;
  readonly z: number;
  readonly futilityBound: number;
  readonly alarmBound: number;
  readonly call: HistoryCall;
  /** The round whose look first alarmed, when one did: an alarm once sounded stands. */
  readonly movedAt?: number;
}

/** The bounds of the look after round k of maxRounds, on |z|. @internal exported for its tests (a test seam) */
export function historyBounds(k: number, df: number, options: HistoryTestOptions): { futility: number; alarm: number } {
  const alpha = options.alpha ?? HISTORY_TEST_DEFAULTS.alpha;
  const alarm = studentTQuantile(1 - lookAlpha(alpha, k, options.maxRounds, 1) / 2, df);
  // At the last look nothing is left to wait for: what is not an alarm is quiet.
  if (k >= options.maxRounds) return { futility: alarm, alarm };
  const futility = studentTQuantile(1 - (options.futility ?? HISTORY_TEST_DEFAULTS.futility) / 2, df);
  return { futility: Math.min(futility, alarm), alarm };
}

/** The look after the rounds given. */
function look(logValues: readonly number[], history: HistoryLevel, options: HistoryTestOptions): HistoryLook {
  const k = logValues.length;
  if (!(history.df > 0 && history.runs > 0 && history.logSd > 0))
    throw new RangeError(`a history needs runs, df and a positive sd (got ${JSON.stringify(history)})`);
  const diff = mean(logValues) - history.logMean;
  const z = diff / (history.logSd * Math.sqrt(1 / k + 1 / history.runs));
  const { futility, alarm } = historyBounds(Math.min(k, options.maxRounds), history.df, options);
  const call: HistoryCall =
    Math.abs(z) > alarm ? 'moved' : Math.abs(z) < futility || k >= options.maxRounds ? 'quiet' : 'continue';
  return { rounds: k, ratio: Math.exp(diff), z, futilityBound: futility, alarmBound: alarm, call };
}

/**
 * The test after tonight's rounds so far (their log values, one a round): the latest look, except
 * that a series that alarmed at an earlier look stays moved. Every look is recomputed from the
 * rounds, so the caller keeps no state; the union bound covers alarms at any look.
 */
export function historyTest(
  logValues: readonly number[],
  history: HistoryLevel,
  options: HistoryTestOptions,
): HistoryLook {
  if (logValues.length === 0) throw new RangeError('a look needs at least one round');
  for (let k = 1; k < logValues.length; k++) {
    const earlier = look(logValues.slice(0, k), history, options);
    if (earlier.call === 'moved') return { ...look(logValues, history, options), call: 'moved', movedAt: k };
  }
  const latest = look(logValues, history, options);
  return latest.call === 'moved' ? { ...latest, movedAt: latest.rounds } : latest;
}
