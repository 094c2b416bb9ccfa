/**
 * What besides the variable under study shapes a run's numbers, computed once from the lake for
 * the Answer of S1, S2 and S3: which variants are the same server here (locally every variant is a
 * MariaDB server on this machine, so two variants with the same memory and parameters are an A/A
 * test of the machine), the parameters the variants differ in, whether the data fit the buffer
 * pool, the thread counts the experiment asks for that this scale did not run, and the steps that
 * lasted well past their planned time (connecting and draining many threads: not a steady state).
 */
import type { ResolvedVariant } from '../plan/types';
import type { TableBlock } from './model';
import { uniqueInOrder, type Context } from './context';

type ParamValue = string | number | boolean;

/** A parameter whose value is not the same on every variant. */
interface ParameterDifference {
  readonly parameter: string;
  /** Each variant's value; null: not set (the engine's default). */
  readonly values: readonly { readonly variant: string; readonly value: ParamValue | null }[];
}

/** A step that lasted much longer than planned: the thread count, planned and measured seconds. */
interface LongSteps {
  readonly threads: number;
  readonly plannedS: number;
  readonly lowS: number;
  readonly highS: number;
  readonly steps: number;
}

export interface LocalCaveats {
  readonly local: boolean;
  /** Groups of variants that are the same server in this run (same class memory and parameters). */
  readonly sameServer: readonly (readonly string[])[];
  readonly parameterDifferences: readonly ParameterDifference[];
  /** The lowest step-mean buffer cache hit ratio, %; null when not measured. */
  readonly minHitRatioPct: number | null;
  /** Thread counts the experiment as written runs and this scale left out. */
  readonly threadsNotRun: readonly number[];
  readonly longSteps: readonly LongSteps[];
}

/** Defaults a parameter may be set to without changing the server (MariaDB's documented default). */
const DEFAULTS: Readonly<Record<string, ParamValue>> = { thread_handling: 'one-thread-per-connection' };

/** A hit ratio from which the working set is said to fit in memory. */
const FITS_HIT_RATIO_PCT = 99;

/** A step this much past its planned time did not run at a steady state for its whole length. */
const LONG_STEP_FACTOR = 1.25;

function parametersOf(v: ResolvedVariant): Record<string, ParamValue> {
  const all = { ...v.clusterParameters, ...v.instanceParameters, ...(v.localOnlyParameters ?? {}) };
  return Object.fromEntries(Object.entries(all).filter(([k, x]) => DEFAULTS[k] !== x));
}

function resolvedVariants(ctx: Context): ResolvedVariant[] {
  const cells = ctx.data.plan?.cells ?? [];
  return uniqueInOrder(cells.map((c) => c.variant.name))
    .map((name) => cells.find((c) => c.variant.name === name)!.variant)
    .filter((v) => ctx.variants.some((x) => x.name === v.name));
}

function differences(vs: readonly ResolvedVariant[]): ParameterDifference[] {
  const params = vs.map(parametersOf);
  const names = uniqueInOrder(params.flatMap((p) => Object.keys(p))).sort();
  return names
    .map((parameter) => ({
      parameter,
      values: vs.map((v, i) => ({ variant: v.name, value: params[i]![parameter] ?? null })),
    }))
    .filter((d) => new Set(d.values.map((x) => JSON.stringify(x.value))).size > 1);
}

/** Locally a class is its memory (vCPUs are this machine's): variants alike in memory and parameters are one server. */
function sameServerGroups(ctx: Context, vs: readonly ResolvedVariant[]): string[][] {
  if (ctx.data.run.backend !== 'local') return [];
  const size = (cls: string): string => cls.replace(/^db\./, '').replace(/^[a-z0-9-]+?\./, '');
  const key = (v: ResolvedVariant): string =>
    JSON.stringify([size(v.instanceClass), v.readers, Object.entries(parametersOf(v)).sort()]);
  const keys = uniqueInOrder(vs.map(key));
  return keys.map((k) => vs.filter((v) => key(v) === k).map((v) => v.name)).filter((g) => g.length >= 2);
}

