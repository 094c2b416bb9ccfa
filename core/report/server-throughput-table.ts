import { fixed, num } from '../format';
import { SERVER_METRICS } from '../lake/rows';
import type { TableBlock } from './model';
import { mean } from './stats';
import type { RunData } from './load';
import { stepLabel, type Context } from './context';
import { THROUGHPUT_COLUMNS } from './server-metrics-columns';

type MetricMean = RunData['metrics'][number];

const unitText = (metric: string): string =>
  SERVER_METRICS[metric as keyof typeof SERVER_METRICS] === 'Percent' ? '%' : '/s';

// Deadlocks are rare: two decimals keep 0.05/s from reading as 0.
const valueText = (metric: string, value: number): string =>
  metric === 'Deadlocks' || metric === 'BufferCacheHitRatio' ? fixed(value) : num(value, 0);

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

/**
 * The server's statement throughput, deadlocks and buffer cache hit ratio per variant, step and
 * instance role (per instance where a role has several), only for the metrics the lake has: the mean
 * over repeats of each one's average over the step, and its largest datapoint. Null when the lake has none of them.
 */
export function serverThroughputTable(ctx: Context): TableBlock | null {
  const metrics = ctx.data.metrics.filter((m) => THROUGHPUT_COLUMNS.includes(m.metric as never) && m.role !== 'client');
  const present = THROUGHPUT_COLUMNS.filter((c) => metrics.some((m) => m.metric === c));
  if (present.length === 0) return null;
  const rows: string[][] = [];
  for (const g of ctx.groups) {
    const cells = new Set(g.rows.map((r) => r.cell_id));
    const ofStep = metrics.filter((m) => m.step_id === g.stepId && cells.has(m.cell_id));
    for (const [role, ofRole] of byInstance(ofStep)) {
      rows.push([
        g.variant,
        stepLabel(g),
        role,
        ...present.map((metric) => {
          const these = ofRole.filter((m) => m.metric === metric);
          if (these.length === 0) return '-';
          const avg = mean(these.map((m) => m.avg_value));
          const max = Math.max(...these.map((m) => m.max_value));
          const partial = these.some((m) => m.partial) ? ' partial' : '';
          return `${valueText(metric, avg)} (max ${valueText(metric, max)})${partial}`;
        }),
      ]);
    }
  }
  return {
    title: 'Server throughput and locks per step and instance role',
    head: ['variant', 'step', 'role', ...present.map((m) => `${m} ${unitText(m)}`)],
    rows,
    numeric: present.map((_, i) => i + 3),
    notes: [
      'Each value: the mean over the repeats of the metric’s average over the step, and its largest ' +
        'datapoint, as the server counted them; a role with several instances gets a row per instance.',
    ],
  };
}
