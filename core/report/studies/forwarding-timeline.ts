/**
 * S3's steps in the order they ran, with the reader's replica lag at each step's start and during it,
 * and the seconds another run shared the machine with each (the host note's windows): what a step's
 * figures may carry from the step before it, or from load that was not the study's.
 */
import { fixed } from '../../format';
import type { StepResult } from '../../lake/results';
import type { TableBlock } from '../model';
import { stepLabel, uniqueInOrder, type Context, type StepGroup } from '../context';
import { mean } from '../stats';

export interface Lag {
  /** How far behind the reader was when the step started (most over repeats and readers), ms; null: not measured. */
  readonly lagAtStartMs: number | null;
  /** The reader's lag over the step: mean and largest datapoint, ms. */
  readonly lagDuringMs: { readonly mean: number; readonly max: number } | null;
}

/** The readers' lag when each of these repeats started (its first datapoint from the start on) and over them. */
function lagOf(ctx: Context, stepId: string, rows: readonly StepResult[]): Lag {
  const all = ctx.data.replicaLag ?? [];
  const atStart: number[] = [];
  const during: number[] = [];
  for (const r of rows) {
    const from = Date.parse(r.started_at);
    const to = Date.parse(r.ended_at);
    const own = all.filter(
      (x) => x.cell_id === r.cell_id && x.step_id === stepId && Date.parse(x.ts) >= from && Date.parse(x.ts) <= to,
    );
    during.push(...own.map((x) => x.lag_ms));
    for (const instance of uniqueInOrder(own.map((x) => x.instance_id)))
      atStart.push(own.find((x) => x.instance_id === instance)!.lag_ms);
  }
  return {
    lagAtStartMs: atStart.length > 0 ? Math.max(...atStart) : null,
    lagDuringMs: during.length > 0 ? { mean: mean(during), max: Math.max(...during) } : null,
  };
}

export const replicaLagOf = (ctx: Context, g: StepGroup): Lag => lagOf(ctx, g.stepId, g.ok);

interface Window {
  readonly from: number;
  readonly to: number;
}

/**
 * The other runs' windows on this host, read off the run's host note (core/backends/local/host-runs.ts
 * overlapNote: "<run> (pid N, <start> to <end or 'still running'>: ...)"); a run still going at the end
 * is counted to this run's end.
 */
function coTenantWindows(ctx: Context): Window[] {
  let notes: { path?: string; message?: string }[];
  try {
    notes = JSON.parse(ctx.data.run.notes || '[]') as typeof notes;
  } catch {
    return [];
  }
  const runEnd = ctx.data.run.ended_at ? Date.parse(ctx.data.run.ended_at) : NaN;
  return notes
    .filter((n) => n.path === 'host')
    .flatMap((n) => [...(n.message ?? '').matchAll(/\(pid \d+, (\S+) to (\S+|still running):/g)])
    .map((m) => ({ from: Date.parse(m[1]!), to: m[2] === 'still running' ? runEnd : Date.parse(m[2]!) }))
    .filter((w) => Number.isFinite(w.from) && Number.isFinite(w.to));
}

export interface TimelineRow extends Lag {
  readonly order: number;
  readonly label: string;
  readonly target: string;
  readonly startedAt: string;
  readonly seconds: number;
  /** Seconds of this step another run shared the machine with; null: no host note in the run. */
  readonly coTenantS: number | null;
}

const overlapMs = (a: Window, b: Window): number => Math.max(0, Math.min(a.to, b.to) - Math.max(a.from, b.from));

/** Every repeat of the given steps, in the order it ran. */
export function timelineOf(ctx: Context, groups: readonly StepGroup[]): TimelineRow[] {
  const windows = coTenantWindows(ctx);
  const repeated = groups.some((g) => g.ok.length > 1);
  return groups
    .flatMap((g) => g.ok.map((r) => ({ g, r })))
    .sort((a, b) => a.r.started_at.localeCompare(b.r.started_at))
    .map(({ g, r }, i) => {
      const step = { from: Date.parse(r.started_at), to: Date.parse(r.ended_at) };
      return {
        order: i + 1,
        label: stepLabel(g).replace(/ → .*$/, '') + (repeated ? ` r${r.repeat}` : ''),
        target: g.target,
        startedAt: r.started_at,
        seconds: Math.round((step.to - step.from) / 1000),
        coTenantS: windows.length > 0 ? Math.round(windows.reduce((a, w) => a + overlapMs(step, w), 0) / 1000) : null,
        ...lagOf(ctx, g.stepId, [r]),
      };
    });
}

const lagCells = (l: Lag): [string, string] => [
  l.lagAtStartMs !== null ? fixed(l.lagAtStartMs / 1000, 2) : 'not measured',
  l.lagDuringMs !== null
    ? `${fixed(l.lagDuringMs.mean / 1000, 2)} / ${fixed(l.lagDuringMs.max / 1000, 2)}`
    : 'not measured',
];

export function timelineTable(rows: readonly TimelineRow[], oneMachine = false): TableBlock {
  const coTenant = rows.some((r) => r.coTenantS !== null);
  return {
    // The co-tenant column only when another run overlapped: the title names only the columns it has.
    title: `Run order: every step as it ran, with the reader lag${coTenant ? ' and any other run on the machine' : ''}`,
    head: [
      '#',
      'step',
      'target',
      'started (UTC)',
      'seconds',
      'reader lag at start s',
      'lag during s (mean/max)',
      ...(coTenant ? ['co-tenant s'] : []),
    ],
    rows: rows.map((r) => [
      String(r.order),
      r.label,
      r.target,
      r.startedAt.slice(11, 19),
      String(r.seconds),
      ...lagCells(r),
      ...(coTenant ? [String(r.coTenantS ?? 0)] : []),
    ]),
    numeric: [0, 4, 5, 6, ...(coTenant ? [7] : [])],
    notes: [
      'Reader lag: the most over the readers; at start, the first datapoint from the step’s start on. A reader ' +
        'step that starts behind reads a replica still applying the writes of the steps before' +
        (oneMachine
          ? '; on one machine that catching-up also takes CPU from the writer, so it can slow a writer step too.'
          : '.'),
      ...(coTenant ? ['co-tenant s: seconds of the step during which another run shared this machine.'] : []),
    ],
  };
}

/** The Answer's sentence on which steps another run overlapped; null when no other run did. */
export function coTenantSentence(rows: readonly TimelineRow[]): string | null {
  if (!rows.some((r) => r.coTenantS !== null)) return null;
  const hit = rows.filter((r) => (r.coTenantS ?? 0) > 0);
  if (hit.length === 0) return 'The other run on this machine overlapped none of the steps (Run order table).';
  return (
    `The other run on this machine overlapped ${hit.length === 1 ? 'one step' : `${hit.length} steps`}: ` +
    hit.map((r) => `#${r.order} ${r.label} (${r.coTenantS} of its ${r.seconds} s)`).join(', ') +
    `; every other step ran before or after it, so only ${hit.length === 1 ? 'that step’s' : 'those steps’'} ` +
    `figures can include its load (Run order table).`
  );
}
