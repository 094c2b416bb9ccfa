/** JudgeRound judges the questions on the run's step rows after each round, then runs another round or stops. */
import type { RunContext } from '../../backend';
import {
  isHistoryQuestion,
  type NamedHistoryQuestion,
  type NamedHorizonQuestion,
  type NamedQuestion,
} from '../../experiment/rounds';
import { lakeKeys, type StepRow } from '../../lake/rows';
import { historyRound } from './history-round';
import type { HistorySeriesState, QuestionState, StopReason } from './round-types';
import { readJson } from './lake-json';
import { need } from './need';
import { roundValues } from './round-values';
import type { TaskDeps } from './types';
import { roundsSpan } from '../../experiment/rounds';

/** What PlanRun writes for a run with questions. */
export interface RoundsConfig {
  readonly questions: readonly NamedQuestion[];
  readonly minRounds: number;
  readonly maxRounds: number;
  readonly confidence: number;
  /** budget.maxUsd, on AWS only, since a local run costs nothing. */
  readonly budgetUsd?: number;
  /** Each round's estimated cost, priced as the plan prices. */
  readonly roundUsd: readonly number[];
  /** Each round's cell Map items, in plan order. */
  readonly items: readonly (readonly number[])[];
  /** Each variant's $/h, for the *_per_usd metrics. */
  readonly hourlyUsd: Readonly<Record<string, number>>;
}

/** What JudgeRound last decided. FinishRun and the report read it. */
export interface RoundsJudged {
  readonly rounds: number;
  readonly minRounds: number;
  readonly maxRounds: number;
  readonly decision: 'continue' | 'stop';
  readonly reason?: StopReason;
  readonly spentUsd: number;
  readonly nextRoundUsd: number;
  readonly questions: readonly QuestionState[];
  /** Questions against history: each series' call. */
  readonly history?: readonly HistorySeriesState[];
}

export interface JudgeRoundEvent {
  readonly run: RunContext;
  readonly round: number;
  readonly maxConcurrency: number;
}

/** The same shape as PlanRun's output, so RunCells runs the next round from it. */
export interface JudgeRoundOutput {
  readonly run: RunContext;
  readonly round: number;
  readonly items: readonly number[];
  readonly maxConcurrency: number;
  readonly decision: 'continue' | 'stop';
  /** One line for the progress: what is resolved and what the next round would cost. */
  readonly summary: string;
}

/** The injected judge's answer for questions between variants. */
function judgeHorizons(
  deps: TaskDeps,
  config: RoundsConfig,
  rows: readonly StepRow[],
  round: number,
  spentUsd: number,
  nextRoundUsd: number,
): { decision: 'continue' | 'stop'; reason?: StopReason; questions: QuestionState[] } {
  const questions = config.questions.filter((q): q is NamedHorizonQuestion => !isHistoryQuestion(q));
  const observations = Object.fromEntries(questions.map((q) => [q.id, roundValues(rows, q, round, config.hourlyUsd)]));
  if (deps.judgeRounds === undefined) throw new Error('judge-round: these deps were built without the judge');
  return deps.judgeRounds({
    questions: questions.map((q) => ({ ...q, horizons: [...q.horizons] })),
    observations,
    minRounds: config.minRounds,
    maxRounds: config.maxRounds,
    confidence: config.confidence,
    spentUsd,
    nextRoundUsd,
    ...(config.budgetUsd !== undefined ? { budgetUsd: config.budgetUsd } : {}),
  });
}

async function stepRows(deps: TaskDeps, run: RunContext): Promise<StepRow[]> {
  const keys = (await deps.backend.lake.list(lakeKeys.runTablePrefix('steps', run.dt, run.runId))).filter((k) =>
    k.endsWith('.jsonl'),
  );
  const rows: StepRow[] = [];
  for (let i = 0; i < keys.length; i += 16) {
    const texts = await Promise.all(keys.slice(i, i + 16).map((k) => deps.backend.lake.get(k)));
    for (const text of texts)
      for (const line of (text ?? '').split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line) as StepRow);
  }
  return rows;
}

const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '?');

const STOP_TEXT: Record<StopReason, string> = {
  resolved: 'every question resolved',
  'max-rounds': 'at the maximum rounds, not every question resolved',
  budget: 'the next round would pass budget.maxUsd',
};

