/**
 * What besides the variable under study could explain an A/B comparison's numbers, per step: how
 * busy the machine's CPUs were (locally servers and clients share them, so the host rather than
 * the class can bound the throughput) and the errors sysbench counted and went on past
 * (deadlocks, rows changed since read and lock wait timeouts in OLTP: sysbench 1.0's default --mysql-ignore-errors is
 * 1213,1020,1205, ER_LOCK_DEADLOCK, ER_CHECKREAD and ER_LOCK_WAIT_TIMEOUT).
 */
import { fixed, num } from '../../format';
import type { TableBlock } from '../model';
import { mean } from '../stats';
import { comparableKey, runOrder, stepLabel, uniqueInOrder, type Context, type StepGroup } from '../context';

/** What one cell leaves to the next: not its server (each repeat's is fresh), but the host under it. */
const HOST_STATE = 'the OS page cache, CPU and disk state, which a fresh server does not reset';

/** Host CPU from which a run's throughput is said to be bounded by the machine, not the class. */
const BUSY_HOST_PCT = 90;

interface StepConfounders {
  readonly step: string;
  /** Mean over the step's results of the host's CPU busy % (the runner's ClientHostCPU); null when not sampled. */
  readonly hostCpuPct: number | null;
  /** Errors sysbench counted in one step result (a variant's repeat): the fewest and the most. */
  readonly errorsLow: number;
  readonly errorsHigh: number;
  /** The most errors per 100 completed transactions in any of the step's results. */
  readonly errorsPer100: number | null;
}

export interface Confounders {
  readonly steps: readonly StepConfounders[];
  /** Mean host CPU busy % over every step; null when not sampled. */
  readonly hostCpuPct: number | null;
}

const metricMean = (ctx: Context, g: StepGroup, metric: string): number | null => {
  const values = ctx.data.metrics
    .filter((m) => m.metric === metric && m.step_id === g.stepId && g.rows.some((r) => r.cell_id === m.cell_id))
    .map((m) => m.avg_value);
  return values.length > 0 ? mean(values) : null;
};

export function analyzeConfounders(ctx: Context, groups: readonly StepGroup[]): Confounders | null {
  const steps: StepConfounders[] = [];
  for (const key of uniqueInOrder(groups.map(comparableKey))) {
    const gs = groups.filter((g) => comparableKey(g) === key);
    const results = gs.flatMap((g) => g.ok);
    if (results.length === 0) continue;
    const host = gs.map((g) => metricMean(ctx, g, 'ClientHostCPU')).filter((x): x is number => x !== null);
    const errors = results.map((r) => r.errors);
    const per100 = results.filter((r) => r.events !== null && r.events > 0).map((r) => (100 * r.errors) / r.events!);
    steps.push({
      step: stepLabel(gs[0]!),
      hostCpuPct: host.length > 0 ? mean(host) : null,
      errorsLow: Math.min(...errors),
      errorsHigh: Math.max(...errors),
      errorsPer100: per100.length > 0 ? Math.max(...per100) : null,
    });
  }
  if (steps.length === 0) return null;
  const host = steps.map((s) => s.hostCpuPct).filter((x): x is number => x !== null);
  return { steps, hostCpuPct: host.length > 0 ? mean(host) : null };
}

const count = (low: number, high: number): string => (low === high ? num(low, 0) : `${num(low, 0)} to ${num(high, 0)}`);

/** One sentence of what else moved the numbers, or null when nothing did. */
export function confoundersSentence(c: Confounders, extra: readonly string[] = []): string | null {
  const parts: string[] = [...extra];
  if (c.hostCpuPct !== null && c.hostCpuPct >= BUSY_HOST_PCT)
    parts.push(
      `this machine's CPUs were ${fixed(c.hostCpuPct, 0)}% busy on average over the steps (the servers and ` +
        `their clients share them), so the host, not the class, bounds the throughput`,
    );
  const withErrors = c.steps.filter((s) => s.errorsHigh > 0);
  if (withErrors.length > 0)
    parts.push(
      `sysbench counted and went past ` +
        withErrors.map((s) => `${count(s.errorsLow, s.errorsHigh)} errors a run in ${s.step}`).join(', ') +
        ` (deadlocks, rows changed since read or lock wait timeouts; at most ` +
        fixed(Math.max(...withErrors.map((s) => s.errorsPer100 ?? 0)), 2) +
        ` per 100 transactions)`,
    );
  return parts.length > 0 ? `Besides the classes: ${parts.join('; ')}.` : null;
}

