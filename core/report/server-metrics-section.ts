/**
 * The server's own view of each step: statement latencies (CommitLatency, DMLLatency,
 * SelectLatency), the write-forwarding latencies, storage I/O (ReadIOPS, WriteIOPS; on Aurora the cluster
 * volume's VolumeReadIOPs/VolumeWriteIOPs per 5 minutes, role "cluster") and free memory,
 * as collected into server_metrics (AWS: CloudWatch AWS/RDS, names and units as in the Aurora User
 * Guide's instance-level metrics, core/lake/rows.ts SERVER_METRICS; locally what MariaDB can say,
 * the rest named as not measured). Per variant, step and instance role: the mean over the step's
 * repeats and instances of each metric's average over the step, and its maximum.
 * Applies when some step has one of these metrics.
 */
import { fixed, num } from '../format';
import { LOCAL_UNMEASURED_METRICS, SERVER_METRICS, type ServerMetricName } from '../lake/rows';
import type { ReportSection } from './model';
import { mean } from './stats';
import type { Context } from './context';
import { LATENCY_COLUMNS } from './server-metrics-columns';
import { countersTitle, serverThroughputTable } from './server-throughput-table';
import { ranLabel, renamedNote } from './latency-section';

/** The metrics shown, in column order (the metric catalogue's latency table). */
const SHOWN = LATENCY_COLUMNS;
type Shown = ServerMetricName;

const unitText = (metric: Shown): string => {
  const unit = SERVER_METRICS[metric];
  return unit === 'Milliseconds' ? 'ms' : unit === 'Bytes' ? 'GiB' : unit === 'Count/5 minutes' ? '/5 min' : '/s';
};

const valueText = (metric: Shown, value: number | null): string => {
  if (value === null) return '-';
  if (SERVER_METRICS[metric] === 'Bytes') return fixed(value / 2 ** 30);
  if (SERVER_METRICS[metric] === 'Milliseconds') return fixed(value);
  return num(value, 0);
};

/**
 * Metrics a local run records but that do not measure what their name says there: InnoDB's
 * Innodb_data_writes and PostgreSQL's buffers written count page flushes, which the servers defer
 * past a short step (the buffer pool holds the data), so a write-only step reads 0/s.
 */
const LOCAL_MISLEADING: Partial<Record<Shown, string>> = {
  WriteIOPS:
    'left out locally: data-file writes are deferred page flushes, which a short step ends before, so they ' +
    'read 0/s even in a step that writes',
};

/** "a, b and c". */
const listText = (xs: readonly string[]): string =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/**
 * The section's title and question by what it shows (a local run measures no statement latency,
 * forwarding wait or free memory): the latency table's columns and the counters' table's head.
 */
function serverMetricsBase(shown: readonly string[], counters: readonly string[] = []) {
  const has = (re: RegExp, xs: readonly string[]) => xs.some((m) => re.test(m));
  const seen = [
    ...(has(/^(Commit|DML|Select)Latency$/, shown) ? ['statement latencies'] : []),
    ...(has(/^Forwarding.*Latency$/, shown) ? ['forwarding waits'] : []),
    ...(has(/IOPs?$/i, shown) ? ['I/O'] : []),
    ...(has(/^FreeableMemory$/, shown) ? ['memory'] : []),
    ...(has(/^(Select|DML|Commit)Throughput/, counters) ? ['statement and commit rates'] : []),
    ...(has(/^Deadlocks/, counters) ? ['deadlocks'] : []),
    ...(has(/^BufferCacheHitRatio/, counters) ? ['buffer cache hits'] : []),
  ];
  const title = [
    ...(has(/Latency$/, shown) ? ['latencies'] : []),
    ...(has(/IOPs?$|^FreeableMemory$/i, shown) ? ['resources'] : []),
    ...(counters.length > 0 ? [countersTitle(counters.map((c) => c.replace(/ \S+$/, '')))] : []),
  ];
  return {
    id: 'server-metrics' as const,
    title: `Server ${listText(title)}`,
    question: `What did the server itself see: ${listText(seen)}?`,
  };
}

