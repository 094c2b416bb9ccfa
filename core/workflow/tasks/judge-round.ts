/** JudgeRound: after each round, the questions judged on the run's step rows in the lake; another round or stop. */
import type { RunContext } from '../../backend';
import type { NamedQuestion } from '../../experiment/rounds';
import { lakeKeys, type StepRow } from '../../lake/rows';
import type { QuestionState, StopReason } from './round-types';
import { readJson } from './lake-json';
import { need } from './need';
import { roundValues } from './round-values';
import type { TaskDeps } from './types';

/** What PlanRun writes for a run with questions (lakeKeys.workflow.rounds). */
export interface RoundsConfig {
  readonly questions: readonly NamedQuestion[];
  readonly minRounds: number;
  readonly maxRounds: number;
  readonly confidence: number;
  /** budget.maxUsd, on AWS only: a local run costs nothing. */
  readonly budgetUsd?: number;
  /** Each round's estimated cost, priced as the plan prices (core/plan/cost.ts). */
  readonly roundUsd: readonly number[];
  /** Each round's cell Map items (positions), in plan order. */
  readonly items: readonly (readonly number[])[];
  /** Each variant's $/h, for the *_per_usd metrics. */
  readonly hourlyUsd: Readonly<Record<string, number>>;
}

/** What JudgeRound last decided (lakeKeys.workflow.roundsJudged): FinishRun and the report read it. */
export interface RoundsJudged {
  readonly rounds: number;
  readonly minRounds: number;
  readonly maxRounds: number;
  readonly decision: 'continue' | 'stop';
  readonly reason?: StopReason;
  readonly spentUsd: number;
  readonly nextRoundUsd: number;
  readonly questions: readonly QuestionState[];
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

export const STOP_TEXT: Record<StopReason, string> = {
  resolved: 'every question resolved',
  'max-rounds': 'at the maximum rounds, not every question resolved',
  budget: 'the next round would pass budget.maxUsd',
};

/** "round 2 of 2-10: a-vs-b-tps 92.1% (88.0%-96.2%) resolved; next round $4.12" */
function roundsSummary(j: RoundsJudged): string {
  const questions = j.questions
    .map((q) => `${q.id} ${pct(q.ratio)} (${pct(q.lower)}-${pct(q.upper)}) ${q.resolved ? 'resolved' : 'unclear'}`)
    .join('; ');
  const next =
    j.decision === 'continue' ? `next round $${j.nextRoundUsd.toFixed(2)}` : `stopped: ${STOP_TEXT[j.reason!]}`;
  return `round ${j.rounds} of ${j.minRounds}-${j.maxRounds}: ${questions}; ${next}`;
}

export async function judgeRoundTask(deps: TaskDeps, event: JudgeRoundEvent): Promise<JudgeRoundOutput> {
  need(event, ['run', 'round'], 'judge-round');
  const { run, round } = event;
  const config = await readJson<RoundsConfig>(deps, lakeKeys.workflow.rounds(run.runId));
  if (config === undefined) throw new Error(`judge-round: no rounds configuration in the lake for run ${run.runId}`);
  const rows = await stepRows(deps, run);
  const observations = Object.fromEntries(
    config.questions.map((q) => [q.id, roundValues(rows, q, round, config.hourlyUsd)]),
  );
  const spentUsd = config.roundUsd.slice(0, round).reduce((a, b) => a + b, 0);
  const nextRoundUsd = config.roundUsd[round] ?? 0;
  if (deps.judgeRounds === undefined) throw new Error('judge-round: these deps were built without the judge');
  const judged = deps.judgeRounds({
    questions: config.questions.map((q) => ({ ...q, horizons: [...q.horizons] })),
    observations,
    minRounds: config.minRounds,
    maxRounds: config.maxRounds,
    confidence: config.confidence,
    spentUsd,
    nextRoundUsd,
    ...(config.budgetUsd !== undefined ? { budgetUsd: config.budgetUsd } : {}),
  });
  // A round whose rows are missing (its cells failed) counts as run: the loop is bounded by maxRounds.
  const decision = round >= config.maxRounds ? 'stop' : judged.decision;
  const reason = decision === 'stop' ? (judged.reason ?? 'max-rounds') : undefined;
  const record: RoundsJudged = {
    rounds: round,
    minRounds: config.minRounds,
    maxRounds: config.maxRounds,
    decision,
    ...(reason !== undefined ? { reason } : {}),
    spentUsd,
    nextRoundUsd,
    questions: judged.questions,
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
