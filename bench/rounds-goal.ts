/**
 * Issue 38's goal by simulation: rounds until each question is resolved, against today's fixed
 * repeats, for S1 (experiments/graviton-vs-intel.json) and the nightly. Costs are the plan's own
 * prices (core/plan/cost.ts, as `plan --aws` prints): a round costs what one more repeat adds.
 *
 * Noise assumed: one round's ratio candidate/baseline lognormal with CV --cv (default 5%). S1's
 * author saw AZ a and AZ c disagree by up to 10%; read as two sds of a ratio that gives 5%. The
 * local recorded runs (bench/results/regression-local.json) show far more (a shared machine).
 *
 * The nightly against its own history (core/rounds/history-test.ts): every (variant, step) series'
 * TPS tested after each round against --history-runs stable runs of the same noise (one variant's
 * round: log sd of the ratio's over sqrt(2)), at most --history-max-rounds rounds.
 */
import { maxRepeats } from '../core/experiment/rounds';
import '../core/polyfills';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { findRepoRoot } from '../core/cli/tool-info';
import { loadSpecFile } from '../core/experiment/validate';
import { estimatePlanCost, loadPrices } from '../core/plan/cost';
import { runsPerMonth } from '../core/plan/nightly-cost';
import { planRun } from '../core/plan/plan';
import { SeededRandom } from '../core/random';
import { meanCi, sampleStddev, summarize, welchRatioCi } from '../core/report/stats';
import {
  judgeRounds,
  type PriorNoise,
  type Question,
  type QuestionState,
  type RoundValues,
  type StopReason,
} from '../core/rounds/judge';
import { roundsRange } from '../core/rounds/range';
import { normalDraw } from '../core/rounds/normal';
import { HISTORY_TEST_DEFAULTS } from '../core/rounds/history-test';
import { simulateNights } from '../core/rounds/history-simulation';
import { fitNoiseModel, type RecordedRun } from './noise-model';

const REPO = findRepoRoot(__dirname);
const RESULTS = join(REPO, 'bench', 'results', 'rounds-goal.json');
const { values } = parseArgs({
  options: {
    cv: { type: 'string', default: '0.05' },
    'max-rounds': { type: 'string', default: '6' },
    trials: { type: 'string', default: '4000' },
    'prior-df': { type: 'string', default: '30' },
    'history-runs': { type: 'string', default: '30' },
    'history-max-rounds': { type: 'string', default: '3' },
    record: { type: 'boolean', default: false },
  },
});
const CV = Number(values.cv);
const MAX = Number(values['max-rounds']);
const TRIALS = Number(values.trials);
const SIGMA = Math.sqrt(Math.log(1 + CV ** 2));
/** Degrees of freedom of the noise known from earlier runs (a month of nightly runs: about 30). */
const PRIOR_DF = Number(values['prior-df']);
const HISTORY_RUNS = Number(values['history-runs']);
const HISTORY_MAX = Number(values['history-max-rounds']);
/** Today's nightly: experiments/nightly-regression.json's repeats before it ran rounds. */
const NIGHTLY_FIXED_REPEATS = 2;

/** Fixed cost and per-round cost of an experiment, from its plan priced at 1 and 2 repeats. */
function roundPrices(
  file: string,
  todayRepeats?: number,
): { fixed: number; perRound: number; today: number; repeats: number } {
  const { spec, scripts } = loadSpecFile(join(REPO, 'experiments', file), join(REPO, 'client', 'workloads'));
  const prices = loadPrices(REPO);
  const at = (repeats: number) =>
    estimatePlanCost(planRun({ ...spec, repeats }, { backend: 'aws', scripts }), prices).total!;
  const one = at(1);
  const perRound = at(2) - one;
  // Today's fixed count: the most rounds the experiment may run, unless it already runs rounds.
  const today = todayRepeats ?? maxRepeats(spec);
  return { fixed: one - perRound, perRound, today: at(today), repeats: today };
}

interface Outcome {
  rounds: number;
  covered: number;
  wrongSide: number;
  calledBelow: number;
  /** The final interval lies wholly below 1, or above: the call `compare` makes. */
  below1: number;
  above1: number;
  /** Why the studies stopped, as shares. */
  reasons: Record<StopReason, number>;
}

/** A call on a bound is wrong when the truth is not on the side it says (at the bound, any call). */
function wrongSide(s: QuestionState, truth: number): boolean {
  return s.sides.some(({ horizon, side }) => {
    const b = 1 + horizon / 100;
    return (side === 'above' && truth <= b) || (side === 'below' && truth >= b);
  });
}

