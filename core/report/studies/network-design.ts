/**
 * S4's design beside what ran: the client program, the step length, how many clients, and what differs between
 * the classes locally. Each figure a sentence names is a cell of the design table or of the throughput table.
 */
import { fixed } from '../../format';
import { whole } from '../findings';
import { mean } from '../stats';
import type { TableBlock } from '../model';
import { uniqueInOrder, type Context, type StepGroup } from '../context';

/**
 * The original study's own figures (its write-up): one mysql CLI client reached ~1.17 Gbps, and it measured
 * after ~3 minutes of steady load. The full-scale steps are experiments/network-throughput.json's defaults.
 * @internal
 */
export const S4_STUDY = {
  oneClientGbps: 1.17,
  steadyAfterMin: 3,
  engine: 'Aurora MySQL 3.04.0',
  /** Its table: 1,000,000 rows of ~1 KB (975 MB), one scan ~8 s with its mysql CLI client. */
  rows: 1_000_000,
  scanS: 8,
  /** Its 12-client results per class: transmit Mbps and server CPU % (CloudWatch). */
  results: [
    ['large', 3408, 100],
    ['xlarge', 7184, 98],
    ['2xlarge', 12320, 71],
    ['4xlarge', 12440, 29],
  ],
  /** Its receive throughput across the 12-client points, MB/s. */
  receiveMBs: [1.3, 3.8],
  /** The experiment's full-scale steps, checked against its file by a unit test. */
  fullScale: { durationS: 300, warmupS: 120 },
} as const;

/** The builtin scan whose event is known: one kept connection, every row fetched into Lua and dropped. */
const LUA_SCAN = 'fullscan_1kb.lua';

const usesLuaScan = (ctx: Context): boolean =>
  (ctx.data.spec?.workloads ?? []).length > 0 && (ctx.data.spec?.workloads ?? []).every((w) => w.script === LUA_SCAN);

/** The step length this run measured: one "8 s after a 1 s warm-up", or null when the plan's steps differ. */
function ranSteps(ctx: Context): { durationS: number; warmupS: number } | null {
  const steps = (ctx.data.plan?.cells ?? []).flatMap((c) => c.steps);
  const kinds = uniqueInOrder(steps.map((s) => `${s.durationS}/${s.warmupS}`));
  if (kinds.length !== 1) return null;
  const [durationS, warmupS] = kinds[0]!.split('/').map(Number) as [number, number];
  return { durationS, warmupS };
}

const stepText = (s: { durationS: number; warmupS: number }): string =>
  `${s.durationS} s after a ${s.warmupS} s warm-up`;

/** The clients that ran at once at the most-clients points, and the study's count for them. */
function clientCounts(groups: readonly StepGroup[]): { ran: number; named: number } | null {
  const most = [...groups].sort((a, b) => (b.rows[0]?.clients ?? 1) - (a.rows[0]?.clients ?? 1))[0];
  if (most === undefined) return null;
  const ran = most.rows[0]?.clients ?? 1;
  const named = /(\d+)-clients?\b/.exec(most.workload);
  return { ran, named: named !== null ? Number(named[1]) : ran };
}

/**
 * The clients' own network: a c6i.large is "up to 12.5 Gbps" on a 0.781 Gbps baseline (Amazon EC2 instance types
 * guide, compute optimized instances' network specifications): past its burst credits that is what one sends.
 */
const CLIENT_BASELINE_GBPS: Readonly<Record<string, number>> = { 'c6i.large': 0.781 };

/** The bytes a ~1 KB row sends with its protocol framing, within which the pipeline's check agrees. */
const ROW_BYTES = { low: 800, high: 1300 } as const;

/** A point of the throughput table as the design table reads it: Gbps each way, server CPU, scans/s. */
export interface DesignPoint {
  readonly g: StepGroup;
  readonly tx: number | null;
  readonly rx: number | null;
  readonly cpu: number | null;
  /** The verdict's rule (BOUND_RULES' number) and the label the table shows for it. */
  readonly verdict?: { readonly ruleNo: number; readonly label: string };
}

