/** What `plan --aws` says of a repeats range: the cost and time of the fewest, expected and most rounds. */
import { isHistoryQuestion, namedQuestions, repeatRange, type NamedHorizonQuestion } from '../experiment/rounds';
import type { Spec } from '../experiment/schema';
import { formatMoney } from '../plan/cost';
import type { Plan } from '../plan/types';
import { roundsRange } from '../rounds/range';

/**
 * The assumed noise: a round's ratio varies 5% (coefficient of variation) from round to round, the
 * local run-to-run spread of bench/results/regression-local.json; AZs can add more (up to 10% seen).
 */
const ASSUMED_NOISE_CV = 0.05;

/** Lines for a spec with questions and a range of repeats; none otherwise. totalUsd: the plan's cost at max. */
export function roundsPlanLines(spec: Spec, plan: Plan, totalUsd: number | null): string[] {
  const { min, max } = repeatRange(spec);
  if (spec.questions === undefined || min === max) return [];
  const named = namedQuestions(spec);
  if (named.some((q) => isHistoryQuestion(q)))
    return [
      `Rounds ${min}-${max} (each series is tested against its own stable history after every round):`,
      `  one round when nothing moved, more only while a series is unclear; the maximum while a series has no ` +
        `stable history yet; the figure above is the maximum`,
    ];
  const questions = named
    .filter((q): q is NamedHorizonQuestion => !isHistoryQuestion(q))
    .map((q) => ({ ...q, horizons: [...q.horizons] }));
  const horizon = Math.min(...questions.flatMap((q) => q.horizons));
  // A true difference of twice the smallest horizon: clear of it, yet not at once.
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
  const roundS = plan.estimate.wallTimeS / max;
  const roundUsd = totalUsd === null ? null : totalUsd / max;
  const at = (rounds: number) => {
    const usd = roundUsd === null ? '?' : formatMoney(roundUsd * rounds, 'USD');
    return `${rounds.toFixed(rounds % 1 === 0 ? 0 : 1)} rounds ${usd}, ${((roundS * rounds) / 3600).toFixed(1)} h`;
  };
  return [
    `Rounds ${min}-${max} (the run stops once every question is resolved):`,
    `  minimum ${at(range.min)}; expected ${at(range.expected)}; maximum ${at(range.max)}`,
    `  expected assumes a round-to-round noise of ${ASSUMED_NOISE_CV * 100}% and a true ratio of ` +
      `${(trueRatio * 100).toFixed(0)}% (twice the smallest horizon, ${horizon}%); the figure above is the maximum`,
  ];
}
