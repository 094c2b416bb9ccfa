import { fixed, num } from '../format';
import { SERVER_METRICS } from '../lake/rows';
import type { TableBlock } from './model';
import { mean } from './stats';
import type { RunData } from './load';
import { type Context, type StepGroup } from './context';
import { whole } from './findings';
import { offeredApart, ranLabel } from './latency-section';
import { THROUGHPUT_COLUMNS } from './server-metrics-columns';

type MetricMean = RunData['metrics'][number];

const unitText = (metric: string): string =>
  SERVER_METRICS[metric as keyof typeof SERVER_METRICS] === 'Percent' ? '%' : '/s';

// Deadlocks are rare: two decimals keep 0.05/s from reading as 0.
const valueText = (metric: string, value: number): string =>
  metric === 'Deadlocks' || metric === 'BufferCacheHitRatio' ? fixed(value) : num(value, 0);

/** A deadlock is no statement: its column is n/a where a step ran no writes. */
const NONE_SENT: Readonly<Record<string, string>> = { Deadlocks: 'no step ran the writes that could deadlock' };

/** An instance's name without its repeat's cell prefix ("a-r1-reader-2" -> "reader-2"). */
const instanceName = (m: MetricMean): string =>
  m.instance_id.startsWith(`${m.cell_id}-`) ? m.instance_id.slice(m.cell_id.length + 1) : m.instance_id;

/**
 * The rows per role, and per instance where a role has several: averaging an idle second reader in with
 * the one a single-reader step used would halve that reader's figures.
 */
function byInstance(ofStep: readonly MetricMean[]): [string, MetricMean[]][] {
  const out: [string, MetricMean[]][] = [];
  for (const role of [...new Set(ofStep.map((m) => m.role))].sort()) {
    const ofRole = ofStep.filter((m) => m.role === role);
    const names = [...new Set(ofRole.map(instanceName))].sort();
    if (names.length <= 1) out.push([role, ofRole]);
    else
      for (const n of names)
        out.push([n.startsWith(role) ? n : `${role} ${n}`, ofRole.filter((m) => instanceName(m) === n)]);
  }
  return out;
}

/** sysbench's own count of a statement kind over a step's measured repeats; null where a repeat has none. */
function clientCount(g: StepGroup, kind: 'reads' | 'writes' | 'other'): number | null {
  const xs = g.ok.map((r) => r[kind]);
  return xs.length > 0 && xs.every((x): x is number => typeof x === 'number') ? xs.reduce((a, b) => a + b, 0) : null;
}

/**
 * A counter that says nothing of a step whose sysbench sent none of its statements (a read-only
 * step's DML and deadlocks, a write-only step's selects): what it reads there is the server's
 * background. Locally CommitThroughput is MariaDB's Com_commit, which counts COMMIT statements
 * only, so a step with no BEGIN/COMMIT (autocommit statements, or skip_trx) reads 0 however much it wrote.
 */
function meaningless(ctx: Context, g: StepGroup, metric: string): boolean {
  if (metric === 'SelectThroughput') return clientCount(g, 'reads') === 0;
  if (metric === 'DMLThroughput' || metric === 'Deadlocks') return clientCount(g, 'writes') === 0;
  if (metric === 'CommitThroughput') return ctx.data.run.backend === 'local' && clientCount(g, 'other') === 0;
  return false;
}

const NO_STATEMENTS_NOTE =
  "n/a: the step's sysbench sent none of the statements the counter counts (no reads, no writes, or locally " +
  'no BEGIN/COMMIT: MariaDB counts only COMMIT statements, not autocommits), so it reads only background.';

/**
 * The server's statement throughput, deadlocks and buffer cache hit ratio per variant, step and
 * instance role (per instance where a role has several), only for the metrics the lake has: the mean
 * over repeats of each one's average over the step, and its largest datapoint. A cell whose step sent none of the
 * counter's statements reads "n/a"; a column with nothing else, or the same value in every row, is
 * a line under the table instead. Null when the lake has none of them.
 */