const span = (xs: readonly number[], digits: number): string => {
  const [lo, hi] = [fixed(Math.min(...xs), digits), fixed(Math.max(...xs), digits)];
  return lo === hi ? lo : `${lo}–${hi}`;
};

/**
 * The pipeline's own check: bytes sent per scanned row, transmit ÷ (scans/s × rows a scan). ~1 KB rows
 * predict ~1,000 B; a far-off figure says a counter or the scan miscounts. null when not measurable.
 */
function bytesPerRow(points: readonly DesignPoint[], rows: number): number[] {
  return points.flatMap((p) => {
    const tps = mean(p.g.ok.map((r) => r.tps).filter((t): t is number => typeof t === 'number' && t > 0));
    return p.tx !== null && Number.isFinite(tps) && tps > 0 ? [(p.tx * 1e9) / 8 / (tps * rows)] : [];
  });
}

/**
 * Locally: this rehearsal against the study's write-up and the planned AWS run, a column each: clients,
 * steps, client program, table, engine, the pipeline's bytes-a-row check and the most-clients results.
 */
export function designTable(
  ctx: Context,
  limit: number | null,
  points: readonly DesignPoint[] = [],
): TableBlock | null {
  const steps = ranSteps(ctx);
  const counts = clientCounts(ctx.groups);
  if (ctx.data.run.backend !== 'local' || steps === null || counts === null || !usesLuaScan(ctx)) return null;
  const { oneClientGbps, steadyAfterMin, fullScale } = S4_STUDY;
  const product = counts.named * oneClientGbps;
  const study =
    limit !== null
      ? `${counts.named}, sized for its mysql CLI client: ${counts.named} × ${fixed(oneClientGbps, 2)} = ` +
        `${fixed(product, 0)} Gbps ${product > limit ? '>' : '<='} ${limit}, the class limit`
      : `${counts.named}`;
  const clientType = ctx.data.spec?.variants[0]?.clients.instanceType;
  const baseline = clientType !== undefined ? CLIENT_BASELINE_GBPS[clientType] : undefined;
  const planned =
    limit !== null
      ? `${counts.named} Lua clients pass ${limit} Gbps only if one sends over ${fixed(limit / counts.named, 2)} ` +
        'Gbps, unknown until its 1-client points measure one' +
        (baseline !== undefined
          ? `; a ${clientType} is itself "up to" on a ${baseline} Gbps baseline, so past their burst ` +
            `${counts.named} send at most ${fixed(counts.named * baseline, 1)} Gbps` +
            (counts.named * baseline < limit ? `, under ${limit}` : '')
          : '')
      : `${counts.named}`;
  const rows = ctx.data.spec?.data.tableSize ?? null;
  const one = points.filter((p) => (p.g.rows[0]?.clients ?? 1) === 1);
  const scanMs = one.flatMap((p) => p.g.ok.map((r) => r.lat_p50_ms).filter((x): x is number => typeof x === 'number'));
  const most = points.filter((p) => (p.g.rows[0]?.clients ?? 1) === counts.ran && counts.ran > 1);
  const perRow = rows !== null ? bytesPerRow(points, rows) : [];
  const mostTx = most.map((p) => p.tx).filter((x): x is number => x !== null);
  const mostCpu = most.map((p) => p.cpu).filter((x): x is number => x !== null);
  const version = ctx.data.spec?.engine.version;
  const studyResults = S4_STUDY.results
    .map(([c, mbps, cpu]) => `${c} ${fixed(mbps / 1000, 2)} Gbps at ${cpu}% CPU`)
    .join(', ');
  const cappedStep = steps.durationS < fullScale.durationS ? " (every step: the rehearsal's cap)" : '';
  return {
    title: 'This rehearsal against the study and the planned AWS run',
    head: ['', 'this run', 'the study (its write-up)', 'the planned AWS run'],
    notes: validatedLines(points, perRow),
    rows: [
      ['clients at once', `${counts.ran}`, study, planned],
      [
        'each point measured',
        `${stepText(steps)}${cappedStep}`,
        `after ~${steadyAfterMin} min of steady load`,
        stepText(fullScale),
      ],
      [
        'client',
        `sysbench Lua scan (${LUA_SCAN}): one connection kept, rows fetched and dropped`,
        `a mysql CLI loop, reconnecting per query and formatting every row (~${fixed(oneClientGbps, 2)} Gbps alone)`,
        'this Lua scan',
      ],
      ...(rows !== null
        ? [
            [
              'table scanned',
              `${whole(rows)} rows of ~1 KB` +
                (scanMs.length > 0
                  ? `; a scan took ~${fixed(mean(scanMs), 0)} ms, so per-query overhead weighs far more than in ` +
                    `a ~${S4_STUDY.scanS} s scan: a client's Gbps here predicts nothing for AWS`
                  : ''),
              `${whole(S4_STUDY.rows)} rows (~1 GB); a scan took ~${S4_STUDY.scanS} s`,
              `${whole(S4_STUDY.rows)} rows`,
            ],
          ]
        : []),
      ...(perRow.length > 0
        ? [
            [
              "bytes sent a scanned row (the server's transmit ÷ sysbench's scans/s ÷ rows a scan)",
              `${span(perRow, 0)} B at every point` +
                (perRow.every((b) => b >= ROW_BYTES.low && b <= ROW_BYTES.high)
                  ? ", as ~1 KB rows predict: the server's byte counter and the clients' own scan count agree"
                  : ': not the ~1 KB a row should send, so a byte counter or the scan count is off'),
              '~1 KB (975 MB for its 1,000,000 rows)',
              // Bytes_sent counts the server's protocol bytes; CloudWatch the interface's, headers and ACKs too.
              'not the same check: CloudWatch counts interface bytes (TCP/IP headers too), Bytes_sent the ' +
                'server’s protocol bytes: a row reads a few percent more',
            ],
          ]
        : []),
      [
        'engine',
        ctx.data.run.server_version || '-',
        S4_STUDY.engine,
        version !== undefined
          ? `Aurora MySQL ${version} (not the study's 3.04.0: the same rows and protocol, so Gbps compare; its CPU% ` +
            'may not)'
          : '-',
      ],
      ...(mostTx.length > 0
        ? [
            [
              `transmit at ${counts.ran > 1 ? 'the most clients' : 'each point'}, server CPU`,
              // Loopback on shared CPUs: a figure here beside the study's would read as a reproduction.
              `not comparable (loopback${scanMs.length > 0 ? `, ~${fixed(mean(scanMs), 0)} ms scans` : ''}, ` +
                `${span(mostCpu, 0)}% server CPU of shared CPUs); ` +
                "the throughput table has this run's",
              `${studyResults}; receive ${S4_STUDY.receiveMBs[0]}–${S4_STUDY.receiveMBs[1]} MB/s (interface ` +
                'bytes: ACKs, a reconnect a query; not comparable with Bytes_received)',
              'to be measured',
            ],
          ]
        : []),
    ],
  };
}

