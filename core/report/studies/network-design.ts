/**
 * S4's design beside what ran: the client program, the step length, how many clients, and what differs between
 * the classes locally. Each figure a sentence names is a cell of the design table or of the throughput table.
 */
import { fixed } from '../../format';
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

/** Locally: this rehearsal's clients, steps and client program against the study's, as a small table. */
export function designTable(ctx: Context, limit: number | null): TableBlock | null {
  const steps = ranSteps(ctx);
  const counts = clientCounts(ctx.groups);
  if (ctx.data.run.backend !== 'local' || steps === null || counts === null || !usesLuaScan(ctx)) return null;
  const { oneClientGbps, steadyAfterMin, fullScale } = S4_STUDY;
  const product = counts.named * oneClientGbps;
  const design =
    limit !== null
      ? `${counts.named} (${counts.named} × ${fixed(oneClientGbps, 2)} = ${fixed(product, 0)} Gbps ` +
        `${product > limit ? '>' : '<='} ${limit}, the class limit)`
      : `${counts.named}`;
  return {
    title: "This rehearsal against the study's design",
    head: ['', 'this run', 'the study on AWS'],
    rows: [
      ['clients at once', `${counts.ran}`, design],
      [
        'each point measured',
        stepText(steps),
        `${stepText(fullScale)} (the study: after ~${steadyAfterMin} min of steady load)`,
      ],
      [
        'client',
        `sysbench Lua scan (${LUA_SCAN}): one connection kept, rows fetched and dropped`,
        `the study: a mysql CLI loop, reconnecting per query and formatting every row (~${fixed(oneClientGbps, 2)} ` +
          'Gbps alone); the AWS run: this Lua scan',
      ],
    ],
  };
}

/** Locally: the step and client departures the design table backs, as clauses of the Answer's one line. */
export function designClauses(ctx: Context): string[] {
  if (designTable(ctx, null) === null) return [];
  const steps = ranSteps(ctx)!;
  const { oneClientGbps, steadyAfterMin, fullScale } = S4_STUDY;
  return [
    `each point measured ${stepText(steps)} where the study measured after ~${steadyAfterMin} min of steady ` +
      'load, so a burst cannot be told from a sustained rate (the classes’ "up to") here; the AWS run measures ' +
      stepText(fullScale),
    "and the clients are a sysbench Lua scan, not the study's mysql CLI loop, so the client-bound verdicts " +
      `below are about this client and do not transfer to the study’s ~${fixed(oneClientGbps, 2)} Gbps single ` +
      'client (the design table below has each)',
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