export function serverThroughputTable(ctx: Context): TableBlock | null {
  const metrics = ctx.data.metrics.filter((m) => THROUGHPUT_COLUMNS.includes(m.metric as never) && m.role !== 'client');
  const found = THROUGHPUT_COLUMNS.filter((c) => metrics.some((m) => m.metric === c));
  if (found.length === 0) return null;
  interface Cell {
    readonly text: string;
    readonly value: string | null;
    /** Read exactly 0 in every datapoint. */
    readonly zero?: boolean;
  }
  // A repeat overloaded in its warm-up measured nothing (no achieved rate): its counters are of the warm-up, not
  // of a measured step, and get no row.
  const unmeasured = (r: StepGroup['rows'][number]): boolean => r.status === 'overloaded' && r.tps === null;
  const leftOut = ctx.groups.filter((g) => g.rows.some(unmeasured));
  // A rate step whose repeats were offered different rates gets a row per repeat: no mean of them was offered.
  const parts = ctx.groups.flatMap((g) => {
    const rows = g.rows.filter((r) => !unmeasured(r));
    if (rows.length === 0) return [];
    return offeredApart(g)
      ? g.ok.map((r) => ({
          g,
          label: `${ranLabel(g)}, repeat ${r.repeat} at ${whole(r.offered_tps)}/s`,
          cells: new Set([r.cell_id]),
        }))
      : [{ g, label: ranLabel(g), cells: new Set(rows.map((r) => r.cell_id)) }];
  });
  const lines: { g: StepGroup; label: string; role: string; cells: Map<string, Cell> }[] = [];
  for (const { g, label, cells: ofCells } of parts) {
    const ofStep = metrics.filter((m) => m.step_id === g.stepId && ofCells.has(m.cell_id));
    for (const [role, ofRole] of byInstance(ofStep)) {
      const cells = new Map<string, Cell>();
      for (const metric of found) {
        const these = ofRole.filter((m) => m.metric === metric);
        if (these.length === 0) cells.set(metric, { text: '-', value: null });
        else if (meaningless(ctx, g, metric)) cells.set(metric, { text: 'n/a', value: null });
        else {
          const avg = mean(these.map((m) => m.avg_value));
          const max = Math.max(...these.map((m) => m.max_value));
          const partial = these.some((m) => m.partial) ? ' partial' : '';
          const text = `${valueText(metric, avg)} (max ${valueText(metric, max)})${partial}`;
          cells.set(metric, { text, value: text, ...(avg === 0 && max === 0 ? { zero: true } : {}) });
        }
      }
      lines.push({ g, label, role, cells });
    }
  }
  // A reading of exactly 0 where the workload's other rows read n/a (a step whose client counts are unknown)
  // says the same: n/a, so one workload's rows read alike.
  for (const l of lines)
    for (const metric of found) {
      const c = l.cells.get(metric)!;
      const naBeside = lines.some((o) => o.g.workload === l.g.workload && o.cells.get(metric)!.text === 'n/a');
      if (c.zero === true && naBeside) l.cells.set(metric, { text: 'n/a', value: null });
    }
  const dropped: string[] = [];
  const present = found.filter((metric) => {
    const values = lines.map((l) => l.cells.get(metric)!).filter((c) => c.value !== null);
    const naSeen = lines.some((l) => l.cells.get(metric)!.text === 'n/a');
    if (values.length === 0) {
      if (naSeen) dropped.push(NONE_SENT[metric] ?? `no step sent the statements ${metric} counts`);
      return false;
    }
    // The same reading on every row (several rows) tells nothing a table row should: one line instead.
    if (values.length > 1 && new Set(values.map((c) => c.value)).size === 1) {
      const v = unitText(metric) === '%' ? values[0]!.value!.replace(/(\d)( |\)|$)/g, '$1%$2') : values[0]!.value;
      dropped.push(`${metric} read ${v} at every step`);
      return false;
    }
    return true;
  });
  if (present.length === 0) return null;
  const rows = lines.map((l) => [l.g.variant, l.label, l.role, ...present.map((m) => l.cells.get(m)!.text)]);
  const notes = [
    'Each value: the mean over the repeats of the metric’s average over the step, and its largest ' +
      'datapoint, as the server counted them; a role with several instances gets a row per instance.',
  ];
  if (rows.some((r) => r.includes('n/a'))) notes.push(NO_STATEMENTS_NOTE);
  if (leftOut.length > 0)
    notes.push(
      `No row for a repeat overloaded in its warm-up (${[...new Set(leftOut.map(ranLabel))].join(', ')}): sysbench ` +
        'stopped it before its first measured interval, so its counters read the warm-up, not a measured step.',
    );
  if (dropped.length > 0) notes.push(`${dropped.join('; ')}: no column for ${dropped.length === 1 ? 'it' : 'them'}.`);
  return {
    title: `Server ${countersTitle(present)} per step and instance role`,
    head: ['variant', 'step', 'role', ...present.map((m) => `${m} ${unitText(m)}`)],
    rows,
    numeric: present.map((_, i) => i + 3),
    notes,
  };
}

/** What the counters' columns show, for a title: "statement rates and deadlocks", never a promise of more. */
export function countersTitle(columns: readonly string[]): string {
  const has = (re: RegExp) => columns.some((c) => re.test(c));
  const parts = [
    ...(has(/^(Select|DML)Throughput/) ? ['statement'] : []),
    ...(has(/^CommitThroughput/) ? ['commit'] : []),
  ];
  const what = [
    ...(parts.length > 0 ? [`${parts.join(' and ')} rates`] : []),
    ...(has(/^Deadlocks/) ? ['deadlocks'] : []),
    ...(has(/^BufferCacheHitRatio/) ? ['buffer cache hits'] : []),
  ];
  return what.length <= 1 ? (what[0] ?? 'counters') : `${what.slice(0, -1).join(', ')} and ${what[what.length - 1]}`;
}
