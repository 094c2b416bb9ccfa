/**
 * The judge after each round (core/rounds/judge.ts): its stop rule on hand-made rounds, and, over
 * seeded simulated studies that stop as soon as they look resolved, the coverage of the final
 * interval and the share of wrong-side calls. The noise is the one the regression simulations fit
 * (bench/noise-model.ts, bench/results/regression-local.json): each variant's round lognormal with
 * the fitted run-to-run sd, independently. Bounds as in regression-simulation.test.ts: the
 * nominal rate plus four standard errors.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SeededRandom } from '../../core/random';
import { lookAlpha, roundsInterval } from '../../core/rounds/interval';
import {
  judgeRounds,
  type JudgeInput,
  type PriorNoise,
  type QuestionState,
  type RoundValues,
} from '../../core/rounds/judge';
import { normalDraw } from '../../core/rounds/normal';
import { roundsRange } from '../../core/rounds/range';
import { meanCi, sampleStddev } from '../../core/report/stats';
import { fitNoiseModel, type RecordedRun } from '../../bench/noise-model';

const RESULTS = join(__dirname, '..', '..', 'bench', 'results', 'regression-local.json');
const latest = (JSON.parse(readFileSync(RESULTS, 'utf8')) as { recordings: { runs: RecordedRun[] }[] }).recordings.at(
  -1,
)!;
const SIGMA = fitNoiseModel(latest.runs).runs.sigma;
const slack = (p: number, n: number): number => Math.max(4 * Math.sqrt((p * (1 - p)) / n), 1 / n);

const question = (horizons: number[]) => ({ id: 'q', baseline: 'b', candidate: 'c', metric: 'tps', horizons });
const input = (rounds: RoundValues[], over: Partial<JudgeInput> = {}): JudgeInput => ({
  questions: [question([5])],
  observations: { q: rounds },
  minRounds: 2,
  maxRounds: 10,
  confidence: 0.95,
  spentUsd: 0,
  nextRoundUsd: 1,
  ...over,
});
const rounds = (ratios: number[]): RoundValues[] =>
  ratios.map((r, i) => ({ round: i + 1, baseline: 100, candidate: 100 * r }));

describe('judgeRounds on hand-made rounds', () => {
  it('stops resolved when the interval lies below both bounds of the horizon', () => {
    // Act
    const out = judgeRounds(input(rounds([0.8, 0.81, 0.79, 0.8])));
    // Assert
    expect(out).toMatchObject({ decision: 'stop', reason: 'resolved' });
    expect(out.questions[0]!.sides).toEqual([
      { horizon: -5, side: 'below' },
      { horizon: 5, side: 'below' },
    ]);
    expect(out.questions[0]!.upper).toBeLessThan(0.95);
    expect(out.questions[0]!.ratio).toBeCloseTo(0.8, 2);
  });

  it('continues while an interval straddles a bound, stops at the maximum, and before passing the budget', () => {
    // Arrange
    const noisy = rounds([0.9, 1.1, 0.95]);
    // Act / Assert
    const go = judgeRounds(input(noisy));
    expect(go.decision).toBe('continue');
    expect(go.reason).toBeUndefined();
    expect(go.questions[0]!.resolved).toBe(false);
    expect(judgeRounds(input(noisy, { maxRounds: 3 }))).toMatchObject({ decision: 'stop', reason: 'max-rounds' });
    const budget = { spentUsd: 9, nextRoundUsd: 1.5, budgetUsd: 10 };
    expect(judgeRounds(input(noisy, budget))).toMatchObject({ decision: 'stop', reason: 'budget' });
    expect(judgeRounds(input(noisy, { ...budget, nextRoundUsd: 1 }))).toMatchObject({ decision: 'continue' });
  });

  it('resolves on one round when the noise is known from earlier runs', () => {
    // Act
    const out = judgeRounds(input(rounds([0.8]), { minRounds: 1, priorNoise: { logSd: 0.01, df: 30 } }));
    // Assert
    expect(out).toMatchObject({ decision: 'stop', reason: 'resolved' });
    expect(out.questions[0]!.upper).toBeLessThan(0.95);
  });

  it('never resolves on one round, nor before the minimum', () => {
    // Act
    const one = judgeRounds(input(rounds([0.5])));
    // Assert
    expect(one.decision).toBe('continue');
    expect(one.questions[0]).toMatchObject({ rounds: 1, lower: 0, upper: Number.POSITIVE_INFINITY });
    expect(judgeRounds(input(rounds([0.8, 0.8001, 0.7999]), { minRounds: 4 })).decision).toBe('continue');
  });

  it('spends alpha over the planned rounds, all of it by the maximum and none past it', () => {
    // Act
    const looks = Array.from({ length: 12 }, (_, i) => lookAlpha(0.05, i + 1, 10));
    // Assert
    expect(looks[0]).toBe(0);
    expect(looks.reduce((a, b) => a + b, 0)).toBeCloseTo(0.05, 12);
    expect(looks[10]).toBe(0);
    expect(looks.slice(1, 10).every((a) => a > 0)).toBe(true);
  });
});

/** A prior noise estimate from df earlier rounds' log ratios (sd sigma * sqrt(2)), drawn honestly. */
function priorFrom(rng: SeededRandom, sigma: number, df: number): PriorNoise {
  const xs = Array.from({ length: df + 1 }, () => sigma * (normalDraw(rng) - normalDraw(rng)));
  return { logSd: sampleStddev(xs), df };
}