/**
 * The manifest's count of resolved questions, each named with the bounds it asks about, so a reader who
 * never saw the experiment file knows what "resolved" was asked of. No figures: the judge's interval
 * (over the rounds' ratios) is not the report's (Welch over the repeats), and one ratio gets one interval.
 * "0 of 2 questions resolved (b-vs-a-tps, c-vs-a-tps: is the ratio clear of 95% and of 105%?)"
 */
export function questionsResolvedText(questions: readonly QuestionState[]): string {
  const resolved = questions.filter((q) => q.resolved).length;
  const bounds = (q: QuestionState) =>
    q.sides.map((s) => pct(1 + s.horizon / 100).replace('.0%', '%')).join(' and of ');
  const byBounds = new Map<string, string[]>();
  for (const q of questions) byBounds.set(bounds(q), [...(byBounds.get(bounds(q)) ?? []), q.id]);
  const each = [...byBounds].map(([b, ids]) => `${ids.join(', ')}: is the ratio's interval clear of ${b}?`);
  const head = `${resolved} of ${questions.length} question${questions.length === 1 ? '' : 's'} resolved`;
  return each.length > 0 ? `${head} (${each.join('; ')})` : head;
}

/** "tps-vs-history: 6 series, 5 quiet, 1 unclear (write-only t16 [r6g-large] 96.1%, z -2.31)" */
function historySummary(states: readonly HistorySeriesState[]): string {
  const byQuestion = new Map<string, HistorySeriesState[]>();
  for (const s of states) byQuestion.set(s.question, [...(byQuestion.get(s.question) ?? []), s]);
  return [...byQuestion]
    .map(([id, ss]) => {
      const count = (call: HistorySeriesState['call'], text: string) => {
        const n = ss.filter((s) => s.call === call).length;
        return n > 0 ? [`${n} ${text}`] : [];
      };
      const named = ss
        .filter((s) => s.call !== 'quiet')
        .map((s) =>
          s.call === 'no-history' ? `${s.series}: ${s.why}` : `${s.series} ${pct(s.ratio)}, z ${s.z.toFixed(2)}`,
        );
      const counts = [
        ...count('quiet', 'quiet'),
        ...count('moved', 'MOVED'),
        ...count('continue', 'unclear'),
        ...count('no-history', 'without a stable history'),
      ];
      return `${id}: ${ss.length} series, ${counts.join(', ')}${named.length > 0 ? ` (${named.join('; ')})` : ''}`;
    })
    .join('; ');
}

/** "round 2 of 2-10: a-vs-b-tps 92.1% (88.0%-96.2%) resolved; next round $4.12" */
function roundsSummary(j: RoundsJudged): string {
  if (j.history !== undefined) {
    const next =
      j.decision === 'continue' ? `next round $${j.nextRoundUsd.toFixed(2)}` : `stopped: ${historyStopText(j)}`;
    return `round ${j.rounds} of ${roundsSpan(j.minRounds, j.maxRounds)}: ${historySummary(j.history)}; ${next}`;
  }
  const questions = j.questions
    .map((q) => `${q.id} ${pct(q.ratio)} (${pct(q.lower)}-${pct(q.upper)}) ${q.resolved ? 'resolved' : 'unclear'}`)
    .join('; ');
  const next =
    j.decision === 'continue' ? `next round $${j.nextRoundUsd.toFixed(2)}` : `stopped: ${STOP_TEXT[j.reason!]}`;
  return `round ${j.rounds} of ${roundsSpan(j.minRounds, j.maxRounds)}: ${questions}; ${next}`;
}

/** Why the rounds stopped, in words, for the round line and the manifest. */
export function stopText(j: RoundsJudged): string {
  if (j.reason === undefined) return 'stopped before the judge decided';
  return j.history !== undefined ? historyStopText(j) : STOP_TEXT[j.reason];
}

/** Why a run judged against history stopped. */
function historyStopText(j: RoundsJudged): string {
  if (j.reason === 'resolved') return 'every series quiet or moved against its history';
  if (j.reason === 'budget') return STOP_TEXT.budget;
  const missing = (j.history ?? []).filter((s) => s.call === 'no-history').length;
  return missing > 0
    ? `at the maximum rounds: ${missing} series without a stable history yet, so run to the maximum`
    : 'at the maximum rounds, the last look decided';
}

