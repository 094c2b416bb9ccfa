/**
 * How many rounds a study may take: the minimum, the maximum, and the mean over seeded simulated
 * studies where every question's per-round ratio is lognormal about an assumed truth.
 */
import { SeededRandom } from '../random';
import { judgeRounds, type PriorNoise, type Question, type RoundValues } from './judge';
import { normalDraw } from './normal';

export interface RangeAssumption {
  questions: Question[];
  minRounds: number;
  maxRounds: number;
  confidence: number;
  /** Coefficient of variation of one round's ratio candidate/baseline. */
  noiseCv: number;
  /** The true geometric-mean ratio every question is assumed to have. */
  trueRatio: number;
  /** Noise known from earlier runs, as the judge would be given it. */
  priorNoise?: PriorNoise;
  trials?: number;
  seed?: number;
}

/** The rounds one simulated study runs before the judge stops it. */
function simulatedRounds(a: RangeAssumption, rng: SeededRandom): number {
  const sigma = Math.sqrt(Math.log(1 + a.noiseCv ** 2));
  const observations: Record<string, RoundValues[]> = Object.fromEntries(a.questions.map((q) => [q.id, []]));
  for (let round = 1; ; round++) {
    for (const q of a.questions) {
      const candidate = a.trueRatio * Math.exp(sigma * normalDraw(rng));
      observations[q.id]!.push({ round, baseline: 1, candidate });
    }
    const input = { ...a, observations, spentUsd: 0, nextRoundUsd: 0 };
    if (judgeRounds(input).decision === 'stop') return round;
  }
}

export function roundsRange(a: RangeAssumption): { min: number; expected: number; max: number } {
  const rng = new SeededRandom(a.seed ?? 1);
  const trials = a.trials ?? 2000;
  let total = 0;
  for (let t = 0; t < trials; t++) total += simulatedRounds(a, rng);
  const first = a.priorNoise ? 1 : 2;
  return { min: Math.max(a.minRounds, Math.min(first, a.maxRounds)), expected: total / trials, max: a.maxRounds };
}
