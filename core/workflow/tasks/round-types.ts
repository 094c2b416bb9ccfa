/**
 * The judge's input and output as the workflow sees them.
 * core/rounds/judge.ts sits above the workflow, so it is injected as TaskDeps.judgeRounds.
 */
export interface RoundValues {
  round: number;
  baseline: number;
  candidate: number;
}

export type StopReason = 'resolved' | 'max-rounds' | 'budget';

export interface RoundsJudgeInput {
  questions: { id: string; baseline: string; candidate: string; metric: string; horizons: number[] }[];
  observations: Record<string, RoundValues[]>;
  minRounds: number;
  maxRounds: number;
  confidence: number;
  spentUsd: number;
  nextRoundUsd: number;
  budgetUsd?: number;
}

export interface QuestionState {
  id: string;
  rounds: number;
  ratio: number;
  lower: number;
  upper: number;
  resolved: boolean;
  sides: { horizon: number; side: 'above' | 'below' | 'unclear' }[];
}

export interface RoundsJudgeOutput {
  decision: 'continue' | 'stop';
  reason?: StopReason;
  questions: QuestionState[];
}

/** A series' stable history, as TaskDeps.historyLevels reads it. */
export interface SeriesLevel {
  readonly variant: string;
  readonly workload: string;
  readonly threads: number;
  readonly rate: number;
  readonly target: string;
  readonly metric: 'tps' | 'qps' | 'latency';
  /** Absent when the series has too few stable runs to test against. `why` says so. */
  readonly level?: { readonly logMean: number; readonly logSd: number; readonly df: number; readonly runs: number };
  readonly why?: string;
}

/** One series of a history question after a round: the test's call, or why it has none. */
export interface HistorySeriesState {
  readonly question: string;
  /** Such as "read-write t16 [r7g-large]". */
  readonly series: string;
  /** The series' step and metric, as the verdicts table keys them. */
  readonly key?: {
    readonly variant: string;
    readonly workload: string;
    readonly threads: number;
    readonly rate: number;
    readonly target: string;
    readonly metric: SeriesLevel['metric'];
  };
  readonly rounds: number;
  /** Tonight over the history, as geometric means. NaN without a history. */
  readonly ratio: number;
  readonly z: number;
  readonly call: 'quiet' | 'moved' | 'continue' | 'no-history';
  readonly why?: string;
}
