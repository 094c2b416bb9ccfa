/** What `plan --aws` says of a repeats range: the cost and time of the fewest, expected and most rounds. */
import { isHistoryQuestion, namedQuestions, repeatRange, type NamedHorizonQuestion } from '../experiment/rounds';
import type { Spec } from '../experiment/schema';
import { formatMoney } from '../plan/cost';
import type { Plan } from '../plan/types';
import { roundsRange } from '../rounds/range';
import { simulateNights } from '../rounds/history-simulation';

/**
 * A round's ratio is assumed to vary 5% from round to round.
 * That is the local run-to-run spread of bench/results/regression-local.json. AZs can add up to 10%.
 */
const ASSUMED_NOISE_CV = 0.05;

/** A history question assumes a month of nightly runs. */
const HISTORY_RUNS = 30;
const HISTORY_LOG_SD = ASSUMED_NOISE_CV / Math.SQRT2;

/** Expected rounds of a night when nothing moved, with every series tested against its history. */
function quietNightRounds(spec: Spec, maxRounds: number): number {
  const steps = spec.workloads.reduce((n, w) => n + w.threads.length * Math.max(1, w.rates.length), 0);
  const figures = simulateNights({
    series: spec.variants.length * steps,
    trueRatio: 1,
    logSd: HISTORY_LOG_SD,
    historyRuns: HISTORY_RUNS,
    test: { maxRounds },
    trials: 400,
    seed: 1,
  });
  return figures.expectedRounds;
}

/**
 * The share of the plan's maximum cost a night when nothing moved is expected to cost.
 * Null unless the spec's questions are against its history.
 */
export function quietNightShare(spec: Spec): number | null {
  const { min, max } = repeatRange(spec);
  if (spec.questions === undefined || min === max || !namedQuestions(spec).some((q) => isHistoryQuestion(q)))
    return null;
  return Math.max(min, quietNightRounds(spec, max)) / max;
}

/** Lines for a spec with questions and a range of repeats. totalUsd is the plan's cost at max. */
export function roundsPlanLines(spec: Spec, plan: Plan, totalUsd: number | null): string[] {
  const { min, max } = repeatRange(spec);
  if (spec.questions === undefined || min === max) return [];
  const named = namedQuestions(spec);
  const roundS = plan.estimate.wallTimeS / max;
  const roundUsd = totalUsd === null ? null : totalUsd / max;
  const at = (rounds: number) => {
    const usd = roundUsd === null ? '?' : formatMoney(roundUsd * rounds, 'USD');
    const n = rounds.toFixed(rounds % 1 === 0 ? 0 : 1);
    return `${n} round${n === '1' ? '' : 's'} ${usd}, ${((roundS * rounds) / 3600).toFixed(1)} h`;
  };
  if (named.some((q) => isHistoryQuestion(q))) {
    const quiet = quietNightRounds(spec, max);
    return [
      `Rounds ${min}-${max} (each series is tested against its own stable history after every round):`,
      `  minimum ${at(min)}; expected on a night when nothing moved ${at(Math.max(min, quiet))}; maximum ${at(max)}`,
      `  one round when nothing moved, more only while a series is unclear; the maximum while a series has no ` +
        `stable history yet. Expected assumes ${HISTORY_RUNS} stable runs and a run-to-run noise of ` +
        `${(HISTORY_LOG_SD * 100).toFixed(1)}% a series; the figure above is the maximum`,
    ];
  }
  const questions = named
    .filter((q): q is NamedHorizonQuestion => !isHistoryQuestion(q))
    .map((q) => ({ ...q, horizons: [...q.horizons] }));
  const horizon = Math.min(...questions.flatMap((q) => q.horizons));
  // A true difference of twice the smallest horizon is clear of it, yet not at once.
  const trueRatio = Math.max(0.5, 1 - (2 * horizon) / 100);
  const range = roundsRange({
    questions,
    minRounds: min,
    maxRounds: max,
    confidence: 0.95,
    noiseCv: ASSUMED_NOISE_CV,
    trueRatio,
    trials: 400,
  });
  return [
    `Rounds ${min}-${max} (the run stops once every question is resolved):`,
    `  minimum ${at(range.min)}; expected ${at(range.expected)}; maximum ${at(range.max)}`,
    `  expected assumes a round-to-round noise of ${ASSUMED_NOISE_CV * 100}% and a true ratio of ` +
      `${(trueRatio * 100).toFixed(0)}% (twice the smallest horizon, ${horizon}%); the figure above is the maximum`,
  ];
}
