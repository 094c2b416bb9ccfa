import type { StepPlan } from '../../plan/types';

/** The few fields of a step its progress line shows. */
export type StepSummary = Pick<
  StepPlan,
  'stepId' | 'index' | 'test' | 'script' | 'target' | 'threads' | 'clients' | 'rate' | 'warmupS' | 'durationS'
>;

export function stepSummary(step: StepPlan): StepSummary {
  const { stepId, index, test, script, target, threads, clients, rate, warmupS, durationS } = step;
  return {
    stepId,
    index,
    ...(test !== undefined ? { test } : {}),
    ...(script !== undefined ? { script } : {}),
    target,
    threads,
    clients,
    rate,
    warmupS,
    durationS,
  };
}