/** Seeded studies of questions sharing one true ratio, each round the judge's decision. */
function simulate(questions: Question[], truth: number, withPrior: boolean, seed: number): Outcome {
  const rng = new SeededRandom(seed);
  const total = { rounds: 0, covered: 0, wrongSide: 0, calledBelow: 0, below1: 0, above1: 0 };
  const reasons: Record<StopReason, number> = { resolved: 0, 'max-rounds': 0, budget: 0 };
  for (let t = 0; t < TRIALS; t++) {
    // The prior is itself an estimate: drawn from PRIOR_DF earlier rounds of the same noise.
    const earlier = Array.from({ length: PRIOR_DF + 1 }, () => SIGMA * normalDraw(rng));
    const priorNoise: PriorNoise | undefined =
      withPrior && PRIOR_DF > 0 ? { logSd: sampleStddev(earlier), df: PRIOR_DF } : undefined;
    const obs: Record<string, RoundValues[]> = Object.fromEntries(questions.map((q) => [q.id, []]));
    for (let round = 1; ; round++) {
      for (const q of questions)
        obs[q.id]!.push({ round, baseline: 1, candidate: truth * Math.exp(SIGMA * normalDraw(rng)) });
      const out = judgeRounds({
        questions,
        observations: obs,
        minRounds: 1,
        maxRounds: MAX,
        priorNoise,
        confidence: 0.95,
        spentUsd: 0,
        nextRoundUsd: 0,
      });
      if (out.decision === 'continue') continue;
      total.rounds += round;
      reasons[out.reason!]++;
      for (const s of out.questions) {
        if (s.lower <= truth && truth <= s.upper) total.covered++;
        if (wrongSide(s, truth)) total.wrongSide++;
        if (s.sides.some((x) => x.horizon < 0 && x.side === 'below')) total.calledBelow++;
        if (s.upper < 1) total.below1++;
        if (s.lower > 1) total.above1++;
      }
      break;
    }
  }
  const n = TRIALS * questions.length;
  const share = (k: keyof typeof total) => total[k] / n;
  return {
    rounds: total.rounds / TRIALS,
    covered: share('covered'),
    wrongSide: share('wrongSide'),
    calledBelow: share('calledBelow'),
    below1: share('below1'),
    above1: share('above1'),
    reasons: {
      resolved: reasons.resolved / TRIALS,
      'max-rounds': reasons['max-rounds'] / TRIALS,
      budget: reasons.budget / TRIALS,
    },
  };
}

/**
 * Today's compare of tonight's repeats against last night's: Welch's ratio interval at 95%,
 * each variant's run-to-run noise half the round ratio's variance. Alarm: the interval excludes 1.
 */
function todaysCompare(repeats: number, truth: number, seed: number): { below1: number; above1: number } {
  const rng = new SeededRandom(seed);
  const sd = SIGMA / Math.SQRT2;
  const side = (level: number) =>
    summarize(Array.from({ length: repeats }, () => level * Math.exp(sd * normalDraw(rng))));
  let below1 = 0;
  let above1 = 0;
  for (let t = 0; t < TRIALS; t++) {
    const ci = welchRatioCi(side(truth), side(1));
    if (ci.high < 1) below1++;
    if (ci.low > 1) above1++;
  }
  return { below1: below1 / TRIALS, above1: above1 / TRIALS };
}

/** Coverage of today's fixed-n 95% t interval on the per-round log ratios. */
function fixedCoverage(n: number, seed: number): number {
  const rng = new SeededRandom(seed);
  let hits = 0;
  for (let t = 0; t < TRIALS; t++) {
    const ci = meanCi(Array.from({ length: n }, () => SIGMA * normalDraw(rng)));
    if (ci.low <= 0 && 0 <= ci.high) hits++;
  }
  return hits / TRIALS;
}

const questionsOf = (ids: string[]): Question[] =>
  ids.map((id) => ({ id, baseline: 'r5', candidate: 'r6g', metric: 'tps', horizons: [5] }));

