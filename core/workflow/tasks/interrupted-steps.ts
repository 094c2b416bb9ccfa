import type { RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import { storedCursor, type StepCursor } from '../step-scheduler';
import { loadCellPlan } from './cell-plans';
import { readJson } from './lake-json';
import type { CollectStepEvent } from './step-types';
import type { TaskDeps } from './types';

/**
 * The steps a stopped run left running, as CollectStep events that record them as failed.
 * There is one per member cell, and the cursors say which.
 */
export async function interruptedSteps(deps: TaskDeps, run: RunContext, reason: string): Promise<CollectStepEvent[]> {
  const lake = deps.backend.lake;
  const keys = (await lake.list(lakeKeys.workflow.run(run.runId))).filter((k) => k.includes('/cursors/'));
  const events: CollectStepEvent[] = [];
  for (const key of keys) {
    const stored = await readJson<StepCursor>(deps, key);
    const inflight = stored === undefined ? undefined : storedCursor(stored).inflight;
    if (inflight?.phase !== 'run') continue;
    for (const member of inflight.members) {
      const cell = await loadCellPlan(deps, run, member.cellId);
      const step = cell.steps[inflight.stepIndex];
      if (!step) continue;
      const jobsState = { done: true, running: 0, timedOut: false, jobs: [] };
      events.push({
        run,
        cell,
        resources: member.resources,
        step,
        phase: 'run',
        jobs: member.jobs,
        jobsState,
        abortedReason: reason,
      });
    }
  }
  return events;
}