function minHitRatio(ctx: Context): number | null {
  const xs = ctx.data.metrics.filter((m) => m.metric === 'BufferCacheHitRatio').map((m) => m.avg_value);
  return xs.length > 0 ? Math.min(...xs) : null;
}

/** From the plan notes `workloads[i].threads: ... threads [a, b, ...] -> [c, d, ...]`. */
function threadsNotRun(ctx: Context): number[] {
  let notes: { path?: string; message?: string }[] = [];
  try {
    notes = JSON.parse(ctx.data.run.notes || '[]') as typeof notes;
  } catch {
    return [];
  }
  const out = new Set<number>();
  for (const n of notes.filter((x) => /^workloads\[\d+\]\.threads$/.test(x.path ?? ''))) {
    const m = /threads \[([\d, ]+)\] -> \[([\d, ]+)\]/.exec(n.message ?? '');
    if (m === null) continue;
    const [before, after] = [m[1]!, m[2]!].map((s) => s.split(',').map((x) => Number(x.trim())));
    for (const t of before!) if (!after!.includes(t)) out.add(t);
  }
  return [...out].sort((a, b) => a - b);
}

function longSteps(ctx: Context): LongSteps[] {
  const planned = new Map<string, number>();
  for (const c of ctx.data.plan?.cells ?? [])
    for (const s of c.steps) planned.set(`${c.cellId}/${s.stepId}`, s.durationS + s.warmupS);
  const long = ctx.data.steps
    .filter((s) => s.status === 'ok' || s.status === 'overloaded')
    .map((s) => ({
      threads: s.threads,
      plannedS: planned.get(`${s.cell_id}/${s.step_id}`) ?? null,
      tookS: (Date.parse(s.ended_at) - Date.parse(s.started_at)) / 1000,
    }))
    .filter((s) => s.plannedS !== null && Number.isFinite(s.tookS) && s.tookS > s.plannedS * LONG_STEP_FACTOR);
  return (
    uniqueInOrder(long.map((s) => s.threads))
      .sort((a, b) => a - b)
      .map((threads) => {
        const of = long.filter((s) => s.threads === threads);
        const took = of.map((s) => s.tookS);
        return {
          threads,
          plannedS: Math.max(...of.map((s) => s.plannedS!)),
          lowS: Math.min(...took),
          highS: Math.max(...took),
          steps: of.length,
        };
      })
      // A thread count whose steps mostly ran on time is not a pattern of the load.
      .filter((l) => 2 * l.steps >= ctx.data.steps.filter((s) => s.threads === l.threads).length)
  );
}

export function analyzeLocalCaveats(ctx: Context): LocalCaveats {
  const vs = resolvedVariants(ctx);
  return {
    local: ctx.data.run.backend === 'local',
    sameServer: sameServerGroups(ctx, vs),
    parameterDifferences: differences(vs),
    minHitRatioPct: minHitRatio(ctx),
    threadsNotRun: threadsNotRun(ctx),
    longSteps: longSteps(ctx),
  };
}

// ---------------------------------------------------------------------------------------------
// Sentences

const valueText = (x: ParamValue | null): string => (x === null ? 'unset' : String(x));

/**
 * The differences grouped by the variants that depart from the rest: per group, "parameter value
 * (the others value)". The rest is the largest group of variants sharing a value (on a tie, the one
 * holding the first variant, the baseline), so six variants with one odd one out read in one clause.
 */
function departures(ds: readonly ParameterDifference[]): { variants: string[]; parts: string[] }[] {
  const groups = new Map<string, { variants: string[]; parts: string[] }>();
  for (const d of ds) {
    const values = uniqueInOrder(d.values.map((x) => valueText(x.value)));
    const holders = (val: string): string[] => d.values.filter((x) => valueText(x.value) === val).map((x) => x.variant);
    const common = values.reduce((a, b) => (holders(b).length > holders(a).length ? b : a));
    for (const val of values.filter((v) => v !== common)) {
      const key = holders(val).join(', ');
      const g = groups.get(key) ?? { variants: holders(val), parts: [] };
      g.parts.push(`${d.parameter} ${val} (others ${common})`);
      groups.set(key, g);
    }
  }
  return [...groups.values()];
}

/**
 * The parameters the variants differ in beyond those the study varies on purpose, as a confounder:
 * null when there are none.
 */