function main(): void {
  const s1 = roundPrices('graviton-vs-intel.json');
  const workloads = ['read-only', 'write-only', 'read-write'];
  const s1Questions = questionsOf(['a', 'b'].flatMap((az) => workloads.map((w) => `${az}/${w}`)));
  const s1Figures = (o: Outcome) => {
    const usd = s1.fixed + o.rounds * s1.perRound;
    return {
      expectedRounds: o.rounds,
      expectedUsd: usd,
      shareOfToday: usd / s1.today,
      goalMet: usd <= s1.today / 2,
      coverage: o.covered,
      wrongSide: o.wrongSide,
      resolvedBelow: o.calledBelow,
      stopped: o.reasons,
    };
  };
  // The nightly ran 2 fixed repeats before it was judged against its history after each round.
  const nightly = roundPrices('nightly-regression.json', NIGHTLY_FIXED_REPEATS);
  const perMonth = runsPerMonth('cron(0 2 * * ? *)')!;
  const monthlyToday = perMonth * nightly.today;
  const nightlyQuestions = questionsOf(['read-only', 'read-write', 'write-only']);
  const nightlyFigures = (withPrior: boolean) => {
    const quiet = simulate(nightlyQuestions, 1, withPrior, 1);
    const moved = simulate(nightlyQuestions, 0.9, withPrior, 90);
    const usd = perMonth * (nightly.fixed + quiet.rounds * nightly.perRound);
    return {
      quietExpectedRounds: quiet.rounds,
      monthlyUsd: usd,
      shareOfToday: usd / monthlyToday,
      goalMet: usd <= 0.6 * monthlyToday,
      falseAlarm: quiet.below1 + quiet.above1,
      detectionAt90Pct: moved.below1,
      movedExpectedRounds: moved.rounds,
      stoppedQuiet: quiet.reasons,
    };
  };
  const series = nightlySeries();
  const againstHistory = () => {
    const night = (trueRatio: number, seed: number, shiftedSeries = series) =>
      simulateNights({
        series,
        shiftedSeries,
        trueRatio,
        logSd: SIGMA / Math.SQRT2,
        historyRuns: HISTORY_RUNS,
        test: { maxRounds: HISTORY_MAX },
        trials: TRIALS,
        seed,
      });
    const quiet = night(1, 11);
    const moved = night(0.9, 12);
    // The harder case: one series drops 10%, the other five stay, so most nights stop at round one.
    const alone = night(0.9, 13, 1);
    const usd = perMonth * (nightly.fixed + quiet.expectedRounds * nightly.perRound);
    return {
      series,
      historyRuns: HISTORY_RUNS,
      maxRounds: HISTORY_MAX,
      test: HISTORY_TEST_DEFAULTS,
      quietExpectedRounds: quiet.expectedRounds,
      quietMoreThanOneRound: quiet.moreThanOneRound,
      monthlyUsd: usd,
      shareOfToday: usd / monthlyToday,
      goalMet: usd <= 0.6 * monthlyToday,
      falseAlarm: quiet.movedShare,
      detectionAt90Pct: moved.movedBelowShare,
      movedExpectedRounds: moved.expectedRounds,
      oneSeriesAt90Pct: {
        detection: alone.movedBelowShare,
        othersFalseAlarm: alone.unshiftedMovedShare,
        expectedRounds: alone.expectedRounds,
      },
    };
  };
  const today = { falseAlarm: 0, detectionAt90Pct: todaysCompare(nightly.repeats, 0.9, 7).below1 };
  const q = todaysCompare(nightly.repeats, 1, 8);
  today.falseAlarm = q.below1 + q.above1;
  const entry = {
    recordedAt: new Date().toISOString(),
    host: { cpus: cpus().length, node: process.version },
    assumption: {
      roundRatioCv: CV,
      maxRounds: MAX,
      confidence: 0.95,
      horizonPct: 5,
      priorDf: PRIOR_DF,
      trials: TRIALS,
    },
    localFittedRunSigma: localSigma(),
    s1: {
      prices: s1,
      trueRatio: 0.92,
      // A lower bound for any method: even with the noise known exactly, a 95% interval about the truth
      // lies below the 95% horizon only after this many rounds (the half-width 1.96 sigma / sqrt(n)
      // under the gap ln(0.95 / 0.92)). Half of today's cost buys 1.5 rounds.
      roundsToClearHorizonAtKnownNoise: Math.ceil(((1.96 * SIGMA) / Math.log(0.95 / 0.92)) ** 2),
      fixedRepeatsCoverage: fixedCoverage(s1.repeats, 3),
      // What `plan --aws` would print: rounds from the minimum to the maximum, expected at this noise.
      roundsRange: roundsRange({
        questions: s1Questions,
        minRounds: 1,
        maxRounds: MAX,
        confidence: 0.95,
        noiseCv: CV,
        trueRatio: 0.92,
        trials: 1000,
      }),
      ownRoundsOnly: s1Figures(simulate(s1Questions, 0.92, false, 92)),
      withPriorNoise: s1Figures(simulate(s1Questions, 0.92, true, 93)),
    },
    nightly: {
      prices: nightly,
      runsPerMonth: perMonth,
      monthlyTodayUsd: monthlyToday,
      todaysCompare: today,
      ownRoundsOnly: nightlyFigures(false),
      withPriorNoise: nightlyFigures(true),
      // Per series, as todaysCompare: the false alarm and detection of one (variant, step) TPS series.
      againstHistory: againstHistory(),
    },
  };
  process.stdout.write(`${JSON.stringify(entry, null, 1)}\n`);
  if (values.record) record(entry);
}

/** The nightly's series a night judges: each variant's TPS in each step. */
function nightlySeries(): number {
  const { spec } = loadSpecFile(
    join(REPO, 'experiments', 'nightly-regression.json'),
    join(REPO, 'client', 'workloads'),
  );
  const steps = spec.workloads.reduce((n, w) => n + w.threads.length, 0);
  return spec.variants.length * steps;
}

function localSigma(): number {
  const file = join(REPO, 'bench', 'results', 'regression-local.json');
  const runs = (JSON.parse(readFileSync(file, 'utf8')) as { recordings: { runs: RecordedRun[] }[] }).recordings.at(-1)!;
  return fitNoiseModel(runs.runs).runs.sigma;
}

function record(entry: object): void {
  const existing = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as { recordings: object[] })
    : { recordings: [] };
  const out = {
    benchmark: 'rounds-goal',
    about: 'bench/rounds-goal.ts: expected rounds and cost of S1 and the nightly judged after each round, simulated',
    recordings: [...existing.recordings, entry],
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(out, null, 1)}\n`);
  process.stdout.write(`recorded in ${RESULTS}\n`);
}

main();