export function serverMetricsSection(ctx: Context): ReportSection | null {
  const local = ctx.data.run.backend === 'local';
  const shown = new Set<string>(SHOWN.filter((m) => !(local && LOCAL_MISLEADING[m] !== undefined)));
  const metrics = ctx.data.metrics.filter((m) => shown.has(m.metric) && m.role !== 'client');
  // The throughput and lock counters, a table of their own after the latencies, where the lake has them.
  const counted = serverThroughputTable(ctx);
  // A step renamed for the clients that ran (scan-2-clients): which step of the design it is, under the table.
  const renamed = renamedNote(ctx.groups);
  const throughput = counted && renamed !== null ? { ...counted, notes: [...(counted.notes ?? []), renamed] } : counted;
  const extra = throughput ? [throughput] : [];
  const counters = throughput?.head.slice(3) ?? [];
  if (metrics.length === 0)
    return throughput ? { ...serverMetricsBase([], counters), findings: [], tables: extra, charts: [] } : null;
  // A metric that read 0 in every datapoint of every step says only that nothing happened: one line, no column.
  const allZero = SHOWN.filter((m) => {
    const these = metrics.filter((x) => x.metric === m);
    return these.length > 0 && these.every((x) => x.avg_value === 0 && x.max_value === 0);
  });
  const zeroLine =
    allZero.length > 0
      ? `${allZero.join(', ')} read 0 in every datapoint of every step` +
        (allZero.some((m) => m === 'ReadIOPS' || m === 'VolumeReadIOPs')
          ? ' (the data fits in the buffer pool: no read reached storage)'
          : '') +
        ', so no column for ' +
        (allZero.length === 1 ? 'it' : 'them') +
        '.'
      : null;
  // A rate shown as "0 (max 1)" on every row reads the same: one line, no column.
  const nearZero = SHOWN.filter((m) => {
    const these = metrics.filter((x) => x.metric === m);
    const counted = SERVER_METRICS[m] !== 'Bytes' && SERVER_METRICS[m] !== 'Milliseconds';
    return counted && these.length > 0 && !allZero.includes(m) && these.every((x) => x.avg_value < 0.5);
  });
  const nearZeroLine =
    nearZero.length > 0
      ? nearZero
          .map((m) => {
            const max = Math.max(...metrics.filter((x) => x.metric === m).map((x) => x.max_value));
            return `${m} averaged under 0.5/s at every step (largest datapoint ${num(max, 0)})`;
          })
          .join('; ') +
        (nearZero.some((m) => m === 'ReadIOPS' || m === 'VolumeReadIOPs')
          ? ': the data fits in the buffer pool, so reads almost never reached storage'
          : '') +
        '; no column for ' +
        (nearZero.length === 1 ? 'it' : 'them') +
        '.'
      : null;
  const zeroLines = [zeroLine, nearZeroLine].filter((x): x is string => x !== null);
  const present = SHOWN.filter(
    (m) => metrics.some((x) => x.metric === m) && !allZero.includes(m) && !nearZero.includes(m),
  );
  const base = serverMetricsBase(present, counters);
  const misleading = local
    ? SHOWN.filter((m) => LOCAL_MISLEADING[m] !== undefined).map((m) => `${m} (${LOCAL_MISLEADING[m]!})`)
    : [];
  const leftOutLines = [...zeroLines, ...(misleading.length > 0 ? [`${misleading.join('; ')}.`] : [])];
  // With the counters to show, the section is evidence: what it leaves out goes under their table.
  if (present.length === 0 && throughput)
    return {
      ...base,
      findings: [],
      tables: [{ ...throughput, notes: [...(throughput.notes ?? []), ...leftOutLines] }],
      charts: [],
    };
  if (present.length === 0)
    return {
      ...base,
      findings: [],
      tables: [],
      charts: [],
      leftOut: leftOutLines.join(' '),
    };
  const rows: string[][] = [];
  const highest = new Map<Shown, { value: number; where: string }>();
  for (const g of ctx.groups) {
    const cells = new Set(g.rows.map((r) => r.cell_id));
    const ofStep = metrics.filter((m) => m.step_id === g.stepId && cells.has(m.cell_id));
    for (const role of [...new Set(ofStep.map((m) => m.role))].sort()) {
      const ofRole = ofStep.filter((m) => m.role === role);
      const bound = g.rows.some((r) => r.saturated_clients > 0) ? ' (client-bound)' : '';
      rows.push([
        g.variant,
        ranLabel(g) + bound,
        role,
        ...present.map((metric) => {
          const these = ofRole.filter((m) => m.metric === metric);
          if (these.length === 0) return '-';
          const avg = mean(these.map((m) => m.avg_value));
          const max = Math.max(...these.map((m) => m.max_value));
          const isPartial = these.some((m) => m.partial);
          if (SERVER_METRICS[metric] === 'Milliseconds' && avg > (highest.get(metric)?.value ?? -1))
            highest.set(metric, { value: avg, where: `${g.variant} ${ranLabel(g)} (${role})` });
          return `${valueText(metric, avg)} (max ${valueText(metric, max)})${isPartial ? ' partial' : ''}`;
        }),
      ]);
    }
  }
  const findings = [...highest.entries()].map(
    ([metric, h]) => `${metric}: highest at ${h.where}, ${fixed(h.value)} ms on average over the step.`,
  );
  const notes = [
    'Each value: the mean over the repeats and instances of the metric’s average over the step, and its ' +
      'largest datapoint. Latencies are the server’s own per-statement averages (they leave out the network and ' +
      'the client).',
  ];
  notes.push(...zeroLines);
  if (metrics.some((m) => m.partial))
    notes.push(
      'partial: some datapoints of the window never arrived (metric_windows), so the average covers ' +
        'only those received.',
    );
  const missing = SHOWN.filter((m) => !present.includes(m) && !(local && LOCAL_MISLEADING[m] !== undefined));
  if (local) {
    if (misleading.length > 0) notes.push(`${misleading.join('; ')}.`);
    const why = missing
      .filter((m) => LOCAL_UNMEASURED_METRICS[m] !== undefined)
      .map((m) => `${m} (${LOCAL_UNMEASURED_METRICS[m]!})`);
    if (why.length > 0) notes.push(`Not measured locally: ${why.join('; ')}.`);
  } else if (missing.length > 0) {
    notes.push(
      `Not in this run: ${missing.join(', ')} (not published for this engine or these instances, or the step ` +
        `had no such statements).`,
    );
  }
  return {
    ...base,
    findings,
    tables: [
      {
        title: 'Server metrics per step and instance role',
        head: ['variant', 'step', 'role', ...present.map((m) => `${m} ${unitText(m)}`)],
        rows,
        numeric: present.map((_, i) => i + 3),
        notes,
      },
      ...extra,
    ],
    charts: [],
  };
}
