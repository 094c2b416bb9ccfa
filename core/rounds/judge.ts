/**
 * The judge after every round: each question's ratio and repeated confidence interval.
 * It says which side of each horizon the ratio lies on, and whether to run another round.
 */
import { roundsInterval, type PriorNoise } from './interval';

export type { PriorNoise } from './interval';

export interface Question {
  id: string;
  baseline: string;
  candidate: string;
  metric: string;
  /** Symmetric relative differences in percent. So [5] means the ratios 95% and 105%. */
  horizons: number[];
  /** This question's own prior noise, when it differs from the input's. */
  priorNoise?: PriorNoise;
}
/** One round's metric value for each variant. */
export interface RoundValues {
  round: number;
  baseline: number;
  candidate: number;
}
export interface JudgeInput {
  questions: Question[];
  /** By question id, the rounds so far. */
  observations: Record<string, RoundValues[]>;
  minRounds: number;
  maxRounds: number;
  /** Such as 0.95. */
  confidence: number;
  spentUsd: number;
  nextRoundUsd: number;
  budgetUsd?: number;
  /** Noise known from earlier runs, which lets one round resolve. */
  priorNoise?: PriorNoise;
}
type Side = 'above' | 'below' | 'unclear';
export interface QuestionState {
  id: string;
  rounds: number;
  /** Candidate/baseline, and its interval. */
  ratio: number;
  lower: number;
  upper: number;
  resolved: boolean;
  /** One entry per bound. Horizon -h is the ratio 1 - h/100, and +h the ratio 1 + h/100. */
  sides: { horizon: number; side: Side }[];
}
export type StopReason = 'resolved' | 'max-rounds' | 'budget';
export interface JudgeOutput {
  decision: 'continue' | 'stop';
  reason?: StopReason;
  questions: QuestionState[];
}

/** Where the interval lies against a ratio bound: wholly above, wholly below, or across it. */
function sideOf(lower: number, upper: number, bound: number): Side {
  if (lower > bound) return 'above';
  if (upper < bound) return 'below';
  return 'unclear';
}

/** A question's state after its rounds so far. */
function judgeQuestion(q: Question, rounds: readonly RoundValues[], input: JudgeInput): QuestionState {
  const logs = rounds.map((r) => Math.log(r.candidate / r.baseline));
  const prior = q.priorNoise ?? input.priorNoise;
  const { ratio, lower, upper } = roundsInterval(logs, input.confidence, input.maxRounds, prior);
  // Each horizon h gives two bounds, and it is answered when both are clear.
  const sides = q.horizons.flatMap((h) => [
    { horizon: -h, side: sideOf(lower, upper, 1 - h / 100) },
    { horizon: h, side: sideOf(lower, upper, 1 + h / 100) },
  ]);
  const resolved = upper < Number.POSITIVE_INFINITY && sides.every((s) => s.side !== 'unclear');
  return { id: q.id, rounds: rounds.length, ratio, lower, upper, resolved, sides };
}

export function judgeRounds(input: JudgeInput): JudgeOutput {
  const questions = input.questions.map((q) => judgeQuestion(q, input.observations[q.id] ?? [], input));
  const rounds = Math.min(...questions.map((q) => q.rounds));
  const stop = (reason: StopReason): JudgeOutput => ({ decision: 'stop', reason, questions });
  if (rounds >= input.minRounds && questions.every((q) => q.resolved)) return stop('resolved');
  if (rounds >= input.maxRounds) return stop('max-rounds');
  if (input.budgetUsd !== undefined && input.spentUsd + input.nextRoundUsd > input.budgetUsd) return stop('budget');
  return { decision: 'continue', questions };
}