export function confoundersTable(c: Confounders): TableBlock {
  return {
    title: 'What else could move these numbers, per step',
    head: ['step', 'host CPU busy %', 'errors a run (fewest to most)', 'errors per 100 transactions (most)'],
    rows: [
      ...c.steps.map((s) => [
        s.step,
        s.hostCpuPct !== null ? fixed(s.hostCpuPct, 0) : '-',
        count(s.errorsLow, s.errorsHigh),
        s.errorsPer100 !== null ? fixed(s.errorsPer100, 2) : '-',
      ]),
      ['every step', c.hostCpuPct !== null ? fixed(c.hostCpuPct, 0) : '-', '', ''],
    ],
    numeric: [1, 3],
    notes: [
      'Host CPU: the machine’s busy share while the step ran (sampled by the runner; locally the servers and ' +
        'clients share it). Errors: those sysbench counted and went on past (its default --mysql-ignore-errors ' +
        'is 1213,1020,1205: a deadlock, a row changed since it was read, a lock wait timeout), per run of a variant.',
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Per repeat: each variant's QPS in each round, and where in the round its cell ran

interface RepeatRow {
  readonly az: string | null;
  readonly step: string;
  readonly variant: string;
  readonly repeat: number;
  /** 1-based position of the variant's cell in its round, by start time; and the round's cell count. */
  readonly position: number;
  readonly of: number;
  readonly startedAt: string;
  readonly qps: number | null;
}

export interface RepeatOrder {
  readonly rows: readonly RepeatRow[];
  /** The variants ahead of their baseline at every step (and AZ), when there are 3+ such comparisons. */
  readonly oneSided: { readonly ahead: readonly string[]; readonly behind: readonly string[] } | null;
}

/** Per repeat values and run order, and whether every comparison went one way (a sign of order or drift). */
export function analyzeRepeatOrder(
  ctx: Context,
  groups: readonly StepGroup[],
  comparisons: readonly { variant: string; baseline: string; estimate: number | null }[],
): RepeatOrder {
  const cellStart = new Map<string, string>();
  for (const s of ctx.data.steps)
    if (!cellStart.has(s.cell_id) || s.started_at < cellStart.get(s.cell_id)!) cellStart.set(s.cell_id, s.started_at);
  const roundOf = (repeat: number): string[] =>
    uniqueInOrder(ctx.data.steps.filter((s) => s.repeat === repeat).map((s) => s.cell_id)).sort((a, b) =>
      cellStart.get(a)!.localeCompare(cellStart.get(b)!),
    );
  const rows: RepeatRow[] = groups.flatMap((g) =>
    g.ok.map((r) => {
      const round = roundOf(r.repeat);
      return {
        az: g.az,
        step: stepLabel(g),
        variant: g.variant,
        repeat: r.repeat,
        position: round.indexOf(r.cell_id) + 1,
        of: round.length,
        startedAt: r.started_at,
        qps: r.qps,
      };
    }),
  );
  const steps = uniqueInOrder(groups.map(stepLabel));
  const known = comparisons.filter((c) => c.estimate !== null && c.estimate !== 1);
  const up = known.filter((c) => c.estimate! > 1);
  const oneWay = known.length >= 3 && (up.length === 0 || up.length === known.length);
  return {
    // The experiment's step order within each AZ, then the repeats in order.
    rows: rows.sort(
      (a, b) =>
        (a.az ?? '').localeCompare(b.az ?? '') ||
        steps.indexOf(a.step) - steps.indexOf(b.step) ||
        a.repeat - b.repeat ||
        a.position - b.position,
    ),
    oneSided: oneWay
      ? {
          ahead: uniqueInOrder(known.map((c) => (up.length > 0 ? c.variant : c.baseline))),
          behind: uniqueInOrder(known.map((c) => (up.length > 0 ? c.baseline : c.variant))),
        }
      : null,
  };
}

/** The order caveat, for variants that are one server here: a one-sided result points at the run order or drift. */
export function orderBiasText(o: RepeatOrder): string | null {
  if (o.oneSided === null) return null;
  return (
    `${o.oneSided.ahead.join(', ')} came out ahead of ${o.oneSided.behind.join(', ')} at every step` +
    ' although locally they are the same server' +
    `: a one-sided pattern that points at the run order or the machine's drift, not the class (the per-repeat ` +
    `table gives each run's QPS and its place in its round)`
  );
}

export function repeatOrderTable(o: RepeatOrder): TableBlock {
  return {
    title: 'Per repeat: each run’s QPS and its place in its round',
    head: ['AZ', 'step', 'variant', 'repeat', 'ran', 'started (UTC)', 'QPS'],
    rows: o.rows.map((r) => [
      r.az ?? '-',
      r.step,
      r.variant,
      String(r.repeat),
      `${r.position} of ${r.of}`,
      r.startedAt.slice(11, 19),
      r.qps !== null ? num(r.qps, 0) : '-',
    ]),
    numeric: [3, 6],
    notes: [
      'Ran: the position of the variant’s cell among its round’s cells, by start time (the order rotates who ' +
        'goes first). A variant always ahead, or the later-running cell always ahead, is a bias more repeats ' +
        'in the same order do not remove.',
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Pair order: a compared pair that ran in the same order in every round

/** Where in the run a compared pair's cells ran, round by round. */
export interface PairOrder {
  readonly az: string | null;
  readonly variant: string;
  readonly baseline: string;
  /** Rounds in which the two cells ran one after the other (not at once). */
  readonly rounds: number;
  /** The one of the two that ran first in every such round; null when the order changed. */
  readonly first: string | null;
  /** The later cell started right after the earlier one ended, with no other cell between, in every round. */
  readonly adjacent: boolean;
  /** Rounds in which the variant ran right after its baseline, no other cell between. */
  readonly rightAfter: number;
}

/**
 * Per compared pair, whether its two cells ran in the same order in every round, from the lake's
 * step times. A variant that always runs right after the same neighbour inherits what that
 * neighbour leaves behind (the host's page cache, CPU and disk state, a warmed client) in every
 * round alike, so more repeats in that order cannot average it out.
 */
export function analyzePairOrder(
  ctx: Context,
  pairs: readonly { az: string | null; variant: string; baseline: string }[],
): PairOrder[] {
  // A duet starts every step on all of a round's variants at once: no order for one to inherit.
  if (runOrder(ctx).order === 'duet')
    return pairs.map((p) => ({ ...p, rounds: 0, first: null, adjacent: false, rightAfter: 0 }));
  const spans = new Map<string, { variant: string; repeat: number; start: number; end: number }>();
  for (const s of ctx.data.steps) {
    const [start, end] = [Date.parse(s.started_at), Date.parse(s.ended_at)];
    if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
    const span = spans.get(s.cell_id);
    spans.set(s.cell_id, {
      variant: s.variant,
      repeat: s.repeat,
      start: Math.min(span?.start ?? start, start),
      end: Math.max(span?.end ?? end, end),
    });
  }
  const sequence = [...spans.entries()].sort((a, b) => a[1].start - b[1].start).map(([id]) => id);
  const cellOf = (variant: string, repeat: number): string | undefined =>
    [...spans.entries()].find(([, s]) => s.variant === variant && s.repeat === repeat)?.[0];
  const repeats = uniqueInOrder(ctx.data.steps.map((s) => s.repeat));
  return pairs.map((p) => {
    const orders = repeats.flatMap((r) => {
      const [v, b] = [cellOf(p.variant, r), cellOf(p.baseline, r)];
      if (v === undefined || b === undefined) return [];
      const [sv, sb] = [spans.get(v)!, spans.get(b)!];
      // Cells that ran at once have no order for one to inherit from the other.
      if (sv.start < sb.end && sb.start < sv.end) return [];
      const first = sv.start < sb.start ? p.variant : p.baseline;
      return [{ first, adjacent: Math.abs(sequence.indexOf(v) - sequence.indexOf(b)) === 1 }];
    });
    const same = orders.length >= 2 && orders.every((o) => o.first === orders[0]!.first);
    return {
      ...p,
      rounds: orders.length,
      first: same ? orders[0]!.first : null,
      adjacent: same && orders.every((o) => o.adjacent),
      rightAfter: orders.filter((o) => o.adjacent && o.first === p.baseline).length,
    };
  });
}

/** The pair that ran second: the one the order can favour or handicap. */
const secondOf = (o: PairOrder): string => (o.first === o.variant ? o.baseline : o.variant);

/** "r6g-b ran right after r5-b in both rounds" / null when the order changed between rounds. */
export function pairOrderText(o: PairOrder): string | null {
  if (o.first === null) return null;
  const rounds = o.rounds === 2 ? 'both rounds' : `all ${o.rounds} rounds`;
  return `${secondOf(o)} ran ${o.adjacent ? 'right after' : 'after'} ${o.first} in ${rounds}`;
}

/**
 * The order confounder beside a verdict: what the fixed order can do and what would vary it. The
 * experiment's order "interleaved" rotates who goes first in each round (core/plan/plan.ts
 * orderCells) but keeps neighbours next to each other; "randomized" shuffles each round.
 */
export function pairOrderCaveat(o: PairOrder, order: string): string | null {
  const said = pairOrderText(o);
  if (said === null) return null;
  const fix =
    order === 'randomized'
      ? 'another orderSeed would vary it'
      : `"order": "randomized" in the experiment would vary it` +
        (order === 'interleaved' ? ` ("interleaved" only rotates who goes first)` : '');
  return (
    `order: ${said}, so what ${o.first} left on the host (${HOST_STATE}) fell on ` +
    `${secondOf(o)} each time and more repeats in this order cannot average it out: ${fix}`
  );
}

/** How the rotation's order sentence starts: the Answer finds it by this. */
export const ROTATION_HEAD = 'Order: the interleaved rotation';

/**
 * The order confounder of an interleaved run, said once for every pair: the rotation only shifts who
 * goes first, so each variant keeps its baseline as the cell before it in most rounds (with n cells
 * and the variant listed right after its baseline, n - 1 of every n), whichever AZ's pair happened
 * to keep it in every round of this run.
 */
export function rotationOrderText(orders: readonly PairOrder[], cells: number, nextInList: boolean): string | null {
  // Two cells alternate under a rotation: no neighbour is kept, and a fixed order is each pair's own finding.
  const seen = orders.filter((o) => o.rounds >= 2 && o.rightAfter > 0);
  if (seen.length === 0 || cells <= 2) return null;
  const counts = seen.map((o) => `${o.variant} right after ${o.baseline} in ${o.rightAfter} of ${o.rounds} rounds`);
  return (
    `${ROTATION_HEAD} only shifts who goes first, so each variant mostly runs right after its ` +
    `baseline (here ${counts.join(', ')}` +
    (nextInList ? `; a rotation of ${cells} cells does so in ${cells - 1} of every ${cells}` : '') +
    `), and what a baseline leaves on the host (${HOST_STATE}) falls mostly on its variant: ` +
    `"order": "randomized" in the experiment would vary it.`
  );
}

/** The pair's run order in a table cell. */
export function pairOrderCell(o: PairOrder | undefined): string {
  if (o === undefined || o.rounds < 2) return '-';
  return o.first === null ? 'changed' : `${secondOf(o)} ${o.adjacent ? 'right after' : 'after'} ${o.first}`;
}