/**
 * What the rehearsal showed works end to end, from what it measured: the steps that ran with the server's
 * byte and CPU counters sampled, the bytes-a-row check when it agreed, a verdict per point; and what it cannot.
 */
function validatedLines(points: readonly DesignPoint[], perRow: readonly number[]): string[] {
  const sampled = points.filter((p) => p.tx !== null && p.cpu !== null).length;
  if (points.length === 0) return [];
  const agrees = perRow.length > 0 && perRow.every((b) => b >= ROW_BYTES.low && b <= ROW_BYTES.high);
  const classes = uniqueInOrder(points.map((p) => p.g.variant)).length;
  const rules = rulesText(points);
  return [
    `Validated end to end by this run: ${points.length} steps on ${classes} emulated classes ran and were ` +
      `stored; the server's byte and CPU counters were sampled at ${sampled} of ${points.length}` +
      `${agrees ? '; the bytes-a-row check agrees' : ''}${rules.fired}. ` +
      `Not validated: ${rules.unexercised}CloudWatch metrics, the class network limits, the AWS clients.`,
  ];
}

/**
 * Which verdict rules decided a point here; and the two the study's question rests on (1 CPU-bound, 2
 * network-bound) where neither fired: locally they cannot, the server sharing the CPUs and loopback having no limit.
 */