/** A simulated study of one question: rounds until the judge stops; returns its final state. */
function study(rng: SeededRandom, truth: number, horizons: number[], sigma: number, maxRounds: number, priorDf = 0) {
  const obs: RoundValues[] = [];
  const priorNoise = priorDf > 0 ? priorFrom(rng, sigma, priorDf) : undefined;
  for (let round = 1; ; round++) {
    const baseline = Math.exp(sigma * normalDraw(rng));
    obs.push({ round, baseline, candidate: truth * Math.exp(sigma * normalDraw(rng)) });
    const out = judgeRounds(input(obs, { questions: [question(horizons)], maxRounds, priorNoise }));
    if (out.decision === 'stop') return { state: out.questions[0]!, reason: out.reason!, obs };
  }
}

/** A call on a bound is wrong when the truth is not on the side it says (at the bound, any call). */
const wrongSide = (s: QuestionState, truth: number): boolean =>
  s.sides.some(({ horizon, side }) => {
    const bound = 1 + horizon / 100;
    return (side === 'above' && truth <= bound) || (side === 'below' && truth >= bound);
  });

describe('optional stopping at the fitted noise: coverage and wrong-side calls (true ratio known)', () => {
  const N = 2000;
  // Horizons scaled to the fitted noise (a round's log ratio sd is about 0.5) so studies do stop early.
  const H = Math.round(100 * (1 - Math.exp(-SIGMA)));
  const cases: [string, number][] = [
    ['no difference', 1],
    ['exactly at the horizon', 1 - H / 100],
    ['well past the horizon', Math.exp(-3 * SIGMA)],
  ];

  it.each(
    cases.flatMap(([name, truth]) => [
      [name, truth, 0],
      [name, truth, 30],
    ]),
  )(
    '%s (%f), prior noise df %i: the final 95%% interval covers the truth, wrong-side calls at most 5%%',
    (_, truth, priorDf) => {
      // Arrange
      const rng = new SeededRandom(3800 + Math.round(truth * 1000) + priorDf);
      let covered = 0;
      let wrong = 0;
      let early = 0;
      // Act
      for (let t = 0; t < N; t++) {
        const { state, reason } = study(rng, truth, [H], SIGMA, 10, priorDf);
        if (state.lower <= truth && truth <= state.upper) covered++;
        if (wrongSide(state, truth)) wrong++;
        if (reason === 'resolved') early++;
      }
      // Assert
      expect(covered / N).toBeGreaterThanOrEqual(0.95 - slack(0.05, N));
      expect(wrong / N).toBeLessThanOrEqual(0.05 + slack(0.05, N));
      // Well past the horizon most studies stop resolved before the maximum: the rule has power.
      if (truth < 0.5) expect(early / N).toBeGreaterThan(priorDf > 0 ? 0.9 : 0.5);
    },
  );

  it('a fixed-level t interval under the same stopping is too narrow: why the looks spend alpha', () => {
    // Arrange: stop at the first round from 2 whose plain 95% t interval clears the bounds
    const rng = new SeededRandom(3899);
    const truth = 1 - H / 100;
    let missed = 0;
    // Act
    for (let t = 0; t < N; t++) {
      const logs: number[] = [];
      for (let n = 1; n <= 10; n++) {
        logs.push(Math.log(truth) + SIGMA * (normalDraw(rng) - normalDraw(rng)));
        if (n < 2) continue;
        const ci = meanCi(logs);
        const clear = [Math.log(1 - H / 100), Math.log(1 + H / 100)].every((b) => ci.low > b || ci.high < b);
        if (clear || n === 10) {
          if (!(ci.low <= Math.log(truth) && Math.log(truth) <= ci.high)) missed++;
          break;
        }
      }
    }
    // Assert
    expect(missed / N).toBeGreaterThan(0.05 + slack(0.05, N));
  });

  it('the interval at every look holds the truth at once in at least 95% of studies run to the maximum', () => {
    // Arrange
    const rng = new SeededRandom(3901);
    let allCovered = 0;
    // Act
    for (let t = 0; t < N; t++) {
      const logs = Array.from({ length: 10 }, () => SIGMA * (normalDraw(rng) - normalDraw(rng)));
      const ok = logs.every((_, k) => {
        const ci = roundsInterval(logs.slice(0, k + 1), 0.95, 10);
        return ci.lower <= 1 && 1 <= ci.upper;
      });
      if (ok) allCovered++;
    }
    // Assert
    expect(allCovered / N).toBeGreaterThanOrEqual(0.95 - slack(0.05, N));
  });
});

describe('roundsRange', () => {
  it('is seeded, within the minimum and maximum, and fewer rounds for a larger difference', () => {
    // Arrange
    const a = { questions: [question([5])], minRounds: 2, maxRounds: 10, confidence: 0.95, noiseCv: 0.02 };
    // Act
    const far = roundsRange({ ...a, trueRatio: 0.7, trials: 300 });
    const near = roundsRange({ ...a, trueRatio: 0.97, trials: 300 });
    // Assert
    expect(roundsRange({ ...a, trueRatio: 0.7, trials: 300 })).toEqual(far);
    expect(far).toMatchObject({ min: 2, max: 10 });
    expect(far.expected).toBeGreaterThanOrEqual(2);
    expect(near.expected).toBeLessThanOrEqual(10);
    expect(far.expected).toBeLessThan(near.expected);
  });
});