export function parameterSentence(c: LocalCaveats, studied: readonly string[] = []): string | null {
  const other = c.parameterDifferences.filter((d) => !studied.includes(d.parameter));
  if (other.length === 0) return null;
  const groups = departures(other).map(
    (g) => `${g.variants.join(', ')} ${g.variants.length === 1 ? 'has' : 'have'} ${g.parts.join(', ')}`,
  );
  return (
    `Parameters besides the one studied differ: ${groups.join('; ')}; a difference between the variants may ` +
    `come from ${other.length === 1 ? 'it' : 'these'}.`
  );
}

/** What this scale makes impossible to observe, in one sentence; null when nothing. */
export function scaleSentence(c: LocalCaveats): string | null {
  const parts: string[] = [];
  if (c.minHitRatioPct !== null && c.minHitRatioPct >= FITS_HIT_RATIO_PCT)
    parts.push(`the data fit the buffer pool (lowest step-mean hit ratio ${c.minHitRatioPct.toFixed(1)}%)`);
  if (c.threadsNotRun.length > 0)
    parts.push(`${c.threadsNotRun.map((t) => t.toLocaleString('en-US')).join(', ')} threads were not run`);
  if (c.longSteps.length > 0)
    parts.push(
      `the ${c.longSteps.map((l) => l.threads.toLocaleString('en-US')).join('- and ')}-thread steps took ` +
        c.longSteps.map((l) => `${l.lowS.toFixed(0)}–${l.highS.toFixed(0)} s`).join(' and ') +
        ` for ${Math.max(...c.longSteps.map((l) => l.plannedS))} s planned (connecting and draining threads: ` +
        `not a steady state)`,
    );
  return parts.length > 0 ? `At this scale ${parts.join('; ')}.` : null;
}

/**
 * The Answer's first sentence on a local run: what it can and cannot tell about the AWS question.
 * Variants that are the same server here make the comparison an A/A test of this machine.
 */
export function scopeSentence(c: LocalCaveats, variants: readonly string[], awsQuestion: string): string | null {
  if (!c.local) return null;
  const all = c.sameServer.find((g) => variants.every((v) => g.includes(v)));
  if (all !== undefined && variants.length >= 2)
    return (
      `Locally ${variants.join(', ')} were identical servers (each a fresh MariaDB with the same memory and ` +
      `parameters, sharing this machine's CPUs with the clients): this run is an A/A test of the machine, so it ` +
      `shows the method and this machine's noise, not ${awsQuestion}.`
    );
  const pairs = c.sameServer.map((g) => g.join(' and '));
  return (
    `Locally every variant is MariaDB on this machine, sharing its CPUs with the clients` +
    (pairs.length > 0 ? ` (${pairs.join('; ')} are identical servers, run separately: an A/A pair)` : '') +
    `: this run shows the method, not ${awsQuestion}.`
  );
}

/** The table behind the caveat sentences: every number they quote is one of its cells. */
export function caveatsTable(c: LocalCaveats, studied: readonly string[] = []): TableBlock | null {
  const rows: string[][] = [];
  for (const g of departures(c.parameterDifferences.filter((x) => !studied.includes(x.parameter))))
    rows.push([`${g.variants.join(', ')}: parameters`, g.parts.join(', ')]);
  if (c.minHitRatioPct !== null) rows.push(['lowest hit ratio', `${c.minHitRatioPct.toFixed(1)}%`]);
  if (c.threadsNotRun.length > 0)
    rows.push(['threads not run', c.threadsNotRun.map((t) => t.toLocaleString('en-US')).join(', ')]);
  if (c.longSteps.length > 0)
    rows.push([
      `${c.longSteps.map((l) => l.threads.toLocaleString('en-US')).join(' / ')} threads: wall time`,
      c.longSteps.map((l) => `${l.lowS.toFixed(0)}–${l.highS.toFixed(0)} s`).join(' / ') +
        ` (${Math.max(...c.longSteps.map((l) => l.plannedS))} s planned)`,
    ]);
  if (rows.length === 0) return null;
  return {
    title: 'What else shapes these numbers',
    head: ['what', 'this run'],
    rows,
  };
}