function rulesText(points: readonly DesignPoint[]): { fired: string; unexercised: string } {
  const fired = [...new Set(points.flatMap((p) => (p.verdict !== undefined ? [p.verdict.ruleNo] : [])))].sort();
  if (fired.length === 0) return { fired: '', unexercised: '' };
  const named = fired.map((n) => {
    const labels = uniqueInOrder(points.filter((p) => p.verdict?.ruleNo === n).map((p) => p.verdict!.label));
    return `${n} (${labels.join(', ')})`;
  });
  const names: Record<number, string> = { 1: 'CPU-bound', 2: 'network-bound' };
  const unexercised = [1, 2].filter((n) => !fired.includes(n)).map((n) => `${n} (${names[n]})`);
  return {
    fired:
      `; the verdict ${named.length === 1 ? 'rule' : 'rules'} ${named.join(' and ')}, the only ` +
      `${named.length === 1 ? 'one' : 'ones'} that fired`,
    unexercised:
      unexercised.length === 0
        ? ''
        : `verdict ${unexercised.length === 1 ? 'rule' : 'rules'} ${unexercised.join(' and ')}, which the ` +
          `study's question rests on (locally ${unexercised.length === 1 ? 'it' : 'they'} cannot fire: the server ` +
          "shares this machine's CPUs with its clients, and loopback has no limit); ",
  };
}

/** Locally: the step and client departures the design table backs, as clauses of the Answer's one line. */
export function designClauses(ctx: Context): string[] {
  if (designTable(ctx, null) === null) return [];
  const steps = ranSteps(ctx)!;
  const { oneClientGbps, steadyAfterMin, fullScale } = S4_STUDY;
  const capped = steps.durationS < fullScale.durationS ? " (every step at the rehearsal's cap)" : '';
  return [
    `each point measured ${stepText(steps)}${capped} where the study measured after ~${steadyAfterMin} min of ` +
      'steady load, so a burst cannot be told from a sustained rate (the classes’ "up to") here',
    "and the clients are a sysbench Lua scan, not the study's mysql CLI loop, so the verdicts on the one client " +
      `below are about this client, not the study’s ~${fixed(oneClientGbps, 2)} Gbps one (the design table below ` +
      'has each)',
  ];
}

/**
 * The 12-client design's check: the server gives out first only if the clients together can send more than
 * the class limit. Locally it cannot apply (no limit); on AWS each class's from its measured 1-client Gbps.
 */
export function designCheckText(ctx: Context): string {
  const counts = clientCounts(ctx.groups);
  if (counts === null) return '';
  const study = designTable(ctx, null) !== null ? '; the design table below has the study’s' : '';
  return (
    `, and only where its ${counts.named} clients can send more than the limit (${counts.named} × one client's ` +
    `Gbps above it${study}); with no limit on loopback that check cannot apply here`
  );
}

/** Whether the variants ran one after another: no variant's steps overlap another's in time. */
function ranInTurn(groups: readonly StepGroup[]): boolean {
  const spans = uniqueInOrder(groups.map((g) => g.variant)).map((v) => {
    const rows = groups.filter((g) => g.variant === v).flatMap((g) => g.rows);
    return [
      Math.min(...rows.map((r) => Date.parse(r.started_at))),
      Math.max(...rows.map((r) => Date.parse(r.ended_at))),
    ];
  });
  if (spans.some(([a, b]) => !Number.isFinite(a) || !Number.isFinite(b))) return false;
  const sorted = [...spans].sort((x, y) => x[0]! - y[0]!);
  return sorted.every((s, i) => i === 0 || s[0]! >= sorted[i - 1]![1]!);
}

