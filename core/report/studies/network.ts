/**
 * S4, network throughput: per class and client count, Gbps transmitted and received, server and
 * client CPU, and whether each point is CPU-, network- or client-bound (core/report/bounds.ts).
 */
import {
  BOUND_RULES,
  bytesPerSToGbps,
  classifyBound,
  gainThreshold,
  MORE_CLIENTS_GAIN,
  type BoundResult,
  type MoreClients,
} from '../bounds';
import { barChart } from '../charts';
import { networkLimitGbps } from '../../plan/cost';
import { fixed } from '../../format';
import type { ChartBlock, ReportSection } from '../model';
import { awsDesignCheck, classSpreadText, designCheckText, designClauses, designTable } from './network-design';
import { mean, repeatsToResolve, summarize, welchRatioCi } from '../stats';
import { hadCoTenants, isNetworkStudy, uniqueInOrder, type Context, type StepGroup } from '../context';

// ---------------------------------------------------------------------------------------------
// Network bounds (S4)

/** Next to a value averaged over a window with missing datapoints (MetricMean.partial). */
const PARTIAL_MARK = 'partial';

/**
 * A workload's label with the clients that really ran. Where a name promises more clients than ran
 * (scan-12-clients with 2 clients in a local rehearsal), the count that ran leads and the study's follows,
 * and every point of the run is labelled by its clients alone, so no row reads as the named count.
 */
function clientsLabel(ctx: Context, g: StepGroup): string {
  const ran = g.rows[0]?.clients ?? 1;
  const clients = `${ran} client${ran === 1 ? '' : 's'}`;
  const named = /(\d+)-clients?\b/.exec(g.workload);
  if (named !== null && Number(named[1]) !== ran) return `${clients} (study: ${named[1]})`;
  return ctx.groups.some(renamed) ? clients : `${g.workload} (${clients})`;
}

/** A workload named for more (or fewer) clients than ran. */
const renamed = (g: StepGroup): boolean => {
  const named = /(\d+)-clients?\b/.exec(g.workload);
  return named !== null && Number(named[1]) !== (g.rows[0]?.clients ?? 1);
};

/**
 * The CPUs a local variant's server ran on, as its plan note recorded them ("with 2 CPU(s)", no pinning: the
 * machine's): the denominator of the server's and the host's CPU%. null when not recorded.
 */
function localCpus(ctx: Context, variant: string): number | null {
  let notes: { path?: string; message?: string }[] = [];
  try {
    notes = JSON.parse(ctx.data.run.notes || '[]') as typeof notes;
  } catch {
    return null;
  }
  const own = notes.filter((n) => n.path === `variants[name=${variant}].instanceClass`);
  for (const n of [...own, ...notes]) {
    const m = /with (\d+) CPU\(s\)/.exec(n.message ?? '');
    if (m) return Number(m[1]);
  }
  return null;
}

