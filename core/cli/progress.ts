/** One line per thing a user cares about while a run goes: cells, data, steps, failures, teardown. */
import type { ExecutionEvent } from '../workflow/local-runner';
import type { CellPlan, StepPlan } from '../plan/types';
import type { StepOutcome } from '../workflow/tasks';

interface StateInput {
  cell?: CellPlan;
  step?: StepPlan;
}

function fmt(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** What WaitForLateMetrics waits for (its input carries CollectLateMetrics' answer). */
export function lateMetricsWait(input: unknown): string {
  const late = (input as { lateMetrics?: { waitS?: number; incompleteSteps?: number } } | undefined)?.lateMetrics;
  return `waiting ${late?.waitS ?? '?'} s for the last CloudWatch/Performance Insights datapoints of ${late?.incompleteSteps ?? '?'} step(s)`;
}

export function progressLine(ev: ExecutionEvent, cellCount: () => number): string | undefined {
  const input = (ev.state?.input ?? {}) as StateInput;
  const cell = input.cell;
  const tag = cell ? `[${cell.index + 1}/${cellCount()} ${cell.cellId}]` : '';
  const name = ev.state?.name;
  if (ev.type === 'StateEntered') {
    switch (name) {
      case 'ProvisionCell':
        return `${tag} provisioning ${cell!.variant.instanceClass} writer + ${cell!.variant.readers} reader(s)`;
      case 'StartPrepare':
        return `${tag} preparing ${cell!.data.tables} x ${cell!.data.tableSize.toLocaleString('en-US')} rows`;
      case 'StartStep': {
        const s = input.step!;
        const rate = s.rate > 0 ? `, ${s.rate}/s offered` : '';
        return `${tag} step ${s.index + 1}/${cell!.steps.length} ${s.stepId}: ${s.test ?? s.script?.name} on ${s.target}, ${s.threads} threads x ${s.clients} client(s)${rate}, ${s.warmupS ? `${s.warmupS}s warm-up + ` : ''}${s.durationS}s`;
      }
      case 'TeardownCell':
      case 'TeardownCellOnError':
        return `${tag} tearing down`;
      case 'WaitForLateMetrics':
        return `${tag} ${lateMetricsWait(ev.state?.input)}`;
      default:
        return undefined;
    }
  }
  if (ev.type === 'StateExited' && name === 'ProvisionCell') {
    // Said once per variant (its first cell), not for every repeat.
    const notes = ((ev.state?.output as { resources?: { notes?: { level: string; path: string; message: string }[] } } | undefined)?.resources?.notes ?? []);
    if (cell && cell.repeat === 1 && notes.length > 0) return notes.map((n) => `${tag} [${n.level}] ${n.path}: ${n.message}`).join('\n');
    return undefined;
  }
  if (ev.type === 'StateExited' && name === 'CollectStep') {
    const out = (ev.state?.output ?? null) as StepOutcome | null;
    if (!out) return undefined;
    return out.status === 'ok'
      ? `${tag}   ok: ${fmt(out.tps)} tps, ${fmt(out.qps)} qps`
      : `${tag}   FAILED: ${out.error}`;
  }
  if (ev.type === 'StateRetried') return `${tag} ${name} failed, retrying (attempt ${ev.retry?.attempt ?? '?'})`;
  if (ev.type === 'StateFailed' && name !== undefined) {
    return `${tag} ${name} failed: ${ev.Error}: ${String(ev.Cause ?? '').split('\n')[0]}`;
  }
  return undefined;
}
