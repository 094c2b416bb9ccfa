/** How `aurora-bench plan` shows a plan: cells in order, their steps, notes, and the estimate. */
import Table from 'cli-table3';
import { cellEngine, type Plan } from '../plan/types';
import { engineName } from '../aurora/engines';

function formatDuration(totalS: number): string {
  const s = Math.round(totalS);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

export function renderPlan(plan: Plan, extra: readonly string[] = []): string {
  const out: string[] = [];
  out.push(`Plan for "${plan.specName}" on ${plan.backend} (run id ${plan.runId})`);
  out.push(`  engine ${engineName(plan.engine)}, region ${plan.region}, ${plan.cells.length} cells, max ${plan.maxConcurrency} at once`);
  if (plan.order === 'duet')
    out.push(`  order duet: ${plan.duets?.length ?? 0} duet(s), each running one round's cells together (${plan.duets?.[0]?.members.join(' + ') ?? ''}, ...)`);
  else if (plan.order === 'randomized') out.push(`  order randomized, seed ${plan.orderSeed ?? '?'}`);
  const cells = new Table({ head: ['#', 'cell', 'engine', 'instance class', 'readers', 'clients', 'steps', 'data'], style: { head: [], border: [] } });
  for (const c of plan.cells) {
    cells.push([
      c.index + 1,
      c.variant.localOnlyParameters ? `${c.cellId} (local-only what-if)` : c.cellId,
      engineName(cellEngine(plan, c)),
      c.variant.instanceClass,
      c.variant.readers,
      `${c.variant.clients.count} x ${c.variant.clients.instanceType}`,
      c.steps.length,
      `${c.data.tables} x ${c.data.tableSize.toLocaleString('en-US')} rows (${c.data.reuse === 'cell' ? 'prepared once' : 'prepared every step'})`,
    ]);
  }
  out.push(cells.toString());
  const first = plan.cells[0]!;
  const steps = new Table({ head: ['step', 'workload', 'threads', 'rate/s', 'target', 'clients', 'warm-up', 'duration'], style: { head: [], border: [] } });
  for (const s of first.steps) {
    steps.push([s.stepId, s.test ?? s.script?.name ?? '', s.threads, s.rate === 0 ? 'max' : s.rate, s.target, s.clients, `${s.warmupS}s`, `${s.durationS}s`]);
  }
  out.push(`Steps of each cell (${first.cellId} shown):`);
  out.push(steps.toString());
  if (plan.notes.length > 0) {
    out.push('Notes:');
    for (const n of plan.notes) out.push(`  [${n.level}] ${n.path}: ${n.message}`);
  }
  out.push(
    `Estimated wall time: ${formatDuration(plan.estimate.wallTimeS)} (${formatDuration(plan.estimate.stepTimeS)} of steps, ~${formatDuration(plan.estimate.provisionS)} provisioning per cell)`,
  );
  out.push(...extra);
  return out.join('\n');
}