/** A history question is resolved when none of its series is open. */
function historyQuestionStates(
  questions: readonly NamedHistoryQuestion[],
  states: readonly HistorySeriesState[],
  round: number,
): QuestionState[] {
  return questions.map((q) => {
    const own = states.filter((s) => s.question === q.id);
    const worst = own.reduce<HistorySeriesState | undefined>(
      (w, s) => (Number.isFinite(s.z) && (w === undefined || Math.abs(s.z) > Math.abs(w.z)) ? s : w),
      undefined,
    );
    const ratio = worst?.ratio ?? Number.NaN;
    const open = own.some((s) => s.call === 'continue' || s.call === 'no-history');
    return { id: q.id, rounds: round, ratio, lower: ratio, upper: ratio, resolved: !open, sides: [] };
  });
}

/** Questions against history stop when no series is open, at the minimum at least. */
async function judgeHistory(
  deps: TaskDeps,
  run: RunContext,
  config: RoundsConfig,
  questions: readonly NamedHistoryQuestion[],
  rows: readonly StepRow[],
  round: number,
): Promise<{
  decision: 'continue' | 'stop';
  reason?: StopReason;
  questions: QuestionState[];
  history: HistorySeriesState[];
}> {
  // Without a reader every series lacks history, so the run goes to the maximum.
  const levels = deps.historyLevels === undefined ? [] : await deps.historyLevels(run);
  const history = historyRound(questions, rows, levels, round, config.maxRounds).map((s) =>
    deps.historyLevels === undefined && s.call === 'no-history' ? { ...s, why: 'this function reads no history' } : s,
  );
  const states = historyQuestionStates(questions, history, round);
  if (round >= config.minRounds && states.every((q) => q.resolved))
    return { decision: 'stop', reason: 'resolved', questions: states, history };
  return { decision: 'continue', questions: states, history };
}

export async function judgeRoundTask(deps: TaskDeps, event: JudgeRoundEvent): Promise<JudgeRoundOutput> {
  need(event, ['run', 'round'], 'judge-round');
  const { run, round } = event;
  const config = await readJson<RoundsConfig>(deps, lakeKeys.workflow.rounds(run.runId));
  if (config === undefined) throw new Error(`judge-round: no rounds configuration in the lake for run ${run.runId}`);
  const rows = await stepRows(deps, run);
  const spentUsd = config.roundUsd.slice(0, round).reduce((a, b) => a + b, 0);
  const nextRoundUsd = config.roundUsd[round] ?? 0;
  const against = config.questions.filter((q): q is NamedHistoryQuestion => isHistoryQuestion(q));
  const judged: { decision: 'continue' | 'stop'; reason?: StopReason; questions: QuestionState[] } =
    against.length > 0
      ? await judgeHistory(deps, run, config, against, rows, round)
      : judgeHorizons(deps, config, rows, round, spentUsd, nextRoundUsd);
  const history = 'history' in judged ? (judged.history as HistorySeriesState[]) : undefined;
  // A round whose rows are missing counts as run, so maxRounds bounds the loop.
  const atMax = round >= config.maxRounds;
  // No round starts that would pass budget.maxUsd.
  const overBudget = config.budgetUsd !== undefined && spentUsd + nextRoundUsd > config.budgetUsd;
  const decision = atMax || overBudget ? 'stop' : judged.decision;
  const reason = decision === 'stop' ? (judged.reason ?? (atMax ? 'max-rounds' : 'budget')) : undefined;
  const record: RoundsJudged = {
    rounds: round,
    minRounds: config.minRounds,
    maxRounds: config.maxRounds,
    decision,
    ...(reason !== undefined ? { reason } : {}),
    spentUsd,
    nextRoundUsd,
    questions: judged.questions,
    ...(history !== undefined ? { history } : {}),
  };
  await deps.backend.lake.put(lakeKeys.workflow.roundsJudged(run.runId), JSON.stringify(record));
  const next = decision === 'continue' ? round + 1 : round;
  return {
    run,
    round: next,
    items: decision === 'continue' ? (config.items[round] ?? []) : [],
    maxConcurrency: event.maxConcurrency,
    decision,
    summary: roundsSummary(record),
  };
}
