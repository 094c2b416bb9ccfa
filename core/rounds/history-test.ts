/**
 * Tonight's rounds of one series tested against the series' own stable history, after every round.
 * It stops "quiet" once tonight is clearly within the noise, and "moved" once clearly beyond it.
 * Otherwise it runs another round, and the last look decides.
 *
 * The method is a two-sided group-sequential test with futility stopping.
 * See Jennison and Turnbull, "Group Sequential Methods with Applications to Clinical Trials", chapters 2 and 5.
 * After round k, z = (mean of tonight's log values - history log mean) / (sd · sqrt(1/k + 1/n)).
 * Tonight is independent of the history, so under no change z is exactly Student's t with the history's df.
 * Each look's alarm bound spends Pocock-type alpha, so by the union bound all looks alarm at most alpha.
 * The futility bound is non-binding, so the type-I error stays at most alpha however it is set.
 * It sets the cost instead. A quiet night stops after one round unless |z| falls in the grey zone.
 */
import { mean, studentTQuantile } from '../stats/student-t';
import { lookAlpha } from './interval';

/** A series' stable history on the log scale. */
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
 * alpha 0.022 is today's compare's false-alarm rate. See bench/rounds-goal.ts.
 * With futility 0.03, a first look continues when |z| is above about 2.2.
 * So a quiet nightly of six series runs one round in about nine nights of ten.
 */
export const HISTORY_TEST_DEFAULTS = { alpha: 0.022, futility: 0.03 } as const;

type HistoryCall = 'quiet' | 'moved' | 'continue';

export interface HistoryLook {
  readonly rounds: number;
  /** Tonight's geometric mean over the history's. */
  readonly ratio: number;
  readonly z: number;
  readonly futilityBound: number;
  readonly alarmBound: number;
  readonly call: HistoryCall;
  /** The round whose look first alarmed. An alarm once sounded stands. */
  readonly movedAt?: number;
}

/** The bounds on |z| of the look after round k. @internal exported for its tests (a test seam) */
export function historyBounds(k: number, df: number, options: HistoryTestOptions): { futility: number; alarm: number } {
  const alpha = options.alpha ?? HISTORY_TEST_DEFAULTS.alpha;
  const alarm = studentTQuantile(1 - lookAlpha(alpha, k, options.maxRounds, 1) / 2, df);
  // At the last look nothing is left to wait for, so what is not an alarm is quiet.
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
 * The latest look after tonight's rounds, except that a series that alarmed earlier stays moved.
 * Every look is recomputed from the rounds, so the caller keeps no state.
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
