/**
 * The judge's input and output as the workflow sees them: the shape of core/rounds/judge.ts, which
 * sits above the workflow (it uses the report's statistics) and is injected as TaskDeps.judgeRounds.
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
