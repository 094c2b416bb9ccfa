/** How `aurora-bench plan` shows a plan: cells in order, their steps, notes, and the estimate. */
import { commandLine, textTable } from '../format';
import { cellEngine, type Plan, type StepPlan } from '../plan/types';
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

const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * The rate column: an absolute rate, "max", or a multiple of the capacity probe.
 * A multiple's rate is decided when the step starts.
 * @internal exported for its tests (a test seam)
 */
export function rateText(step: Pick<StepPlan, 'rate' | 'rateOfCapacity'>): string {
  if (step.rateOfCapacity !== undefined) return `${step.rateOfCapacity}× capacity`;
  return step.rate === 0 ? 'max' : step.rate.toLocaleString('en-US');
}

/** What the plan's figures and the run's intervals do not cover, said before the estimate. */
function caveats(plan: Plan, priced: boolean): string[] {
  const out: string[] = [];
  const repeats = plan.cells.reduce((m, c) => Math.max(m, c.repeat), 0);
  if (repeats === 1)
    out.push(
      'one repeat per variant: the run measures no run-to-run noise; its intervals cover only the noise within ' +
        'a run (two or more "repeats" measure it)',
    );
  const skippable = plan.cells.reduce((n, c) => n + c.steps.filter((s) => s.stopAtOverload === true).length, 0);
  if (skippable > 0)
    out.push(
      `an upper bound: ${plural(skippable, 'step')} with stopAtOverload ${skippable === 1 ? 'is' : 'are'} ` +
        `skipped when a lower rate of ${skippable === 1 ? 'its' : 'their'} sweep overloads; the ` +
        `time${priced ? ' and cost' : ''} below count${priced ? '' : 's'} every one as if it ran`,
    );
  return out;
}

export function renderPlan(plan: Plan, extra: readonly string[] = []): string {
  const out: string[] = [];
  out.push(`Plan for "${plan.specName}" on ${plan.backend} (run id ${plan.runId})`);
  out.push(
    `  engine ${engineName(plan.engine)}, region ${plan.region}, ${plural(plan.cells.length, 'cell')}, ` +
      `max ${plan.maxConcurrency} at once`,
  );
  if (plan.order === 'duet')
    out.push(
      `  order duet: ${plural(plan.duets?.length ?? 0, 'duet')}, each running one round's cells together ` +
        `(${plan.duets?.[0]?.members.join(' + ') ?? ''}, ...)`,
    );
  else if (plan.order === 'randomized') out.push(`  order randomized, seed ${plan.orderSeed ?? '?'}`);
  out.push(
    textTable(
      ['#', 'cell', 'engine', 'instance class', 'readers', 'clients', 'steps', 'data'],
      plan.cells.map((c) => [
        c.index + 1,
        c.variant.localOnlyParameters ? `${c.cellId} (local-only what-if)` : c.cellId,
        engineName(cellEngine(plan, c)),
        c.variant.instanceClass,
        c.variant.readers,
        `${c.variant.clients.count} x ${c.variant.clients.instanceType}`,
        c.steps.length,
        `${c.data.tables} x ${c.data.tableSize.toLocaleString('en-US')} rows ` +
          `(${c.data.reuse === 'cell' ? 'prepared once' : 'prepared every step'})`,
      ]),
      { align: ['right', 'left', 'left', 'left', 'right', 'left', 'right', 'left'] },
    ),
  );
  const first = plan.cells[0];
  if (first) {
    out.push(`Steps of each cell (${first.cellId} shown):`);
    out.push(
      textTable(
        ['step', 'workload', 'threads', 'rate/s', 'target', 'clients', 'warm-up', 'duration'],
        first.steps.map((s) => [
          s.stepId,
          s.test ?? s.script?.name ?? '',
          s.threads,
          rateText(s),
          s.target,
          s.clients,
          `${s.warmupS}s`,
          `${s.durationS}s`,
        ]),
        { align: ['left', 'left', 'right', 'right', 'left', 'right', 'right', 'right'] },
      ),
    );
  }
  if (plan.notes.length > 0) {
    out.push('Notes:');
    for (const n of plan.notes) out.push(`  [${n.level}] ${n.path}: ${n.message}`);
  }
  for (const c of caveats(plan, extra.length > 0)) out.push(`Note: ${c}`);
  out.push(
    `Estimated wall time: ${formatDuration(plan.estimate.wallTimeS)} ` +
      `(${formatDuration(plan.estimate.stepTimeS)} of steps, ~${formatDuration(plan.estimate.provisionS)} ` +
      `provisioning per cell)`,
  );
  out.push(...extra);
  return out.join('\n');
}

/**
 * The plan's notes as one line before a run starts: counts per level and where to read them.
 * Refusals stop the run before this and are printed in full there.
 */
export function planNotesLine(notes: Plan['notes'], planArgs: readonly string[]): string | null {
  if (notes.length === 0) return null;
  const counts = new Map<string, number>();
  for (const n of notes) counts.set(n.level, (counts.get(n.level) ?? 0) + 1);
  const parts = [...counts].map(([level, n]) => `${n} ${level === 'info' || n === 1 ? level : `${level}s`}`);
  return (
    `${plural(notes.length, 'plan note')} (${parts.join(', ')}): \`aurora-bench ` +
    `plan ${commandLine(planArgs)}\` lists them`
  );
}
