/**
 * S4, network throughput: per class and client count, Gbps transmitted and received, server and
 * client CPU, and whether each point is CPU-, network- or client-bound (core/report/bounds.ts).
 */
import { bytesPerSToGbps, classifyBound, type BoundResult } from '../bounds';
import { barChart } from '../charts';
import { networkLimitGbps } from '../../plan/cost';
import { fixed } from '../../format';
import type { ChartBlock, ReportSection } from '../model';
import { mean } from '../stats';
import { isNetworkStudy, uniqueInOrder, type Context, type StepGroup } from '../context';

// ---------------------------------------------------------------------------------------------
// Network bounds (S4)

/** Next to a value averaged over a window with missing datapoints (MetricMean.partial). */
const PARTIAL_MARK = 'partial';

/**
 * A workload's label with the clients that really ran: a name that promises more clients than ran
 * (scan-12-clients with 2 clients in a local rehearsal) says why.
 */
function clientsLabel(ctx: Context, g: StepGroup): string {
  const ran = g.rows[0]?.clients ?? 1;
  const named = /(\d+)-clients?\b/.exec(g.workload);
  if (named !== null && Number(named[1]) !== ran) {
    const why =
      ctx.data.run.backend === 'local' ? 'scaled down for the local rehearsal' : 'fewer clients than the name';
    return `${g.workload} (${ran} client${ran === 1 ? '' : 's'} ran: ${why})`;
  }
  return `${g.workload} (${ran} client${ran === 1 ? '' : 's'})`;
}

