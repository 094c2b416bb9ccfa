/**
 * The Lambda-backed Tasks of state-machines/benchmark.asl.json.
 * Each has its function in task-registry.ts and a Lambda entry at lambdas/<name>/handler.ts.
 * The ASL names its ARN with the placeholder `${<Pascal>FunctionArn}`.
 */
export const TASK_NAMES = [
  'plan-run',
  'provision-cell',
  'check-cell-ready',
  'start-clients',
  'check-clients-ready',
  'run-step',
  'collect-late-metrics',
  'teardown-cell',
  'finish-run',
  'compute-verdicts',
  'judge-round',
] as const;
export type TaskName = (typeof TASK_NAMES)[number];

/** 'check-cell-ready' -> 'CheckCellReadyFunctionArn' */
export function placeholderFor(task: TaskName): string {
  const pascal = task
    .split('-')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
  return `${pascal}FunctionArn`;
}
