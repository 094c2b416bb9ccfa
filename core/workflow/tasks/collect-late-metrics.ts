import { lakeKeys, type ServerMetricRow } from '../../lake/rows';
import type { GroupResourcesEvent } from './group';
import { forEachMember, type MemberCall } from './member-calls';
import { need } from './need';
import { isComplete, writeServerMetrics } from './server-metrics';
import { readStepOutcomes } from './step-outcomes';
import type { StepMetricsState, StepOutcome } from './step-types';
import type { TaskDeps } from './types';

export interface LateMetricsOutput {
  /** False means nothing is collected yet, so ask again after waitS. */
  readonly done: boolean;
  readonly waitS: number;
  /** Steps whose windows were collected again. */
  readonly recollected: number;
  /** Steps whose windows are still incomplete after waiting. */
  readonly incompleteSteps: number;
  readonly incompleteStepIds: readonly string[];
}

/** State data stays small. */
const MAX_INCOMPLETE_STEP_IDS = 10;

/**
 * Collects again the steps whose server metrics were incomplete, once their datapoints are published.
 * It waits once for the whole group, not once per step.
 */
export async function collectLateMetricsTask(deps: TaskDeps, event: GroupResourcesEvent): Promise<LateMetricsOutput> {
  need(event, ['run', 'group', 'resources'], 'collect-late-metrics');
  const outputs = await forEachMember(deps, event, (m) => collectMemberLateMetrics(deps, m));
  const waiting = outputs.filter((o) => !o.done);
  // Every member runs the same steps, so a step id names its member in a group of several.
  const named = (i: number, id: string) => (outputs.length > 1 ? `${event.group.members[i]!.cellId}/${id}` : id);
  return {
    done: waiting.length === 0,
    waitS: Math.max(0, ...waiting.map((o) => o.waitS)),
    recollected: outputs.reduce((a, o) => a + o.recollected, 0),
    incompleteSteps: outputs.reduce((a, o) => a + o.incompleteSteps, 0),
    incompleteStepIds: outputs
      .flatMap((o, i) => o.incompleteStepIds.map((id) => named(i, id)))
      .slice(0, MAX_INCOMPLETE_STEP_IDS),
  };
}

async function collectMemberLateMetrics(deps: TaskDeps, member: MemberCall): Promise<LateMetricsOutput> {
  const { run, cell, resources } = member;
  const steps = await readStepOutcomes(deps, run, cell.cellId);
  const pending = steps.filter(
    (s): s is StepOutcome & { metrics: StepMetricsState } => s.metrics !== null && !s.metrics.complete,
  );
  if (pending.length === 0) return { done: true, waitS: 0, recollected: 0, incompleteSteps: 0, incompleteStepIds: [] };
  const due = Math.max(...pending.map((s) => Date.parse(s.metrics.dueAt)));
  const now = deps.now().getTime();
  if (now < due)
    return {
      done: false,
      waitS: Math.max(1, Math.ceil((due - now) / 1000)),
      recollected: 0,
      incompleteSteps: pending.length,
      incompleteStepIds: pending.slice(0, MAX_INCOMPLETE_STEP_IDS).map((s) => s.stepId),
    };
  const lake = deps.backend.lake;
  const stillIncomplete: string[] = [];
  for (const step of pending) {
    const collection = await deps.backend.collectServerMetrics(run, cell, resources, {
      stepId: step.stepId,
      start: step.metrics.start,
      end: step.metrics.end,
    });
    const key = lakeKeys.stepTable('server_metrics', run.dt, run.runId, cell.cellId, step.stepId);
    const existing = (await lake.get(key)) ?? '';
    const clientRows = existing
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ServerMetricRow)
      .filter((r) => r.source === 'runner');
    await writeServerMetrics(deps, run, cell, step.stepId, collection, clientRows);
    if (!isComplete(collection)) stillIncomplete.push(step.stepId);
  }
  return {
    done: true,
    waitS: 0,
    recollected: pending.length,
    incompleteSteps: stillIncomplete.length,
    incompleteStepIds: stillIncomplete.slice(0, MAX_INCOMPLETE_STEP_IDS),
  };
}