export function networkSection(ctx: Context): ReportSection | null {
  // Network metrics exist for every AWS run; the section is for studies built around data transfer.
  if (!isNetworkStudy(ctx)) return null;
  const hasNetwork = ctx.data.metrics.some((m) => m.metric.startsWith('Network'));
  const local = ctx.data.run.backend === 'local';
  const rows: string[][] = [];
  const findings: string[] = [];
  const results: {
    g: StepGroup;
    tx: number | null;
    rx: number | null;
    cpu: number | null;
    limit: number | null;
    bound: BoundResult;
  }[] = [];
  let partialRows = 0;
  for (const g of ctx.groups) {
    const role = g.target === 'writer' ? 'writer' : 'reader';
    // Every repeat that ran, client-bound ones included: telling client-bound from server-bound is
    // this section's verdict (estimates elsewhere leave client-bound repeats out).
    const ran = g.rows.filter((r) => r.status === 'ok' || r.status === 'overloaded');
    const perCell = ran.map((r) => {
      const ms = ctx.data.metrics.filter((m) => m.cell_id === r.cell_id && m.step_id === g.stepId);
      const server = ms.filter((m) => m.role === role);
      const tx = server.filter((m) => m.metric === 'NetworkTransmitThroughput');
      const rx = server.filter((m) => m.metric === 'NetworkReceiveThroughput');
      const cpu = server.filter((m) => m.metric === 'CPUUtilization');
      const host = ms.filter((m) => m.role === 'client' && m.metric === 'ClientHostCPU');
      const sum = (xs: typeof ms): number | null => (xs.length > 0 ? xs.reduce((a, m) => a + m.avg_value, 0) : null);
      return {
        tx: sum(tx),
        rx: sum(rx),
        cpu: cpu.length > 0 ? mean(cpu.map((m) => m.avg_value)) : null,
        host: host.length > 0 ? mean(host.map((m) => m.avg_value)) : null,
        partialNet: [...tx, ...rx].some((m) => m.partial),
        partialCpu: cpu.some((m) => m.partial),
      };
    });
    const partialNet = perCell.some((c) => c.partialNet);
    const partialCpu = perCell.some((c) => c.partialCpu);
    if (partialNet || partialCpu) partialRows += 1;
    const avg = (xs: (number | null)[]): number | null => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length > 0 ? mean(v) : null;
    };
    const tx = avg(perCell.map((c) => c.tx));
    const rx = avg(perCell.map((c) => c.rx));
    const cpu = avg(perCell.map((c) => c.cpu));
    const clientCpu = avg(ran.map((r) => r.client_cpu_avg_pct));
    const limit = local ? null : networkLimitGbps(ctx.prices, g.instanceClass);
    const bound = classifyBound({
      serverCpuPct: cpu,
      networkBytesPerS: tx !== null || rx !== null ? (tx ?? 0) + (rx ?? 0) : null,
      networkLimitGbps: limit,
      clientSaturated: ran.some((r) => r.saturated_clients > 0),
      clientCpuPct: clientCpu,
      sharedHostCpuPct: local ? avg(perCell.map((c) => c.host)) : null,
    });
    const gbps = (b: number | null): number | null => (b === null ? null : bytesPerSToGbps(b));
    results.push({ g, tx: gbps(tx), rx: gbps(rx), cpu, limit, bound });
    const mark = (p: boolean): string => (p ? ` ${PARTIAL_MARK}` : '');
    rows.push([
      g.variant,
      g.instanceClass,
      clientsLabel(ctx, g),
      tx !== null ? `${fixed(gbps(tx), 2)}${mark(partialNet)}` : '-',
      rx !== null ? `${fixed(gbps(rx), 3)}${mark(partialNet)}` : '-',
      limit !== null ? `${limit}` : local ? 'n/a locally' : 'unknown',
      cpu !== null ? `${fixed(cpu, 0)}${mark(partialCpu)}` : '-',
      clientCpu !== null ? fixed(clientCpu, 0) : '-',
      bound.bound === 'none' ? 'no limit reached' : `${bound.bound}-bound`,
    ]);
    findings.push(
      `${g.variant} ` +
        `(${g.instanceClass}), ${clientsLabel(ctx, g)}: ` +
        (bound.bound === 'none' ? '' : `${bound.bound}-bound, `) +
        bound.reason +
        (partialNet || partialCpu ? ` (${PARTIAL_MARK}: server metrics incomplete)` : '') +
        `.`,
    );
  }
  const workloads = uniqueInOrder(results.map((r) => r.g.workload));
  const variants = uniqueInOrder(results.map((r) => r.g.variant));
  const notes = [
    "CPU-bound: server CPU >= 90%. Network-bound: transmit + receive >= 90% of the class's network limit " +
      '(prices/aws-prices.json). Client-bound: a client saturated its CPU; its numbers describe the client.',
  ];
  if (local)
    notes.push(
      'Local run: loopback traffic has no class limit, so no point can be network-bound; host-bound: this ' +
        "machine's CPUs (shared by the servers and the clients) were >= 90% busy. CloudWatch network metrics per " +
        'class are AWS only.',
    );
  if (!hasNetwork)
    notes.push(
      'This run has no network metrics (CloudWatch NetworkTransmitThroughput/NetworkReceiveThroughput): bytes ' +
        'per second are unknown.',
    );
  if (partialRows > 0)
    notes.push(
      `${PARTIAL_MARK}: some datapoints of the step's window never arrived from CloudWatch/Performance ` +
        `Insights (metric_windows.complete = false); the value averages only the minutes received and may not ` +
        `describe the whole step.`,
    );
  const charts: ChartBlock[] = workloads.map((w, i) => {
    const of = (v: string): (typeof results)[number] | undefined =>
      results.find((r) => r.g.variant === v && r.g.workload === w);
    return barChart(
      `net-gbps-${i}`,
      `${w}: Gbps transmitted and received per class${local ? '' : ' (dashed: the class limit)'}`,
      variants,
      [
        { name: 'transmit Gbps', values: variants.map((v) => of(v)?.tx ?? null) },
        { name: 'receive Gbps', values: variants.map((v) => of(v)?.rx ?? null) },
      ],
      'Gbps',
      { name: 'class limit Gbps', values: variants.map((v) => of(v)?.limit ?? null) },
    );
  });
  charts.push(
    barChart(
      'net-cpu',
      'Server CPU % by class (the 90% CPU-bound line dashed)',
      variants,
      workloads.map((w) => ({
        name: w,
        values: variants.map((v) => results.find((r) => r.g.variant === v && r.g.workload === w)?.cpu ?? null),
      })),
      'CPU %',
      { name: 'CPU-bound at 90%', values: variants.map(() => 90) },
    ),
  );
  return {
    id: 'network',
    title: 'Network throughput and bounds',
    question: 'How many bytes per second does each class deliver, and what limits it: CPU, network, or the clients?',
    findings,
    tables: [
      {
        title: 'Throughput per class',
        head: [
          'variant',
          'class',
          'workload (clients that ran)',
          'transmit Gbps',
          'receive Gbps',
          'limit Gbps',
          'server CPU%',
          'client CPU%',
          'bound',
        ],
        rows,
        numeric: [3, 4, 5, 6, 7],
        notes,
      },
    ],
    charts: [],
    answer: { lines: boundLines(results), tables: [], charts },
  };
}

/** The bound verdicts, one line per kind of bound: which points, and why (the first point's reason). */
function boundLines(results: readonly { g: StepGroup; bound: BoundResult }[]): string[] {
  const kinds = uniqueInOrder(results.map((r) => r.bound.bound));
  return kinds.map((k) => {
    const of = results.filter((r) => r.bound.bound === k);
    const points = of.map((r) => `${r.g.variant} ${r.g.workload}`).join(', ');
    return (
      `${k === 'none' ? 'No limit reached' : `${k[0]!.toUpperCase()}${k.slice(1)}-bound`} (${of.length} ` +
      `of ${results.length} points: ${points}): ${of[0]!.bound.reason}.`
    );
  });
}