/** Past this spread between the classes' shown transmit cells, the classes are said to differ. */
const CLASSES_ALIKE = 0.1;

/**
 * Locally, the classes' spread per client count: every class is this machine's server on the same CPUs, so
 * within a few percent they are alike, as expected. A larger spread names what could cause it, memory only
 * where the data did not stay in the buffer pool (`cacheMissed`).
 */
export function classSpreadText(
  groups: readonly StepGroup[],
  results: readonly { g: StepGroup; tx: number | null }[],
  digits: number,
  cacheMissed = false,
): string {
  if (uniqueInOrder(results.map((r) => r.g.variant)).length < 2) return '';
  const clientsOf = (g: StepGroup): number => g.rows[0]?.clients ?? 1;
  const counts = uniqueInOrder(results.map((r) => clientsOf(r.g))).sort((a, b) => a - b);
  let widest = 0;
  const spans = counts.flatMap((n) => {
    const txs = results.filter((r) => clientsOf(r.g) === n && r.tx !== null).map((r) => r.tx!);
    if (txs.length < 2) return [];
    // From the cells as shown, so the spread is recomputable from the table.
    const [lo, hi] = [Number(fixed(Math.min(...txs), digits)), Number(fixed(Math.max(...txs), digits))];
    if (lo > 0) widest = Math.max(widest, hi / lo - 1);
    return [`${n} client${n === 1 ? '' : 's'} ${fixed(lo, digits)}–${fixed(hi, digits)}`];
  });
  if (spans.length === 0) return '';
  const pct = `${fixed(widest * 100, widest < 0.1 ? 1 : 0)}%`;
  if (widest <= CLASSES_ALIKE)
    return (
      ` No difference between the classes beyond ${pct} (transmit Gbps ${spans.join(', ')}), and none is ` +
      'expected here: every class is the same server on the same CPUs.'
    );
  const repeats = Math.max(...groups.map((g) => g.ok.length), 1);
  const causes = [
    ...(repeats === 1 ? ['one repeat a point measures no noise'] : []),
    ...(ranInTurn(groups) ? ['the classes ran one after another'] : []),
    ...(cacheMissed ? ['their emulated buffer pools differ and some reads missed them'] : []),
  ];
  return (
    ` The classes differ by up to ${pct} (transmit Gbps ${spans.join(', ')}), not by their CPUs or network ` +
    `(the same here)${causes.length > 0 ? `: ${causes.join('; ')}` : ''}.`
  );
}

/** On AWS: per class, the most clients × the one client's shown Gbps against the class limit (a column each). */
export function awsDesignCheck(
  points: readonly { variant: string; oneClientGbps: number | null; limit: number | null }[],
  clients: number,
): { cells: Map<string, string>; line: string | null } {
  const cells = new Map<string, string>();
  const over: string[] = [];
  const under: string[] = [];
  for (const p of points) {
    if (p.oneClientGbps === null || p.limit === null) continue;
    const product = clients * p.oneClientGbps;
    cells.set(p.variant, fixed(product, 1));
    (product > p.limit ? over : under).push(p.variant);
  }
  if (over.length + under.length === 0) return { cells, line: null };
  const parts = [
    ...(over.length > 0 ? [`above it at ${over.join(', ')}`] : []),
    ...(under.length > 0
      ? [`below it at ${under.join(', ')}, where ${clients} clients could not reach the limit, so a miss is theirs`]
      : []),
  ];
  return {
    cells,
    line:
      `${clients} clients make the server give out first only where ${clients} × one client's Gbps is above ` +
      `the class limit (the column "${clients} × 1-client Gbps"): ${parts.join('; ')}.`,
  };
}