const avgOf = (xs: readonly (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length > 0 ? mean(v) : null;
};

/** A point's server metrics per repeat, and its mean bytes/s each way. */
function measureGroup(ctx: Context, g: StepGroup) {
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
  // Transmit + receive per repeat: the spread of these is the noise the gain with more clients is held to.
  const bytes = perCell.flatMap((c) => (c.tx !== null || c.rx !== null ? [(c.tx ?? 0) + (c.rx ?? 0)] : []));
  return { ran, perCell, bytes, tx: avgOf(perCell.map((c) => c.tx)), rx: avgOf(perCell.map((c) => c.rx)) };
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
    clientCpu: number | null;
    /** Locally: this machine's CPU busy %, the figure the host-bound verdict used. */
    hostCpu: number | null;
    /** Locally: the clients' sysbench CPU as a share of this machine's CPUs (the host's unit), when known. */
    clientsOfHost: number | null;
    limit: number | null;
    bound: BoundResult;
    partialNet: boolean;
    partialCpu: boolean;
    /** The runner found the client saturated, and the connections the point's clients held. */
    client: ClientShown;
  }[] = [];
  let partialRows = 0;
  const coTenant = hadCoTenants(ctx);
  const measured = ctx.groups.map((g) => ({ g, ...measureGroup(ctx, g) }));
  const clientsOf = (g: StepGroup): number => g.rows[0]?.clients ?? 1;
  /** Bytes/s of the variant's point with the most clients, against this point's. */
  // One precision for the Gbps cells: 2 decimals, more when the smallest value needs them for 2 digits.
  const gbpsOf = (x: number | null): number | null => (x === null ? null : bytesPerSToGbps(x));
  const txs = measured.map((m) => gbpsOf(m.tx)).filter((x): x is number => x !== null && x > 0);
  const txDigits = Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(Math.min(...txs, 1)))));
  // Scans send rows and receive only their queries: a receive column of zeros tells nothing, a note says why.
  const showRx = measured.some((m) => m.rx !== null && bytesPerSToGbps(m.rx) >= 0.005);
  const rxDigits = Math.max(3, txDigits);
  const round = (x: number, digits: number): number => Number(x.toFixed(digits));
  /** Transmit + receive Gbps as the table shows them (receive only when its column is shown). */
  const shownGbps = (m: (typeof measured)[number]): number =>
    (m.tx === null ? 0 : round(bytesPerSToGbps(m.tx), txDigits)) +
    (showRx && m.rx !== null ? round(bytesPerSToGbps(m.rx), rxDigits) : 0);
  const moreClientsOf = (
    m: (typeof measured)[number],
  ): (MoreClients & { readonly resolveWith: number | null }) | null => {
    const most = measured
      .filter((x) => x.g.variant === m.g.variant && x.g.target === m.g.target)
      .sort((a, b) => clientsOf(b.g) - clientsOf(a.g))[0];
    if (most === undefined || clientsOf(most.g) <= clientsOf(m.g)) return null;
    // From the Gbps as the table shows them, so a reader recomputes the gain from the cells.
    const [a, b] = [shownGbps(m), shownGbps(most)];
    if (!(a > 0 && b > 0)) return null;
    // With repeats on both sides, the gain's 95% noise on the log scale (as compare's ratios); else none.
    const ci = welchRatioCi(summarize(most.bytes), summarize(m.bytes));
    const noise = Number.isFinite(ci.high) ? ci.high / ci.estimate - 1 : null;
    const repeats = Math.min(most.bytes.length, m.bytes.length);
    // The repeats a side that would resolve a gain of this size from their noise (80% power), for the note.
    const resolveWith = repeatsToResolve(summarize(most.bytes), summarize(m.bytes), { max: 100 });
    return { gain: b / a - 1, clients: clientsOf(most.g), noise, repeats, resolveWith };
  };
  const gains = new Map(measured.map((m) => [m, moreClientsOf(m)]));
  for (const m of measured) {
    const g = m.g;
    const { perCell, ran } = m;
    const partialNet = perCell.some((c) => c.partialNet);
    const partialCpu = perCell.some((c) => c.partialCpu);
    if (partialNet || partialCpu) partialRows += 1;
    const avg = avgOf;
    const { tx, rx } = m;
    const cpu = avg(perCell.map((c) => c.cpu));
    const clientCpu = avg(ran.map((r) => r.client_cpu_avg_pct));
    const limit = local ? null : networkLimitGbps(ctx.prices, g.instanceClass);
    const hostCpu = local ? avg(perCell.map((c) => c.host)) : null;
    // A one-thread sysbench can use one core: its CPU% is of min(threads, CPUs) cores, the host's of all CPUs.
    const cpus = local ? localCpus(ctx, g.variant) : null;
    const clientsOfHost =
      cpus !== null && clientCpu !== null ? (clientCpu * Math.min(g.threads, cpus) * clientsOf(g)) / cpus : null;
    const bound = classifyBound({
      serverCpuPct: cpu,
      // The class limit holds each way at once (Amazon EC2 User Guide, "Amazon EC2 instance network bandwidth").
      networkBytesPerS: tx !== null || rx !== null ? Math.max(tx ?? 0, rx ?? 0) : null,
      networkLimitGbps: limit,
      clientSaturated: ran.some((r) => r.saturated_clients > 0),
      clientCpuPct: clientCpu,
      sharedHostCpuPct: hostCpu,
      moreClients: gains.get(m) ?? null,
      coTenant,
    });
    const gbps = (b: number | null): number | null => (b === null ? null : bytesPerSToGbps(b));
    results.push({
      g,
      tx: gbps(tx),
      rx: gbps(rx),
      cpu,
      clientCpu,
      hostCpu,
      clientsOfHost,
      limit,
      bound,
      partialNet,
      partialCpu,
      client: { saturated: ran.some((r) => r.saturated_clients > 0), connections: clientsOf(g) * g.threads },
    });
  }
  // Locally every class is this machine: one workload's points differ only by noise and by what else ran. With
  // co-tenant load, verdicts that differ for the same load say that load, not the point, decided them.
  if (local && coTenant)
    for (const w of uniqueInOrder(results.map((r) => r.g.workload))) {
      const same = results.filter((r) => r.g.workload === w);
      if (new Set(same.map((r) => r.bound.bound)).size < 2) continue;
      for (const r of same)
        r.bound = {
          ...r.bound,
          bound: 'unclear',
          reason: `the same load on the same local servers got different verdicts (${uniqueInOrder(
            same.map((x) => x.bound.bound),
          ).join(', ')}) while other runs shared this machine: co-tenant load, not the point, decided them`,
          rule: `other runs on the host; same load elsewhere: ${uniqueInOrder(
            same.filter((x) => x !== r).map((x) => boundLabel(x.bound, x.client)),
          ).join(', ')}`,
        };
    }
  // On AWS, the design's check per class: the most clients times the one client's Gbps as the table shows it.
  const mostClients = Math.max(...results.map((r) => clientsOf(r.g)), 1);
  const check = awsDesignCheck(
    local
      ? []
      : results
          .filter((r) => clientsOf(r.g) === 1 && mostClients > 1)
          .map((r) => ({
            variant: r.g.variant,
            oneClientGbps: r.tx === null ? null : round(r.tx, txDigits),
            limit: r.limit,
          })),
    mostClients,
  );
  for (const r of results) {
    const { g, bound, partialNet, partialCpu } = r;
    const mark = (p: boolean): string => (p ? ` ${PARTIAL_MARK}` : '');
    const gain = gains.get(measured.find((m) => m.g === g)!) ?? null;
    rows.push([
      g.variant,
      g.instanceClass,
      clientsLabel(ctx, g),
      r.tx !== null ? `${fixed(r.tx, txDigits)}${mark(partialNet)}` : '-',
      ...(showRx ? [r.rx !== null ? `${fixed(r.rx, rxDigits)}${mark(partialNet)}` : '-'] : []),
      gain !== null ? `${gain.gain >= 0 ? '+' : ''}${fixed(gain.gain * 100, 0)}% with ${gain.clients}` : '-',
      // Locally no limit applies (loopback): the AWS class's figure would read as one the rules held the point to.
      r.limit !== null ? `${r.limit}` : local ? '- (loopback)' : 'unknown',
      ...(local ? [] : [check.cells.get(g.variant) !== undefined && gain !== null ? check.cells.get(g.variant)! : '-']),
      r.cpu !== null ? `${fixed(r.cpu, 0)}${mark(partialCpu)}` : '-',
      r.clientCpu !== null ? fixed(r.clientCpu, 0) : '-',
      ...(local ? [hostCell(r)] : []),
      boundLabel(bound, r.client),
      bound.rule,
    ]);
    findings.push(
      `${g.variant} ` +
        `(${g.instanceClass}), ${clientsLabel(ctx, g)}: ` +
        (bound.bound === 'none' ? '' : `${boundLabel(bound, r.client)}, `) +
        bound.reason +
        (partialNet || partialCpu ? ` (${PARTIAL_MARK}: server metrics incomplete)` : '') +
        `.`,
    );
  }
  const workloads = uniqueInOrder(results.map((r) => r.g.workload));
  const variants = uniqueInOrder(results.map((r) => r.g.variant));
  const limits = uniqueInOrder(ctx.groups.map((g) => networkLimitGbps(ctx.prices, g.instanceClass)));
  const limitOfAll = limits.length === 1 ? limits[0]! : null;
  const cpus = local ? localCpus(ctx, variants[0] ?? '') : null;
  const oneThread = results.every((r) => r.g.threads === 1);
  const gains1 = [...gains.values()].filter((x) => x !== null);
  // Gains past +15% yet inside their repeats' noise: what would resolve them.
  const open = gains1.filter((x) => x.gain >= MORE_CLIENTS_GAIN && x.gain < gainThreshold(x));
  const need = open.map((x) => x.resolveWith);
  const resolveNote =
    open.length === 0
      ? ''
      : ` ${open.length} gain${open.length === 1 ? ' is' : 's are'} within that noise: ` +
        (need.every((x): x is number => x !== null)
          ? `about ${Math.max(...need)} repeats a point would resolve ${open.length === 1 ? 'it' : 'them'}.`
          : 'more than 100 repeats a point would be needed at this noise.');
  const notes = [
    'Verdict (the first rule that holds): the rule column shows the test that decided, with its figures.',
    ...BOUND_RULES.map((r) => `  ${r}`),
    gains1.some((x) => x.noise !== null && x.noise !== undefined)
      ? `Gain threshold: the larger of ${signed(MORE_CLIENTS_GAIN)} and the 95% noise of each gain from its ` +
        `repeats (the rule column shows which).${resolveNote}`
      : `Gain threshold: ${signed(MORE_CLIENTS_GAIN)}, a fixed rule with no measured noise behind it (one repeat ` +
        "a point measures no run-to-run noise); 3 or more repeats (the experiment's repeats) would size it from " +
        'their noise.',
    local
      ? `CPU%: the server's and the host's are % of this machine's ${cpus ?? ''} CPUs (the server: its own ` +
        "process; the host: every process on the machine); the client's is its sysbench's own CPU as % of the " +
        `${oneThread ? 'one core its one thread' : 'cores its threads (one core a thread)'} can use, the mean ` +
        'over the clients' +
        (cpus !== null
          ? `, so the clients take client CPU% × clients${oneThread ? '' : ' × threads'} ÷ ${cpus} of the host. ` +
            'Host = server + clients + other: other is the rest of the machine (the runner and its samplers, ' +
            'the other local servers, anything else running).'
          : '.')
      : 'Server CPU%: CloudWatch CPUUtilization, % of the instance’s vCPUs. Client CPU%: the client instance’s ' +
        'CPU, the mean over the clients.',
    `Gbps with more clients: the most-clients point's ${showRx ? 'transmit + receive' : 'transmit'} Gbps against ` +
      "this one's, both as the table shows them.",
    local
      ? "Transmit and receive Gbps, locally: the server's own Bytes_sent and Bytes_received status counters " +
        '(SHOW GLOBAL STATUS) per second over the step, × 8 ÷ 10^9: the bytes it sent to its clients over ' +
        'loopback. On AWS: CloudWatch NetworkTransmitThroughput and NetworkReceiveThroughput.'
      : 'Transmit and receive Gbps: CloudWatch NetworkTransmitThroughput and NetworkReceiveThroughput, × 8 ÷ 10^9.',
    ...(showRx || !results.some((r) => r.rx !== null)
      ? []
      : [
          `Receive Gbps left out: the server received ${receivedText(results)} at every point (the scans' ` +
            'queries only), so the table, the chart and the gain with more clients all use transmit; the ' +
            'network-bound rule holds transmit to the limit.',
        ]),
  ];
  if (local)
    notes.push(
      `Local run: loopback traffic has no class limit (on AWS${limitOfAll !== null ? ` ${limitOfAll} Gbps` : ''}` +
        ' a class), so no point can be network-bound. CloudWatch network metrics per class are AWS only.',
    );
  if (local && coTenant)
    notes.push(
      'Other runs shared this machine during this run: their load is in the host CPU%, and where one load got ' +
        'different verdicts on the identical local servers, every point of it is unclear (its rule says so).',
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
  // One scale for 1 and N clients: the bars side by side per class show what more clients add.
  const seriesName = (w: string): string => {
    const r = results.find((x) => x.g.workload === w);
    return r !== undefined ? clientsLabel(ctx, r.g) : w;
  };
  // A bar is one repeat's value or the mean of the repeats: no interval is computed for it, and the chart says so.
  const repeats = Math.max(...ctx.groups.map((g) => g.rows.length), 1);
  const noInterval = `${repeats === 1 ? 'one repeat' : `mean of ${repeats} repeats`} a bar: no interval`;
  const counts = uniqueInOrder(results.map((r) => clientsOf(r.g))).sort((a, b) => a - b);
  const charts: ChartBlock[] = [
    barChart(
      'net-gbps',
      `Gbps per class, ${counts.join(' vs ')} clients${local ? '' : ', class limit dashed'} (${noInterval})`,
      variants,
      workloads.map((w) => ({
        name: seriesName(w),
        values: variants.map((v) => {
          const r = results.find((x) => x.g.variant === v && x.g.workload === w);
          return r?.tx ?? null;
        }),
      })),
      'transmit Gbps',
      {
        name: 'class limit Gbps',
        values: variants.map((v) => results.find((r) => r.g.variant === v)?.limit ?? null),
      },
    ),
  ];
  charts.push(
    barChart(
      'net-cpu',
      `Server CPU % ${local ? 'of the host ' : ''}per class (${noInterval})`,
      variants,
      workloads.map((w) => ({
        name: seriesName(w),
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
    tables: [],
    charts: [],
    answer: {
      lines: [
        ...(local ? localQuestionLines(ctx, cpus) : []),
        ...departureLines([...scaleDownLines(ctx, results), ...(local ? designClauses(ctx) : [])]),
        ...gainLines(
          results,
          gains,
          measured,
          local ? classSpreadText(ctx.groups, results, txDigits, cacheMissed(ctx)) : '',
        ),
        ...boundLines(results, cpus, scaleCap(results)),
        ...serverCpuLines(results, local, cpus),
        ...(check.line !== null ? [check.line] : []),
      ],
      tables: [
        {
          title: 'Throughput per class',
          head: [
            'variant',
            'class',
            'workload (clients that ran)',
            'transmit Gbps',
            ...(showRx ? ['receive Gbps'] : []),
            'Gbps with more clients',
            local ? 'class limit Gbps' : 'limit Gbps',
            ...(local ? [] : [`${mostClients} × 1-client Gbps`]),
            local ? 'server CPU% of the host' : 'server CPU% of its vCPUs',
            local ? `client CPU% of its ${oneThread ? 'core' : 'cores'}` : 'client CPU%',
            ...(local ? [cpus !== null ? 'host CPU% = server + clients + other' : 'host CPU%'] : []),
            'bound',
            'rule (from the columns)',
          ],
          rows,
          numeric: [3, 4, 5, 6, 7, 8, 9, 10].slice(0, 6 + (showRx ? 1 : 0)),
          notes,
        },
        ...(local
          ? [
              designTable(
                ctx,
                limitOfAll,
                results.map((r) => ({
                  ...r,
                  verdict: { ruleNo: r.bound.ruleNo, label: boundLabel(r.bound, r.client) },
                })),
              ),
            ].filter((t) => t !== null)
          : []),
      ],
      charts,
    },
  };
}

/** The receive figures the table leaves out, once, in the unit that shows them (KB/s, 10^3 bytes). */
function receivedText(results: readonly { rx: number | null }[]): string {
  const kbs = results.flatMap((r) => (r.rx === null ? [] : [(r.rx * 1e6) / 8]));
  const [lo, hi] = [fixed(Math.min(...kbs), 1), fixed(Math.max(...kbs), 1)];
  return `${lo === hi ? lo : `${lo}–${hi}`} KB/s`;
}

/** Some read left the buffer pool: a hit ratio under 100% or a storage read (memory could then matter). */
const cacheMissed = (ctx: Context): boolean =>
  ctx.data.metrics.some(
    (m) => (m.metric === 'BufferCacheHitRatio' && m.avg_value < 99.995) || (m.metric === 'ReadIOPS' && m.avg_value > 0),
  );

const signed = (x: number): string => `${x >= 0 ? '+' : ''}${fixed(x * 100, 0)}%`;

/**
 * The host's CPU% and what it is made of, each % of this machine's CPUs at the shown rounding: the server
 * (its column), the clients (their sysbench, client CPU% times the cores it can use), and the rest.
 */
function hostCell(r: { hostCpu: number | null; cpu: number | null; clientsOfHost: number | null }): string {
  if (r.hostCpu === null) return '-';
  const [h, s] = [Number(fixed(r.hostCpu, 0)), r.cpu === null ? null : Number(fixed(r.cpu, 0))];
  if (s === null || r.clientsOfHost === null) return `${h}`;
  const c = Number(fixed(r.clientsOfHost, 0));
  const other = h - s - c;
  return `${h} = ${s} + ${c} ${other >= 0 ? '+' : '−'} ${Math.abs(other)}`;
}

/** The rehearsal's departures from the study (clients, steps, client program) as one Answer line. */
function departureLines(parts: readonly string[]): string[] {
  if (parts.length === 0) return [];
  const text = parts.map((p) => p.replace(/\.$/, '')).join('; ');
  return [`${text[0]!.toUpperCase()}${text.slice(1)}.`];
}

/** The clients a scale cap cut a workload to (its name promises more), or null when none was cut. */
function scaleCap(results: readonly { g: StepGroup }[]): number | null {
  const cut = results.filter((r) => renamed(r.g)).map((r) => r.g.rows[0]?.clients ?? 1);
  return cut.length > 0 ? Math.max(...cut) : null;
}

/** The study's client count cut for the rehearsal, said in the Answer: its "more clients" are fewer. */
function scaleDownLines(ctx: Context, results: readonly { g: StepGroup }[]): string[] {
  const cut = uniqueInOrder(
    results.flatMap((r) => {
      const named = /(\d+)-clients?\b/.exec(r.g.workload);
      const ran = r.g.rows[0]?.clients ?? 1;
      return named !== null && Number(named[1]) !== ran ? [`${named[1]}\u0000${ran}`] : [];
    }),
  ).map((k) => k.split('\u0000') as [string, string]);
  if (cut.length === 0) return [];
  const where =
    ctx.data.run.backend === 'local' ? 'in this local rehearsal (servers and clients share one machine)' : 'here';
  return [
    `The study's ${cut.map(([n, ran]) => `${n} clients ran as ${ran}`).join(', ')} ${where}, so "more clients" ` +
      `below compares ${cut.map(([, ran]) => ran).join('/')} clients with 1.`,
  ];
}

/**
 * The server's own CPU beside the verdicts: far below the CPU-bound line at every point, it says the
 * server was not what limited the scans (the client or the host was), which a reader would ask.
 */
function serverCpuLines(
  results: readonly { g: StepGroup; cpu: number | null; hostCpu: number | null; bound: BoundResult }[],
  local: boolean,
  machineCpus: number | null,
): string[] {
  const cpus = results.map((r) => r.cpu).filter((c): c is number => c !== null);
  if (cpus.length === 0 || results.some((r) => r.bound.bound === 'cpu')) return [];
  const [lo, hi] = [fixed(Math.min(...cpus), 0), fixed(Math.max(...cpus), 0)];
  const far = Math.max(...cpus) < 50 ? 'far ' : '';
  if (local) return localServerCpuLines(results, machineCpus);
  return [
    `Server CPU ${lo === hi ? `${lo}%` : `from ${lo}% to ${hi}%`} at every point, ${far}below the CPU-bound line: ` +
      `the server was not the bottleneck; what limited the scans was the client or the network (the verdicts above).`,
  ];
}

/** What more clients moved, per class: the first thing that tells a client limit from a server one. */
function gainLines(
  results: readonly { g: StepGroup }[],
  gains: ReadonlyMap<unknown, MoreClients | null>,
  measured: readonly { g: StepGroup }[],
  /** Locally: why the classes differ (classSpreadText), said after the gains. */
  sameServer: string,
): string[] {
  const each = results.flatMap((r) => {
    const gain = gains.get(measured.find((m) => m.g === r.g)) ?? null;
    return gain !== null ? [{ variant: r.g.variant, ...gain, threshold: gainThreshold(gain) }] : [];
  });
  if (each.length === 0) return [];
  const clients = uniqueInOrder(each.map((e) => e.clients)).join('/');
  return [
    `${clients} clients against 1 moved ${each.map((e) => `${e.variant} ${signed(e.gain)}`).join(', ')} ` +
      `Gbps: ${
        each.every((e) => e.gain >= e.threshold)
          ? 'more clients help at every class, so one client alone did not find the server’s limit'
          : each.every((e) => e.gain < MORE_CLIENTS_GAIN)
            ? 'more clients do not help, so the limit is not the one client'
            : each.every((e) => e.gain < e.threshold)
              ? 'no gain reaches its threshold (the gain threshold note), so whether more clients help is not resolved'
              : 'more clients help at some classes only (the rule column has each)'
      }.${sameServer}`,
  ];
}

/** What a client-limited point's client showed: saturated (the runner's flag), and its connections. */
interface ClientShown {
  readonly saturated: boolean;
  readonly connections: number;
}

/**
 * A verdict's name. More clients moving more with the one client busy says the one client limited the point;
 * only a client the runner found saturated is client-bound, one merely busy (past a chosen cutoff) is
 * one-client-limited: what in it held the point back is not measured.
 */
const boundLabel = (b: BoundResult, c: ClientShown): string =>
  b.bound === 'none'
    ? 'no limit reached'
    : b.bound === 'unclear'
      ? 'unclear'
      : b.bound !== 'client' || c.saturated
        ? `${b.bound}-bound`
        : 'one-client-limited';

/**
 * What each verdict means, by the rule that gives it: the thresholds are stated once, in the table's verdict
 * note (BOUND_RULE), and each row's figures are in its rule column.
 */
const KIND_TEXT: Record<BoundResult['bound'], string> = {
  cpu: 'the server CPU reached the CPU-bound line (rule 1)',
  network: "transmit or receive reached the class's limit (rule 2)",
  client: 'more clients moved more with the one client busy (rule 3)',
  none: 'no limit reached',
  host: "this machine's CPUs were saturated and more clients did not move more (rule 6)",
  unclear: 'unclear',
};

/**
 * A client-limited kind's meaning, with its client CPU as the table shows it: saturated (client-bound), or busy
 * by a chosen cutoff only (one-client-limited). One sentence defines both labels, where the verdict first appears.
 */
function clientText(of: readonly { client: ClientShown; clientCpu: number | null }[]): string {
  if (of[0]!.client.saturated) return 'the one client was saturated and more clients moved more (rule 3)';
  const cpus = of.map((r) => r.clientCpu).filter((c): c is number => c !== null);
  const [lo, hi] = [fixed(Math.min(...cpus), 0), fixed(Math.max(...cpus), 0)];
  const used =
    cpus.length > 0 ? `the one client used ${lo === hi ? lo : `${lo}–${hi}`}% of its core` : 'the one client was';
  return (
    `${used}, busy (>= 70%) but not saturated (>= 90%, which client-bound needs), and more clients sent more, ` +
    'so one client could not load the server (what held it back, its CPU or its wait on each scan, is not measured)'
  );
}

/**
 * The bound verdicts in one sentence, a clause per kind of bound: which points, and the rule that names
 * the kind. No point's figures here: each row's rule column has them, so the sentence cannot contradict one.
 */
function boundLines(
  results: readonly {
    g: StepGroup;
    bound: BoundResult;
    client: ClientShown;
    clientCpu: number | null;
    hostCpu: number | null;
    clientsOfHost: number | null;
  }[],
  machineCpus: number | null,
  /** The clients a scale cap cut the most-clients points to (the plan notes), or null when none was cut. */
  cap: number | null,
): string[] {
  const variants = uniqueInOrder(results.map((r) => r.g.variant));
  const labels = uniqueInOrder(results.map((r) => boundLabel(r.bound, r.client)));
  const clauses = labels.map((label) => {
    const of = results.filter((r) => boundLabel(r.bound, r.client) === label);
    const k = of[0]!.bound.bound;
    // One client count at every class: said once, not a row each; the clients that ran, as the rows lead.
    const ran = (g: StepGroup): string =>
      `${g.rows[0]?.clients ?? 1} client${(g.rows[0]?.clients ?? 1) === 1 ? '' : 's'}`;
    const counts = uniqueInOrder(of.map((r) => ran(r.g)));
    const points =
      counts.length === 1 && of.length === variants.length && variants.length > 1
        ? `every class at ${counts[0]}`
        : of.map((r) => `${r.g.variant} ${ran(r.g)}`).join(', ');
    const why = k === 'unclear' ? unclearWhy(of, machineCpus, cap) : k === 'client' ? clientText(of) : KIND_TEXT[k];
    return `${label} (${of.length} of ${results.length} points: ${points}): ${why}`;
  });
  if (clauses.length === 0) return [];
  const text = clauses.join('; ');
  return [`${text[0]!.toUpperCase()}${text.slice(1)} (each point's figures: the rule column).`];
}

/** Why the unclear points are unclear, from their rules: one reason a kind. */
function unclearWhy(
  points: readonly { g: StepGroup; bound: BoundResult; hostCpu: number | null; clientsOfHost: number | null }[],
  machineCpus: number | null,
  cap: number | null,
): string {
  // A busy host at the most clients, which a fixed cap (or the design) left there: why no more clients ran comes
  // first, then how busy the host was and whose load filled it, from the cells.
  const hostFull = points.filter((p) => /host CPU \d+ >= \d+, no larger client count/.test(p.bound.rule));
  const clients = uniqueInOrder(hostFull.map((p) => p.g.rows[0]?.clients ?? 1)).join('/');
  const mostlyClients = hostFull.every(
    (p) => p.hostCpu !== null && p.clientsOfHost !== null && p.clientsOfHost > p.hostCpu / 2,
  );
  const hosts = hostFull.map((p) => p.hostCpu).filter((h): h is number => h !== null);
  const ceiling =
    `more clients were not tried (${cap !== null ? `this run's scale cap: ${cap} clients` : 'no larger client count'}` +
    `); this machine's ${machineCpus !== null ? `${machineCpus} ` : ''}CPUs were also ` +
    `${hosts.length > 0 ? `${pctRange(hosts)} ` : ''}busy at ${clients} clients` +
    (mostlyClients ? ', mostly from the clients' : '');
  const why = uniqueInOrder(
    points.map(({ bound: { rule: r } }) =>
      /other runs on the host/.test(r)
        ? 'other runs shared this machine'
        : /host CPU \d+ >= \d+, no larger client count/.test(r)
          ? ceiling
          : /no larger client count/.test(r)
            ? 'the client was busy and no larger client count tested more clients'
            : /^[+-]\d+% < /.test(r)
              ? "the gain is within the repeats' noise"
              : 'more clients moved more with the client not busy while the host was',
    ),
  );
  return why.join('; ');
}

/** "from 17% to 19%" or "17%" of shown CPU figures. */
function pctRange(xs: readonly number[]): string {
  const [lo, hi] = [fixed(Math.min(...xs), 0), fixed(Math.max(...xs), 0)];
  return lo === hi ? `${lo}%` : `from ${lo}% to ${hi}%`;
}

/**
 * Locally the server's CPU% is of the machine's CPUs. With fewer connections than CPUs it cannot reach the
 * CPU-bound line: each connection is one server thread (MariaDB's one-thread-per-connection default), which
 * runs on at most one CPU. With as many connections as CPUs, the clients share those CPUs with it.
 */
function localServerCpuLines(
  results: readonly { g: StepGroup; cpu: number | null; hostCpu: number | null }[],
  machineCpus: number | null,
): string[] {
  const conns = (r: { g: StepGroup }): number => (r.g.rows[0]?.clients ?? 1) * r.g.threads;
  const few = machineCpus === null ? [] : results.filter((r) => conns(r) < machineCpus && r.cpu !== null);
  const rest = results.filter((r) => !few.includes(r) && r.cpu !== null);
  const clientsText = (rs: readonly { g: StepGroup }[]): string =>
    uniqueInOrder(rs.map((r) => r.g.rows[0]?.clients ?? 1)).join('/');
  const lines: string[] = [];
  if (few.length > 0) {
    const n = Math.max(...few.map(conns));
    const ceiling = fixed((100 * n) / machineCpus!, 0);
    const threads =
      n === 1
        ? 'one connection is one server thread, which'
        : `${n} connections are ${n} server threads, which together`;
    lines.push(
      `At the ${clientsText(few)}-client points the server used ${pctRange(few.map((r) => r.cpu!))} of this ` +
        `machine's ${machineCpus} CPUs: ${threads} ` +
        `can use at most ${n === 1 ? 'one CPU' : `${n} CPUs`} (${ceiling}% of the host), so the CPU-bound line ` +
        'could not be reached there whatever the class.',
    );
  }
  if (rest.length > 0) {
    const hosts = rest.map((r) => r.hostCpu).filter((h): h is number => h !== null);
    const busy = hosts.length === rest.length && hosts.every((h) => h >= 90);
    lines.push(
      `${few.length > 0 ? `At the ${clientsText(rest)}-client points the` : 'The'} server used ` +
        `${pctRange(rest.map((r) => r.cpu!))} of this machine's CPUs` +
        (busy ? ` while the host was ${pctRange(hosts)} busy` : '') +
        ': the clients ran on the same cores, so the server could not reach the CPU-bound line here, and a low ' +
        'server CPU shows the CPUs were shared, not that the server had room to spare.',
    );
  }
  // One Answer line: the Answer keeps five, and these two sentences answer one question.
  return lines.length > 0 ? [lines.join(' ')] : [];
}

/**
 * What the study asks and why a local run cannot answer it: every class is this machine's server on the same
 * CPUs over loopback, so the classes' network limits are never met. What an AWS run would need to show.
 */
function localQuestionLines(ctx: Context, cpus: number | null): string[] {
  const classes = uniqueInOrder(ctx.groups.map((g) => g.instanceClass));
  const limits = uniqueInOrder(classes.map((c) => networkLimitGbps(ctx.prices, c)));
  const limit = limits.length === 1 && limits[0] !== null ? `"up to ${limits[0]} Gbps"` : 'network limit';
  return [
    `This run cannot test the study's question (does each class reach its ${limit}, its CPU the limit ` +
      'at the small classes and the network at the large ones): the traffic is loopback with no class limit, ' +
      `and every class ran on this machine's same ${cpus === null ? '' : `${cpus} `}CPUs and loopback network; ` +
      'only memory, buffer pool and max_connections are set per class (emulated: the plan notes give each). ' +
      "An AWS run answers it where a class's transmit nears its limit with its server CPU well below 90%" +
      `${designCheckText(ctx)}.`,
  ];
}
