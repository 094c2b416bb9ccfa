/**
 * S2, thread sweeps: per sweep and variant, TPS, QPS and tail latency by threads with their
 * intervals, the peak and the fall-off past it, the 100-point score (mean QPS + mean TPS over the
 * sweep, best = 100) with the noise of its ranking, the thread pool against one thread per
 * connection on the same offering, and errors told apart: connection limits (a step refused) from
 * deadlocks and lock waits (sysbench's ignored errors, normal OLTP behaviour below 0.1%).
 *
 * A ranking or a fall-off is called beyond the noise only from repeats: one run's interval batches
 * see how that run wobbled, not how runs differ.
 */
import { lineChart, type XYSeries } from '../charts';
import { aboveEverywhere, systematicGap, systematicGapSentence, type SystematicGap } from './thread-sweep-gap';
import { clip, errorKind, fixed, num, pct } from '../../format';
import type { ChartBlock, ReportSection, TableBlock } from '../model';
import type { TargetScore } from '../score';
import { overallOf, sweepScoresOf, sweepsWithout } from './thread-sweep-drop';
import { analyzeSweep } from '../sweep';
import { batchMeans, mean, summarize, welchRatioCi, repeatsToResolve } from '../stats';
import { stepKey } from '../load';
import { unsteadyReasons, UNSTEADY_RULE, type Unsteady } from '../steady-state';
import { analyzeLocalCaveats, caveatsTable, parameterSentence, scaleSentence, scopeSentence } from '../local-caveats';
import type { LocalCaveats } from '../local-caveats';
import { runOrderOf, runTrend, windowCell, clockText, type RunOrder, type RunTrend } from '../run-order';
import {
  COMMIT_ONLY,
  parameterEffectSentence,
  parametersInEffect,
  valueText,
  withParameterRows,
  type ParameterInEffect,
} from '../parameter-effect';
import {
  rangeText,
  ratioFinding,
  ratioText,
  verdictText,
  WITHIN_RUN_NOTE,
  type Estimated,
  type RatioFinding,
  ratioCell,
} from '../findings';
import {
  clientBoundFinding,
  clientBoundMark,
  estimate,
  MIN_SWEEP_THREADS,
  ratioOf,
  SIGNIFICANT_ERROR_SHARE,
  significantErrors,
  uniqueInOrder,
  type Context,
  type StepGroup,
} from '../context';

interface SweepPointFinding {
  readonly threads: number;
  readonly tps: Estimated;
  readonly qps: Estimated;
  readonly latency: Estimated;
  readonly failed: boolean;
  /** Every repeat's client saturated and was left out: no measurement of the server, not a failure. */
  readonly leftOut: boolean;
  /** Why a repeat's intervals were not a steady state (steady-state.ts); [] when steady. */
  readonly unsteady: readonly Unsteady[];
  /** " [client-bound 1/3, left out]" when a repeat's client saturated its CPU; '' otherwise. */
  readonly clientBound: string;
}

interface SweepErrorPoint {
  readonly threads: number;
  readonly kind: 'connection' | 'deadlocks' | 'other';
  readonly what: string;
  readonly errors: number;
  /** Errors per committed transaction (sysbench's events, what TPS counts): not a share, errors can outnumber them. */
  readonly perTransaction: number | null;
  readonly reconnects: number;
  readonly error: string | null;
}

interface SweepVariantFinding {
  readonly variant: string;
  readonly points: readonly SweepPointFinding[];
  readonly peakThreads: number | null;
  readonly peakTps: number | null;
  /** The first thread count past the peak below 90% of it whose interval is below 100% (shownFall). */
  readonly fallOffThreads: number | null;
  /** That point over the peak, with an interval from the repeats when there are 2+ a side. */
  readonly fallOff: RatioFinding | null;
  readonly lastShareOfPeak: number | null;
  readonly errorPoints: readonly SweepErrorPoint[];
}

interface ThreadSweepFinding {
  readonly label: string;
  /** Queries per committed transaction the score counts (QPS of committed work = TPS x this). */
  readonly queriesPerTransaction: number;
  readonly latencyPercentile: number;
  readonly variants: readonly SweepVariantFinding[];
  /** Thread counts left out of every variant's score: unsteady in at least one variant. */
  readonly unscored: readonly number[];
  readonly scores: readonly TargetScore[];
}

interface ThreadPoolVerdict {
  readonly pool: string;
  readonly perConnection: string;
  /** The pool variant's overall score over the per-connection one's. */
  readonly ratio: RatioFinding;
}

export interface ThreadSweepFindings {
  readonly kind: 'thread-sweep';
  readonly sweeps: readonly ThreadSweepFinding[];
  readonly threadCounts: readonly number[];
  /** Overall 100-point score per variant (mean of its per-sweep scores); empty with one variant. */
  readonly overall: readonly { readonly variant: string; readonly score: number }[];
  /** The best two's score ratio with its interval: run to run from repeats, else within one run. */
  readonly ranking: {
    readonly best: string;
    readonly second: string;
    readonly ratio: RatioFinding;
    readonly repeatsToResolve: number | null;
  } | null;
  readonly threadPool: readonly ThreadPoolVerdict[];
  readonly clientBound: string | null;
  readonly caveats: LocalCaveats;
  /** The parameter differences as the servers ran them (null: the lake records no server values). */
  readonly parameters: readonly ParameterInEffect[] | null;
  /** Sweeps whose transactions commit, and those that commit nothing (sysbench --skip-trx). */
  readonly commits: { readonly committing: readonly string[]; readonly notCommitting: readonly string[] };
  /**
   * With one repeat a point: two variants that are the same server here (an A/A pair) measure the
   * run-to-run noise the ranking's within-run interval cannot see, and how many repeats would resolve it.
   */
  readonly aa: {
    readonly higher: string;
    readonly lower: string;
    /** The pair's overall score ratio, higher over lower. */
    readonly ratio: number;
    readonly repeatsToResolve: number | null;
    /** How many A/A pairs and per-workload ratios the noise is sized from: few, so a rough size. */
    readonly pairs: number;
    readonly samples: number;
    /** The widest overall score ratio between variants that differ here only in a parameter no step can feel. */
    readonly near: { readonly higher: string; readonly lower: string; readonly ratio: number } | null;
  } | null;
  /**
   * Per workload, the widest score ratio between servers that ran identically for it here (the same
   * server and every recorded variable alike, but those that cannot act on it): the run's noise.
   */
  readonly identical: readonly IdenticalGap[];
  /** The run's noise: the widest of those gaps (identical, near-A/A, A/A); null without such a pair. */
  readonly noise?: {
    readonly ratio: number;
    readonly higher: string;
    readonly lower: string;
    /** The workload whose score gap it is; null for an overall score gap. */
    readonly sweep: string | null;
    /** Repeats a side the best two would need against this noise. */
    readonly repeatsToResolve: number | null;
  } | null;
  /**
   * When one point makes the noise (the thread count where its pair's TPS differ most): that point, the
   * noise without it, and each thread pool's overall score ratio without it.
   */
  readonly withoutPoint?: {
    readonly variant: string;
    readonly sweep: string;
    readonly threads: number;
    readonly tps: number;
    readonly against: number;
    readonly noise: number | null;
    readonly pools: readonly { readonly pool: string; readonly ratio: number }[];
  } | null;
  /** The overall scores without the most threads run, when those steps were long (not a steady state). */
  readonly withoutTop?: {
    readonly threads: number;
    readonly overall: readonly { variant: string; score: number }[];
  } | null;
  /** The highest max_connections the servers ran with (server_config), or null when none is recorded. */
  readonly maxConnections: number | null;
  /** The widest score gap that holds at every scored thread count: systematic in this run, not noise. */
  readonly systematic?: SystematicGap | null;
  /** Locally, the range over steps of the client's and the writer's mean CPU %; null on AWS or unrecorded. */
  readonly cpuShares?: {
    readonly client: readonly [number, number];
    readonly server: readonly [number, number];
  } | null;
  /** The CPUs the local servers shared (the plan note "with 2 CPU(s)"); null when not recorded. */
  readonly cpus?: number | null;
  /** The plan note's scaled data ("4 x 10,000 rows instead of 10 x 10,000,000"), null at full scale. */
  readonly dataScale?: string | null;
  /** Locally, the servers each variant ran as (writer, replicas, binary log); null on AWS. */
  readonly topology?: string | null;
  /** The order the variants ran in (the lake's step times); null without times. */
  readonly runOrder: RunOrder | null;
  /** Overall scores against that order. */
  readonly trend: RunTrend | null;
}

interface IdenticalGap {
  readonly sweep: string;
  readonly higher: string;
  readonly lower: string;
  readonly ratio: number;
  /** The sweep's best variant's score over the next one's. */
  readonly lead: { readonly best: string; readonly next: string; readonly ratio: number } | null;
}

/** Local variants whose every differing parameter ran alike: their score gap is noise too. */
function nearAA(
  ctx: Context,
  overall: readonly { variant: string; score: number }[],
  parameters: readonly ParameterInEffect[] | null,
): { higher: string; lower: string; ratio: number } | null {
  if (ctx.data.run.backend !== 'local' || parameters === null) return null;
  const studied = (name: string): string => {
    const v = ctx.data.spec?.variants.find((x) => x.name === name);
    const p = { ...(v?.clusterParameters ?? {}), ...(v?.instanceParameters ?? {}) } as Record<string, unknown>;
    return STUDIED_PARAMETERS.map((k) => JSON.stringify(p[k] ?? null)).join('\u0000');
  };
  const ran = (name: string): string =>
    parameters
      .filter((p) => p.effect === 'differs')
      .map((p) => p.values.find((x) => x.variant === name)?.value ?? '')
      .join('\u0000');
  let out: { higher: string; lower: string; ratio: number } | null = null;
  for (const a of overall)
    for (const b of overall)
      if (
        a.score > b.score &&
        b.score > 0 &&
        studied(a.variant) === studied(b.variant) &&
        ran(a.variant) === ran(b.variant)
      )
        if (out === null || a.score / b.score > out.ratio)
          out = { higher: a.variant, lower: b.variant, ratio: a.score / b.score };
  return out;
}

/**
 * Queries per committed transaction of a sweep's workload, from its steps without errors. sysbench's
 * QPS also counts the statements of transactions a deadlock rolled back (an ignored error restarts
 * the event, and the statements run before it stay counted: in sysbench 1.0's db_driver.c only the
 * failing statement counts as an error), so a score from raw QPS rewards deadlocks. The score counts
 * the queries of committed transactions: TPS times this figure.
 */
function queriesPerTransaction(groups: readonly StepGroup[]): number | null {
  const rows = groups.flatMap((g) => g.ok).filter((r) => (r.tps ?? 0) > 0 && r.qps !== null);
  const clean = rows.filter((r) => r.errors === 0).map((r) => r.qps! / r.tps!);
  const xs = (clean.length > 0 ? clean : rows.map((r) => r.qps! / r.tps!)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  return clean.length > 0 ? xs[Math.floor(xs.length / 2)]! : xs[0]!;
}

/**
 * Whether any step was client-bound, in the score's note: a rule alone ("left out when ...") does not say
 * whether it applied; locally the client shares the server's CPUs, so no step measures the server alone.
 */
function clientBoundScoreText(f: ThreadSweepFindings): string {
  const any = f.sweeps.some((s) => s.variants.some((v) => v.points.some((p) => p.clientBound !== '')));
  if (any) return 'a client-bound one (its client saturated its CPU) left out is not scored.';
  const c = f.cpuShares;
  const range = ([lo, hi]: readonly [number, number]): string =>
    Math.round(lo) === Math.round(hi) ? `${Math.round(lo)}%` : `${Math.round(lo)}–${Math.round(hi)}%`;
  return (
    'no step was client-bound (no client saturated its CPU), so none is left out' +
    (f.caveats.local
      ? c != null
        ? `; locally client and server share the CPUs: per step sysbench used ${range(c.client)} of the CPUs ` +
          `its threads can use, the server ${range(c.server)} CPUUtilization.`
        : ", though locally each client shares the server's CPUs, in every step."
      : '.')
  );
}

/** Locally, the range over steps of the client's and the writer's mean CPU: how they shared the machine. */
function cpuSharesOf(ctx: Context, groups: readonly StepGroup[]): ThreadSweepFindings['cpuShares'] {
  if (ctx.data.run.backend !== 'local') return null;
  const rows = groups.flatMap((g) => g.ok);
  const client = rows.flatMap((r) => (r.client_cpu_avg_pct == null ? [] : [r.client_cpu_avg_pct]));
  const keys = new Set(rows.map((r) => stepKey(r.cell_id, r.step_id)));
  const server = ctx.data.metrics
    .filter((m) => m.metric === 'CPUUtilization' && m.role === 'writer' && keys.has(stepKey(m.cell_id, m.step_id)))
    .map((m) => m.avg_value);
  if (client.length === 0 || server.length === 0) return null;
  return {
    client: [Math.min(...client), Math.max(...client)],
    server: [Math.min(...server), Math.max(...server)],
  };
}

/**
 * The sentence beside the score naming the points it leaves out and why; [] when none. Leaving a
 * point out changes the mean it is scored by, so a reader must see which ones.
 */
function leftOutScoreNote(f: ThreadSweepFindings): string[] {
  const named = f.sweeps.flatMap((s) =>
    s.variants.flatMap((v) => {
      const ts = v.points.filter((p) => p.leftOut).map((p) => p.threads.toLocaleString('en-US'));
      return ts.length > 0 ? [`${v.variant} ${s.label} at ${ts.join(', ')} threads`] : [];
    }),
  );
  if (named.length === 0) return [];
  return [
    `Left out of the score: ${named.join('; ')} (client-bound: the client saturated its CPU, so the point ` +
      'measured the client, not the server). That variant’s mean is over its other thread counts; counted as 0, ' +
      'as a failure is, the point would lower its score.',
  ];
}

/** How a point whose every repeat was left out as client-bound reads, in every table. */
const LEFT_OUT_TEXT = 'left out: client-bound';

const sweepKey = (g: StepGroup): string => `${g.workload}\u0000${g.rate}\u0000${g.target}`;

function errorPointOf(g: StepGroup, leftOut: boolean): SweepErrorPoint | null {
  const bad = g.rows.filter(significantErrors);
  if (bad.length === 0) return null;
  const failed = g.ok.length === 0 && !leftOut;
  const error = g.rows.find((r) => r.error)?.error ?? null;
  const kindText = errorKind(error);
  const kind = /connection|connect/i.test(kindText)
    ? 'connection'
    : /deadlock|lock wait|ignored SQL/i.test(kindText)
      ? 'deadlocks'
      : 'other';
  // Errors and transactions over the same rows: the transactions TPS counts (sysbench's events).
  const errors = bad.reduce((a, r) => a + r.errors, 0);
  const events = bad.reduce((a, r) => a + (r.events ?? 0), 0);
  return {
    threads: g.threads,
    kind,
    what: `${leftOut ? `${LEFT_OUT_TEXT}, with errors` : failed ? 'step failed' : 'ran with errors'}: ${kindText}`,
    errors,
    perTransaction: events > 0 ? errors / events : null,
    reconnects: g.rows.reduce((a, r) => a + r.reconnects, 0),
    error,
  };
}

/** Why any repeat of a point did not run at a steady state, from its per-interval TPS. */
function unsteadyOf(ctx: Context, g: StepGroup): Unsteady[] {
  const planned = new Map<string, number>();
  for (const c of ctx.data.plan?.cells ?? [])
    for (const s of c.steps) planned.set(stepKey(c.cellId, s.stepId), s.durationS);
  const reasons = g.ok.flatMap((r) =>
    unsteadyReasons(
      (ctx.data.intervals.get(stepKey(r.cell_id, g.stepId)) ?? []).map((i) => i.tps),
      planned.get(stepKey(r.cell_id, g.stepId)) ?? null,
    ),
  );
  return uniqueInOrder(reasons);
}

/** A sweep's groups and its best variant's score sum (mean QPS + mean TPS), which scores 100. */
interface ScoredSweep {
  readonly groups: readonly StepGroup[];
  readonly bestSum: number;
  /** Queries per committed transaction (queriesPerTransaction). */
  readonly qpt: number;
}

/** One sample of a variant's score sum in one sweep: per repeat, or per batch of one run's intervals. */
function sumSamples(
  ctx: Context,
  gs: readonly StepGroup[],
  qpt: number,
): { values: number[]; covers: 'run-to-run' | 'within-run' } {
  if (gs.length > 0 && gs.every((g) => g.rows.length >= 2)) {
    const repeats = uniqueInOrder(gs.flatMap((g) => g.rows.map((r) => r.repeat)));
    return {
      values: repeats.map((rep) =>
        mean(
          gs.map((g) =>
            g.rows
              .filter((r) => r.repeat === rep && r.status !== 'failed')
              .reduce((a, r) => a + (r.tps ?? 0) * (1 + qpt), 0),
          ),
        ),
      ),
      covers: 'run-to-run',
    };
  }
  const perGroup = gs.map((g) =>
    g.ok.length === 0
      ? []
      : batchMeans(
          (ctx.data.intervals.get(stepKey(g.ok[0]!.cell_id, g.stepId)) ?? []).map((i) => i.tps * (1 + qpt)),
          5,
        ),
  );
  const k = Math.min(...perGroup.map((b) => (b.length === 0 ? Infinity : b.length)));
  if (!Number.isFinite(k) || k < 2) return { values: [], covers: 'within-run' };
  return { values: Array.from({ length: k }, (_, i) => mean(perGroup.map((b) => b[i] ?? 0))), covers: 'within-run' };
}

/**
 * Samples of a variant's overall score, computed as the score is (each sweep's sum over its best
 * variant's, times 100, averaged over the sweeps) but per repeat, or per batch of one run.
 */
function scoreSamples(
  ctx: Context,
  sweeps: readonly ScoredSweep[],
  variant: string,
): { values: number[]; covers: 'run-to-run' | 'within-run' } {
  const per = sweeps.map((s) => ({
    best: s.bestSum,
    ...sumSamples(
      ctx,
      s.groups.filter((g) => g.variant === variant),
      s.qpt,
    ),
  }));
  const k = Math.min(...per.map((p) => p.values.length));
  const covers = per.every((p) => p.covers === 'run-to-run') ? 'run-to-run' : 'within-run';
  if (!Number.isFinite(k) || k < 2 || per.some((p) => !(p.best > 0))) return { values: [], covers };
  return { values: Array.from({ length: k }, (_, i) => mean(per.map((p) => (100 * p.values[i]!) / p.best))), covers };
}

/**
 * The ratio of two overall scores as displayed (score a / score b), with the width of its interval
 * from the score samples (Welch on the log scale): the sentence, the table and the JSON carry the
 * one ratio the score table shows.
 */
function scoreRatio(
  ctx: Context,
  sweeps: readonly ScoredSweep[],
  a: { variant: string; score: number },
  b: { variant: string; score: number },
): { ratio: RatioFinding; repeatsToResolve: number | null } {
  const estimate = b.score > 0 ? a.score / b.score : null;
  const sa = scoreSamples(ctx, sweeps, a.variant);
  const sb = scoreSamples(ctx, sweeps, b.variant);
  const covers = sa.covers === 'run-to-run' && sb.covers === 'run-to-run' ? 'run-to-run' : 'within-run';
  if (estimate === null || sa.values.length < 2 || sb.values.length < 2)
    return { ratio: { estimate, interval: null, direction: 'unknown' }, repeatsToResolve: null };
  const ca = summarize(sa.values);
  const cb = summarize(sb.values);
  const w = welchRatioCi(ca, cb);
  const half = Math.log(w.high / w.estimate);
  const ci = { ...w, estimate, low: estimate * Math.exp(-half), high: estimate * Math.exp(half) };
  return {
    ratio: ratioFinding(ci, covers),
    repeatsToResolve: covers === 'run-to-run' ? repeatsToResolve(ca, cb) : null,
  };
}

/** The first A/A pair's overall score ratio and, from all pairs' per-workload ratios, the repeats the ranking needs. */
function aaNoise(
  sweeps: readonly ThreadSweepFinding[],
  overall: readonly { variant: string; score: number }[],
  pairs: readonly (readonly string[])[],
  ranking: ThreadSweepFindings['ranking'],
): Omit<NonNullable<ThreadSweepFindings['aa']>, 'near'> | null {
  if (ranking === null || ranking.ratio.interval?.covers === 'run-to-run') return null;
  const score = (v: string): number | undefined => overall.find((o) => o.variant === v)?.score;
  const logs = pairs.flatMap((g) =>
    sweeps.flatMap((s) => {
      const [a, b] = [g[0]!, g[1]!].map((v) => s.scores.find((x) => x.target === v)?.score ?? 0);
      return a! > 0 && b! > 0 ? [Math.log(a! / b!)] : [];
    }),
  );
  const first = pairs.find((g) => score(g[0]!) !== undefined && score(g[1]!) !== undefined);
  if (first === undefined || logs.length === 0) return null;
  const [x, y] = [first[0]!, first[1]!].sort((p, q) => score(q)! - score(p)!);
  // Each A/A log ratio is the difference of two single runs: its variance is twice one run's.
  const sigma = Math.sqrt(logs.reduce((acc, l) => acc + l * l, 0) / logs.length / 2);
  const best = score(ranking.best)!;
  const second = score(ranking.second)!;
  return {
    higher: x!,
    lower: y!,
    ratio: score(x!)! / score(y!)!,
    pairs: pairs.length,
    samples: logs.length,
    repeatsToResolve: repeatsToResolve(
      { mean: best, sd: sigma * best, n: 2 },
      { mean: second, sd: sigma * second, n: 2 },
    ),
  };
}

/** The A/A noise with the widest near-A/A gap beside it, when wider than the A/A pair's own. */
const withNear = (
  aa: Omit<NonNullable<ThreadSweepFindings['aa']>, 'near'> | null,
  near: { higher: string; lower: string; ratio: number } | null,
): ThreadSweepFindings['aa'] =>
  aa === null ? null : { ...aa, near: near !== null && near.ratio > aa.ratio ? near : null };

/**
 * Parameters no step of a workload that writes nothing can feel: the commit ones (a read-only sweep run
 * with --skip-trx commits nothing) and innodb_flush_neighbors, which acts only when dirty pages are
 * flushed (MariaDB KB, "InnoDB System Variables"): SELECTs make none.
 */
const INERT_WITHOUT_WRITES: ReadonlySet<string> = new Set([...COMMIT_ONLY, 'innodb_flush_neighbors']);

/**
 * Per sweep, the widest score ratio between variants whose servers ran alike for that workload:
 * locally one binary, and every variable server_config records alike but those the workload cannot
 * feel (INERT_WITHOUT_WRITES in a sweep that commits nothing). Their gap is noise, unless it holds at
 * every scored thread count (systematic: named as such, not noise).
 */
function identicalGaps(
  ctx: Context,
  sweeps: readonly ThreadSweepFinding[],
  notCommitting: readonly string[],
): IdenticalGap[] {
  const config = ctx.data.serverConfig ?? [];
  if (ctx.data.run.backend !== 'local' || config.length === 0) return [];
  const names = uniqueInOrder(config.map((c) => c.name)).sort();
  const keyOf = (variant: string, label: string): string =>
    names
      .filter((n) => !(notCommitting.includes(label) && INERT_WITHOUT_WRITES.has(n)))
      .map((n) => `${n}=${config.find((c) => c.variant === variant && c.name === n)?.value ?? ''}`)
      .join('\u0000');
  return sweeps.flatMap((s) => {
    let out: IdenticalGap | null = null;
    const sorted = [...s.scores].filter((x) => x.score > 0).sort((a, b) => b.score - a.score);
    const lead =
      sorted.length >= 2
        ? { best: sorted[0]!.target, next: sorted[1]!.target, ratio: sorted[0]!.score / sorted[1]!.score }
        : null;
    const scoredThreads = uniqueInOrder(s.variants.flatMap((v) => v.points.map((p) => p.threads))).filter(
      (t) => !s.unscored.includes(t),
    );
    for (const a of sorted)
      for (const b of sorted)
        if (
          a.score > b.score &&
          keyOf(a.target, s.label) === keyOf(b.target, s.label) &&
          !aboveEverywhere(s, a.target, b.target, scoredThreads)
        )
          if (out === null || a.score / b.score > out.ratio)
            out = {
              sweep: s.label,
              higher: a.target,
              lower: b.target,
              ratio: a.score / b.score,
              lead,
            };
    return out === null ? [] : [out];
  });
}

/**
 * The run's noise as one figure: the widest score ratio between servers that ran alike (per workload,
 * or overall, or the A/A pair), and the repeats a side it says the best two would need.
 */
function noiseOf(
  identical: readonly IdenticalGap[],
  aa: ThreadSweepFindings['aa'],
  ranking: ThreadSweepFindings['ranking'],
  overall: readonly { variant: string; score: number }[],
): ThreadSweepFindings['noise'] {
  const cands = [
    ...identical.map((g) => ({ ratio: g.ratio, higher: g.higher, lower: g.lower, sweep: g.sweep })),
    ...(aa?.near != null ? [{ ...aa.near, sweep: null }] : []),
    ...(aa !== null ? [{ ratio: aa.ratio, higher: aa.higher, lower: aa.lower, sweep: null }] : []),
  ];
  if (cands.length === 0) return null;
  const w = cands.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  // One run a side: each ratio of two single runs has twice one run's log variance.
  const sigma = Math.log(w.ratio) / Math.SQRT2;
  const score = (v: string | undefined): number | undefined => overall.find((o) => o.variant === v)?.score;
  const [b, n] = [score(ranking?.best), score(ranking?.second)];
  return {
    ...w,
    repeatsToResolve:
      b !== undefined && n !== undefined && sigma > 0
        ? repeatsToResolve({ mean: b, sd: sigma * b, n: 2 }, { mean: n, sd: sigma * n, n: 2 })
        : null,
  };
}

/** Whether a score ratio lies inside the run's noise (either way round). */
const insideNoise = (ratio: number, noise: { ratio: number }): boolean =>
  Math.abs(Math.log(ratio)) <= Math.log(noise.ratio);

/** The plan note "data: ... 10 x 10,000,000 rows -> 4 x 10,000" as "4 x 10,000 rows instead of 10 x 10,000,000". */
function dataScaleOf(ctx: Context): string | null {
  let notes: { path?: string; message?: string }[] = [];
  try {
    notes = JSON.parse(ctx.data.run.notes || '[]') as typeof notes;
  } catch {
    return null;
  }
  const m = notes
    .filter((n) => n.path === 'data')
    .map((n) => /([\d,]+ x [\d,]+) rows -> ([\d,]+ x [\d,]+)/.exec(n.message ?? ''))
    .find((x) => x !== null);
  return m == null ? null : `${m[2]} rows instead of ${m[1]}`;
}

/**
 * Locally, what each variant ran as: its servers (the writer and its readers, from the plan) and whether
 * its binary log was on (as recorded). One phrase when every variant ran alike, else one per variant.
 */
function localTopologyOf(ctx: Context): string | null {
  if (ctx.data.run.backend !== 'local' || ctx.variants.length === 0) return null;
  const binlog = (v: string): string | null =>
    (ctx.data.serverConfig ?? []).find((c) => c.variant === v && c.name === 'log_bin')?.value ?? null;
  const text = (v: { name: string; readers: number }): string => {
    const log = binlog(v.name);
    return (
      (v.readers === 0 ? 'one server (the writer), no replicas' : `a writer and ${v.readers} replica(s)`) +
      (log === null ? '' : `, binary log ${log.toLowerCase() === 'on' ? 'on' : 'off'}`)
    );
  };
  const each = ctx.variants.map((v) => ({ name: v.name, text: text(v) }));
  // The study ran asynchronous replication; a run without replicas must say it did not.
  const noReplicas = ctx.variants.every((v) => v.readers === 0)
    ? '; replication (the study: asynchronous) not run'
    : '';
  return (
    (new Set(each.map((e) => e.text)).size === 1
      ? `every variant: ${each[0]!.text}`
      : each.map((e) => `${e.name}: ${e.text}`).join('; ')) + noReplicas
  );
}

/** The CPUs the local servers ran on, from the plan notes ("with 2 CPU(s)"), as the report's banner reads them. */
function localCpusOf(ctx: Context): number | null {
  if (ctx.data.run.backend !== 'local') return null;
  const m = /with (\d+) CPU\(s\)/.exec(ctx.data.run.notes || '');
  return m === null ? null : Number(m[1]);
}

/** The highest max_connections the lake records: locally the limit the study's connection errors need. */
function maxConnectionsOf(ctx: Context): number | null {
  const xs = (ctx.data.serverConfig ?? []).filter((c) => c.name === 'max_connections').map((c) => Number(c.value));
  const ok = xs.filter((x) => Number.isFinite(x));
  return ok.length === 0 ? null : Math.max(...ok);
}

/**
 * The fall-off past the peak, judged at every point past it: the first point below 90% of the peak
 * whose interval lies below 100% (or that failed); when none does, the first below 90% (no fall shown).
 * A point at 89.6% whose interval reaches 100% must not hide a later one at 28%.
 */
function shownFall(
  ctx: Context,
  peak: StepGroup | undefined,
  kept: readonly { g: StepGroup; tps: number | null }[],
  peakTps: number | null,
): { threads: number; ratio: RatioFinding } | null {
  if (peak === undefined || peakTps === null) return null;
  return judgedFall(
    peak.threads,
    peakTps,
    kept.map((k) => ({
      threads: k.g.threads,
      tps: k.tps,
      ratio: () => ratioOf(estimate(ctx, k.g, 'tps'), estimate(ctx, peak, 'tps')),
    })),
  );
}

/** @internal exported for its tests: the fall-off rule over points past the peak, each with its ratio to it. */
export function judgedFall(
  peakThreads: number,
  peakTps: number,
  points: readonly { threads: number; tps: number | null; ratio: () => RatioFinding }[],
): { threads: number; ratio: RatioFinding } | null {
  const below = points
    .filter((p) => p.threads > peakThreads && (p.tps === null || p.tps < FALL_SHARE * peakTps))
    .sort((x, y) => x.threads - y.threads)
    .map((p) => ({ threads: p.threads, ratio: p.ratio() }));
  return below.find((b) => b.ratio.interval === null || b.ratio.interval.high < 1) ?? below[0] ?? null;
}

/** A fall-off is a point below this share of the peak (sweep.ts's default drop of 10%). */
const FALL_SHARE = 0.9;

/** Digits for a share of the peak: one where a whole percent would round a point under 90% up to it. */
const fallDigits = (x: number | null): number =>
  x !== null && x < FALL_SHARE && Math.round(x * 100) >= FALL_SHARE * 100 ? 1 : 0;

export function analyzeThreadSweep(ctx: Context): ThreadSweepFindings | null {
  const keys = uniqueInOrder(ctx.groups.map(sweepKey)).filter(
    (k) => uniqueInOrder(ctx.groups.filter((g) => sweepKey(g) === k).map((g) => g.threads)).length >= MIN_SWEEP_THREADS,
  );
  if (keys.length === 0) return null;
  const swept = ctx.groups.filter((g) => keys.includes(sweepKey(g)));
  const sweeps: ThreadSweepFinding[] = keys.map((key) => {
    const groups = ctx.groups.filter((g) => sweepKey(g) === key);
    const first = groups[0]!;
    const label =
      first.workload +
      (first.rate > 0 ? ` @${first.rate}/s` : '') +
      (first.target !== 'writer' ? ` → ${first.target}` : '');
    const variants: SweepVariantFinding[] = [];
    const qpt = queriesPerTransaction(groups) ?? 0;
    // A point left out because its client saturated (every repeat) is not scored: it measured the
    // client, not the server. A failed point still counts as 0 (score.ts).
    const leftOut = (g: StepGroup) =>
      g.ok.length === 0 && ctx.leftOutSaturated.some((r) => r.variant === g.variant && r.step_id === g.stepId);
    const byVariant = ctx.variants.flatMap((v) => {
      const vg = groups.filter((g) => g.variant === v.name).sort((a, b) => a.threads - b.threads);
      if (vg.length === 0) return [];
      const points: SweepPointFinding[] = vg.map((g) => ({
        threads: g.threads,
        tps: estimate(ctx, g, 'tps'),
        qps: estimate(ctx, g, 'qps'),
        latency: estimate(ctx, g, 'lat_pct_ms'),
        failed: g.ok.length === 0 && !leftOut(g),
        leftOut: leftOut(g),
        unsteady: unsteadyOf(ctx, g),
        clientBound: clientBoundMark(ctx, g),
      }));
      return [{ v, vg, points }];
    });
    // A thread count unsteady in any variant is left out of every variant's score: each workload is
    // scored over the same thread counts, as the author's mean is. With none left, all are scored.
    const unsteadyAt = uniqueInOrder(
      byVariant.flatMap((x) => x.points.filter((p) => p.unsteady.length > 0).map((p) => p.threads)),
    ).sort((a, b) => a - b);
    const steadyLeft = byVariant.some((x) => x.points.some((p) => !unsteadyAt.includes(p.threads)));
    const unscored = steadyLeft ? unsteadyAt : [];
    for (const { v, vg, points } of byVariant) {
      // A left-out or unsteady point is no measurement of the server at that load: neither a peak
      // nor a fall-off (a null throughput would read as one).
      // One rule with the score: a thread count unsteady in any variant is no variant's peak or fall-off.
      const kept = vg.flatMap((g, i) =>
        points[i]!.leftOut || points[i]!.unsteady.length > 0 || unscored.includes(g.threads) ? [] : [{ g, i }],
      );
      const a = analyzeSweep(
        kept.map(({ g, i }) => ({
          threads: g.threads,
          throughput: points[i]!.tps.value,
          failed: points[i]!.failed,
          errors: g.rows.filter(significantErrors).reduce((acc, r) => acc + r.errors, 0),
          reconnects: g.rows.reduce((acc, r) => acc + r.reconnects, 0),
          error: g.rows.find((r) => r.error)?.error ?? null,
        })),
      );
      const peak = vg.find((g) => g.threads === a.peakThreads);
      const fall = shownFall(
        ctx,
        peak,
        kept.map(({ g, i }) => ({ g, tps: points[i]!.tps.value })),
        a.peakThroughput,
      );
      variants.push({
        variant: v.name,
        points,
        peakThreads: a.peakThreads,
        peakTps: a.peakThroughput,
        fallOffThreads: fall?.threads ?? null,
        fallOff: fall?.ratio ?? null,
        lastShareOfPeak: a.lastShareOfPeak,
        errorPoints: vg.map((g) => errorPointOf(g, leftOut(g))).filter((e): e is SweepErrorPoint => e !== null),
      });
    }
    const scored = { label, queriesPerTransaction: qpt, variants, unscored };
    return { ...scored, latencyPercentile: first.latPct, scores: sweepScoresOf(scored, unscored) };
  });
  const threadCounts = uniqueInOrder(swept.map((g) => g.threads)).sort((a, b) => a - b);
  const overall = ctx.variants.length >= 2 ? overallOf(sweeps) : [];
  const scored: ScoredSweep[] = keys.map((key, i) => ({
    groups: ctx.groups.filter((g) => sweepKey(g) === key && !sweeps[i]!.unscored.includes(g.threads)),
    bestSum: Math.max(0, ...sweeps[i]!.scores.map((x) => x.sum)),
    qpt: sweeps[i]!.queriesPerTransaction,
  }));
  const [best, second] = overall;
  const ranking =
    best !== undefined && second !== undefined
      ? { best: best.variant, second: second.variant, ...scoreRatio(ctx, scored, best, second) }
      : null;
  // Thread pool vs one thread per connection: variants of the
  // same engine and class that differ only in thread_handling.
  const handling = (name: string): string | undefined => {
    const v = ctx.data.spec?.variants.find((x) => x.name === name);
    const p = { ...(v?.clusterParameters ?? {}), ...(v?.instanceParameters ?? {}) } as Record<string, unknown>;
    return typeof p['thread_handling'] === 'string' ? p['thread_handling'] : undefined;
  };
  const threadPool: ThreadPoolVerdict[] = [];
  for (const pool of ctx.variants.filter((v) => handling(v.name) === 'pool-of-threads')) {
    const other = ctx.variants.find(
      (v) =>
        v.name !== pool.name &&
        handling(v.name) === 'one-thread-per-connection' &&
        v.instanceClass === pool.instanceClass &&
        v.engine?.kind === pool.engine?.kind,
    );
    const a = overall.find((o) => o.variant === pool.name);
    const b = other === undefined ? undefined : overall.find((o) => o.variant === other.name);
    if (other !== undefined && a !== undefined && b !== undefined)
      threadPool.push({ pool: pool.name, perConnection: other.name, ratio: scoreRatio(ctx, scored, a, b).ratio });
  }
  const caveats = analyzeLocalCaveats(ctx);
  const parameters = parametersInEffect(
    ctx,
    caveats.parameterDifferences.filter((d) => !STUDIED_PARAMETERS.includes(d.parameter)),
  );
  const commits = commitsOf(ctx, sweeps);
  const runOrder = runOrderOf(swept.flatMap((g) => g.rows));
  const aa = withNear(aaNoise(sweeps, overall, caveats.sameServer, ranking), nearAA(ctx, overall, parameters));
  const identical = identicalGaps(ctx, sweeps, commits.notCommitting);
  const noise = noiseOf(identical, aa, ranking, overall);
  // The noise's one point, when a single point makes it: the noise and the pools' ratios without it.
  const point = noise?.sweep != null ? noiseOutlier(sweeps, noise) : null;
  let withoutPoint: ThreadSweepFindings['withoutPoint'] = null;
  if (point !== null) {
    const rest = sweepsWithout(sweeps, noise!.sweep, point.threads);
    const all = overallOf(rest);
    const n = noiseOf(
      identicalGaps(ctx, rest, commits.notCommitting),
      withNear(aaNoise(rest, all, caveats.sameServer, ranking), nearAA(ctx, all, parameters)),
      ranking,
      all,
    );
    const score = (v: string): number | undefined => all.find((o) => o.variant === v)?.score;
    withoutPoint = {
      ...point,
      sweep: noise!.sweep!,
      noise: n?.ratio ?? null,
      pools: threadPool.flatMap((tp) => {
        const [a, b] = [score(tp.pool), score(tp.perConnection)];
        return a !== undefined && b !== undefined && b > 0 ? [{ pool: tp.pool, ratio: a / b }] : [];
      }),
    };
  }
  // The score without the most threads run, when those steps were long (not a steady state) yet scored.
  const top = Math.max(0, ...threadCounts);
  const topScored = caveats.longSteps.some((l) => l.threads === top) && sweeps.some((s) => !s.unscored.includes(top));
  const withoutTop =
    overall.length > 0 && topScored ? { threads: top, overall: overallOf(sweepsWithout(sweeps, null, top)) } : null;
  return {
    kind: 'thread-sweep',
    sweeps,
    threadCounts,
    overall,
    ranking,
    threadPool,
    clientBound: clientBoundFinding(ctx, swept),
    caveats,
    parameters,
    aa,
    commits,
    identical,
    noise,
    withoutPoint,
    withoutTop,
    maxConnections: maxConnectionsOf(ctx),
    systematic: systematicGap(sweeps, parameters, runOrder),
    dataScale: dataScaleOf(ctx),
    topology: localTopologyOf(ctx),
    cpus: localCpusOf(ctx),
    cpuShares: cpuSharesOf(ctx, swept),
    runOrder,
    trend: runOrder === null || overall.length === 0 ? null : runTrend(runOrder, overall),
  };
}

/** Which sweeps commit: a workload run with --skip-trx sends no BEGIN/COMMIT (sysbench oltp_common.lua). */
function commitsOf(ctx: Context, sweeps: readonly ThreadSweepFinding[]): ThreadSweepFindings['commits'] {
  const skip = (label: string): boolean =>
    ctx.data.spec?.workloads.find((w) => w.name === label)?.options['skip_trx'] === true;
  return {
    committing: sweeps.filter((s) => !skip(s.label)).map((s) => s.label),
    notCommitting: sweeps.filter((s) => skip(s.label)).map((s) => s.label),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

/**
 * Errors per 100 committed transactions, as the table and the sentence both show it: with a third
 * decimal or two where two would round a point just over the threshold down to the threshold itself.
 */
const per100 = (x: number | null): string => {
  if (x === null) return '-';
  let digits = 2;
  while (
    digits < 4 &&
    x > SIGNIFICANT_ERROR_SHARE &&
    fixed(x * 100, digits) === fixed(SIGNIFICANT_ERROR_SHARE * 100, digits)
  )
    digits++;
  return fixed(x * 100, digits);
};

/** "from 64 threads for every variant", or "from 64 (a, b) / 256 (c) threads": each variant's first such point. */
function fromThreads(firsts: readonly { variant: string; threads: number }[], variantCount: number): string {
  const counts = uniqueInOrder(firsts.map((x) => x.threads)).sort((a, b) => a - b);
  const every =
    firsts.length === variantCount ? ' for every variant' : ` for ${firsts.map((x) => x.variant).join(', ')}`;
  if (counts.length === 1) return `from ${counts[0]} threads${every}`;
  const parts = counts.map(
    (t) =>
      `${t} (${firsts
        .filter((x) => x.threads === t)
        .map((x) => x.variant)
        .join(', ')})`,
  );
  return `from ${parts.join(' / ')} threads`;
}

/**
 * A fall-off cell: what share of the peak remains ("74% of peak", never "worse", which reads as the
 * size of the drop), marked * from one run's intervals, with its verdict over repeats.
 */
function fallCell(r: RatioFinding): string {
  const text = `${ratioText(r, fallDigits(r.estimate))} of peak`;
  if (r.interval === null || r.interval.covers === 'within-run') return r.interval === null ? text : `${text}*`;
  return `${text}, ${r.direction === 'lower' ? 'beyond the noise' : 'within noise'}`;
}

/** Whether a point past the peak was left out (unsteady, client-bound): "no fall-off" is then among the scored. */
const excludedPastPeak = (v: SweepVariantFinding, s: ThreadSweepFinding): boolean =>
  v.peakThreads !== null &&
  v.points.some(
    (p) => p.threads > v.peakThreads! && (p.leftOut || p.unsteady.length > 0 || s.unscored.includes(p.threads)),
  );

function fallOffText(v: SweepVariantFinding, s: ThreadSweepFinding): string {
  if (v.peakThreads === null) return `${v.variant}: no successful point`;
  if (v.fallOffThreads === null)
    return (
      `${v.variant} peaks at ${v.peakThreads} threads, no fall-off past it` +
      (excludedPastPeak(v, s) ? ' among the scored counts' : '')
    );
  const f = v.fallOff;
  if (f === null || f.estimate === null)
    return `${v.variant} peaks at ${v.peakThreads} threads and falls below 90% of the peak at ${v.fallOffThreads}`;
  // The table's cell for this fall-off, and its verdict in words: one finding.
  const verdict =
    f.interval === null
      ? 'noise not measured'
      : f.interval.covers === 'run-to-run'
        ? f.direction === 'lower'
          ? 'beyond the run-to-run noise'
          : 'within the run-to-run noise'
        : null;
  // An interval reaching 100% does not show a fall: "is at", never "falls to" (the table says so too).
  if (f.interval !== null && f.interval.high >= 1)
    return (
      `${v.variant} peaks at ${v.peakThreads} threads and is at ${ratioText(f, fallDigits(f.estimate))}` +
      (verdict === null ? '*' : '') +
      ` of the peak at ${v.fallOffThreads}, an interval that includes 100%: no fall shown`
    );
  // One run's interval cannot judge a fall-off (the sentence says so): the ratio alone, no direction word.
  return (
    `${v.variant} peaks at ${v.peakThreads} threads and falls to ${ratioText(f, fallDigits(f.estimate))}` +
    (verdict === null ? '*' : '') +
    ` of the peak at ${v.fallOffThreads}` +
    (verdict === null ? '' : `, ${verdict}`)
  );
}

/** A score ratio either way round, as the larger over the smaller (>= 1). */
const spread = (a: number, b: number): number => (a >= b ? a / b : b / a);

/**
 * The point behind a workload's noise gap: the thread count where the pair's TPS differ most, and the
 * lower one's TPS against the other's. Null for an overall gap or without both points.
 */
function noiseOutlier(
  sweeps: readonly ThreadSweepFinding[],
  n: NonNullable<ThreadSweepFindings['noise']>,
): { variant: string; threads: number; tps: number; against: number } | null {
  const s = sweeps.find((x) => x.label === n.sweep);
  const [a, b] = [n.higher, n.lower].map((v) => s?.variants.find((x) => x.variant === v));
  if (a === undefined || b === undefined) return null;
  const pairs = a.points.flatMap((p) => {
    const q = b.points.find((x) => x.threads === p.threads);
    const [x, y] = [p.tps.value, q?.tps.value ?? null];
    return x !== null && y !== null && x > 0 && y > 0 ? [{ threads: p.threads, x, y }] : [];
  });
  if (pairs.length === 0) return null;
  const w = pairs.reduce((m, p) => (spread(p.x, p.y) > spread(m.x, m.y) ? p : m));
  return w.x <= w.y
    ? { variant: n.higher, threads: w.threads, tps: w.x, against: w.y }
    : { variant: n.lower, threads: w.threads, tps: w.y, against: w.x };
}

/** A pair's score ratios: overall, and its widest workload (either way round). */
function pairSpread(
  f: ThreadSweepFindings,
  higher: string,
  lower: string,
): { overall: number | null; widest: { sweep: string; ratio: number } | null } {
  const score = (xs: readonly { target?: string; variant?: string; score: number }[], v: string): number | null =>
    xs.find((x) => (x.target ?? x.variant) === v)?.score ?? null;
  const [oh, ol] = [score(f.overall, higher), score(f.overall, lower)];
  const per = f.sweeps.flatMap((s) => {
    const [h, l] = [score(s.scores, higher), score(s.scores, lower)];
    return h !== null && l !== null && h > 0 && l > 0 ? [{ sweep: s.label, ratio: spread(h, l) }] : [];
  });
  return {
    overall: oh !== null && ol !== null && ol > 0 ? oh / ol : null,
    widest: per.length === 0 ? null : per.reduce((m, x) => (x.ratio > m.ratio ? x : m)),
  };
}

/** "mostly one point: self-managed-pool at 8 threads, 3,171 TPS against 5,001", or ''. */
const outlierText = (o: ReturnType<typeof noiseOutlier>): string =>
  o === null
    ? ''
    : `; mostly one point: ${o.variant} at ${thousands(o.threads)} threads, ${thousands(Math.round(o.tps))} TPS ` +
      `against ${thousands(Math.round(o.against))}`;

/**
 * The run's noise as every sentence quotes it: the widest gap between servers that ran alike (taken so
 * that one repeat judges nothing it cannot), the point behind it, and the A/A pair's own gap beside it.
 */
function noiseText(f: ThreadSweepFindings, n: NonNullable<ThreadSweepFindings['noise']>): string {
  const aa = f.aa;
  const same = aa !== null && aa.higher === n.higher && aa.lower === n.lower && n.sweep === null;
  const own = aa !== null && !same ? pairSpread(f, aa.higher, aa.lower) : null;
  return (
    `the widest gap between servers that ran alike here is ${pct(n.ratio, 1)} ` +
    `(${n.sweep !== null ? `${n.sweep} score, ` : 'overall score, '}${n.higher} over ${n.lower}` +
    `${n.sweep !== null ? outlierText(noiseOutlier(f.sweeps, n)) : ''})` +
    (own !== null && aa !== null
      ? `; the A/A pair (${aa.higher}, ${aa.lower}) differs ${pct(aa.ratio, 1)} overall` +
        (own.widest !== null ? `, up to ${pct(own.widest.ratio, 1)} in a workload (${own.widest.sweep})` : '')
      : '')
  );
}

/**
 * The best variant's lead when it departs from the others only in commit parameters and is not first
 * in a workload that commits nothing: the lead is those settings, not the offering.
 */
function commitLead(f: ThreadSweepFindings): {
  parts: string[];
  sweep: string;
  score: number;
  committing: string[];
  leads: { low: number; high: number } | null;
} | null {
  const best = f.ranking?.best;
  if (best === undefined || f.parameters === null) return null;
  const departs = f.parameters
    .filter((p) => p.effect === 'differs')
    .flatMap((p) => {
      const text = (v: string | null): string => valueText(v, p.parameter);
      const holders = (val: string): number => p.values.filter((x) => text(x.value) === val).length;
      const common = uniqueInOrder(p.values.map((x) => text(x.value))).reduce((x, y) =>
        holders(y) > holders(x) ? y : x,
      );
      const own = text(p.values.find((x) => x.variant === best)?.value ?? null);
      return own === common ? [] : [{ parameter: p.parameter, text: `${p.parameter} ${own} (others ${common})` }];
    });
  if (departs.length === 0 || !departs.every((d) => COMMIT_ONLY.has(d.parameter))) return null;
  const quiet = f.sweeps
    .filter((s) => f.commits.notCommitting.includes(s.label))
    .map((s) => ({ sweep: s.label, score: s.scores.find((x) => x.target === best)?.score }))
    .find((x) => x.score !== undefined && x.score < 100);
  if (quiet === undefined) return null;
  // Its lead where it commits: its score over each other variant's, in every workload that commits.
  const committing = f.sweeps.filter((s) => !f.commits.notCommitting.includes(s.label));
  const leads = committing.flatMap((s) => {
    const own = s.scores.find((x) => x.target === best)?.score;
    return own === undefined ? [] : s.scores.filter((x) => x.target !== best && x.score > 0).map((x) => own / x.score);
  });
  return {
    parts: departs.map((d) => d.text),
    sweep: quiet.sweep,
    score: quiet.score!,
    committing: committing.map((s) => s.label),
    leads: leads.length === 0 ? null : { low: Math.min(...leads), high: Math.max(...leads) },
  };
}

/** A commit lead's evidence: where it leads, by how much, and its score where nothing commits. */
const commitLeadEvidence = (lead: NonNullable<ReturnType<typeof commitLead>>): string =>
  (lead.leads !== null
    ? `it scores ${timesRange(lead.leads.low, lead.leads.high)} the others only in the workloads that commit ` +
      `(${lead.committing.join(', ')}); `
    : '') + `in ${lead.sweep}, which commits nothing, ${lead.score.toFixed(1)} against the best's 100`;

/** "1.6–1.9×", or "1.7×" when both ends round alike. */
const timesRange = (lo: number, hi: number): string => {
  const [a, b] = [lo.toFixed(1), hi.toFixed(1)];
  return a === b ? `${a}×` : `${a}–${b}×`;
};

/**
 * Why a commit lead is a likely cause, not a shown one: no variant ran the others' settings with its own
 * engine, and the other causes this run cannot rule out, named: running first (a fresh machine), and locally
 * a binary log Aurora MySQL keeps off by default.
 */
function commitLeadCaveat(f: ThreadSweepFindings): string {
  const best = f.ranking?.best;
  const first = f.runOrder !== null && !f.runOrder.interleaved && f.runOrder.windows[0]?.variant === best;
  const binlog = f.caveats.local && best?.startsWith('aurora') === true && /binary log on/.test(f.topology ?? '');
  const also = [
    ...(first ? ['it also ran first'] : []),
    ...(binlog ? [`${first ? '' : 'it ran '}with the binary log on, which Aurora MySQL has off by default`] : []),
  ];
  return (
    'untested: no variant ran both settings' +
    (also.length > 0 ? `; ${also.join(', and ')}` : f.runOrder !== null ? '; run order also differs' : '')
  );
}

/**
 * The best two's ranking from one repeat a point: the ratio alone (its within-run interval misses the
 * run-to-run noise), or the commit settings it comes from, and this run's noise beside it.
 */
function oneRepeatRanking(f: ThreadSweepFindings): string {
  const r = f.ranking!;
  const lead = commitLead(f);
  if (lead !== null)
    return (
      `${r.best}'s lead (${pct(r.ratio.estimate, 1)} of ${r.second}'s score) is most likely its commit ` +
      `settings (${commitLeadCaveat(f)}): it alone ran ${lead.parts.join(', ')}; ${commitLeadEvidence(lead)}.`
    );
  const head =
    `${r.best} has the highest score in this run, ${pct(r.ratio.estimate, 1)} of ${r.second}'s (the next); ` +
    `one repeat cannot resolve a ranking`;
  if (f.noise == null) return `${head}: run 2+ repeats to measure the run-to-run noise.`;
  return `${head}: ${noiseText(f, f.noise)}.`;
}

/** The thread-pool pairs from one repeat, in one sentence: each ratio inside or outside this run's noise. */
function oneRepeatPools(f: ThreadSweepFindings, noise: NonNullable<ThreadSweepFindings['noise']>): string {
  const parts = f.threadPool.map((tp) => `${tp.pool} ${pct(tp.ratio.estimate, 1)} of ${tp.perConnection}`);
  const inside = f.threadPool.map((tp) => tp.ratio.estimate !== null && insideNoise(tp.ratio.estimate, noise));
  const where =
    inside.length === 1
      ? inside[0]
        ? 'inside'
        : 'outside'
      : inside.every((x) => x)
        ? 'all inside'
        : inside.every((x) => !x)
          ? 'all outside'
          : f.threadPool.map((tp, i) => `${tp.pool} ${inside[i] ? 'inside' : 'outside'}`).join(', ');
  return (
    `Thread pool against one thread per connection (overall score): ${parts.join(', ')}; ${where} this run's ` +
    `noise: ${noiseText(f, noise)}` +
    onePointText(f) +
    `; one repeat cannot judge ${inside.length === 1 ? 'it' : 'them'}.`
  );
}

/**
 * The thread pools whose ratio the noise's one point moves toward 100%: the same point then makes the
 * yardstick and the deficit it judges, so both are given without it.
 */
function pointPools(f: ThreadSweepFindings): { pool: string; ratio: number; before: number; most: boolean }[] {
  const w = f.withoutPoint;
  if (w == null) return [];
  return f.threadPool.flatMap((tp) => {
    const after = w.pools.find((p) => p.pool === tp.pool)?.ratio;
    const before = tp.ratio.estimate;
    if (after === undefined || before === null || ![tp.pool, tp.perConnection].includes(w.variant)) return [];
    const [lb, la] = [Math.abs(Math.log(before)), Math.abs(Math.log(after))];
    return la < lb ? [{ pool: tp.pool, ratio: after, before, most: la <= lb / 2 }] : [];
  });
}

/** "; that point is also most of self-managed-pool's gap: without it ... 98.0% ..., the noise 102.0%", or ''. */
function onePointText(f: ThreadSweepFindings): string {
  const w = f.withoutPoint;
  const pools = pointPools(f);
  if (w == null || pools.length === 0) return '';
  const tp = (p: string) => f.threadPool.find((x) => x.pool === p)!;
  return (
    `; that point is also ${pools.every((p) => p.most) ? 'most' : 'part'} of ` +
    `${pools.map((p) => `${p.pool}'s`).join(' and ')} gap: without ${w.sweep} at ${thousands(w.threads)} threads, ` +
    pools.map((p) => `${p.pool} is ${pct(p.ratio, 1)} of ${tp(p.pool).perConnection}`).join(', ') +
    (w.noise !== null
      ? `, ${pools.every((p) => insideNoise(p.ratio, { ratio: w.noise! })) ? 'inside' : 'not all inside'} the ` +
        `widest gap between servers that ran alike without it, ${pct(w.noise, 1)}`
      : '')
  );
}

/** Scores against run order, when the variants ran one after another: a drift there reads as a ranking. */
function runOrderSentence(f: ThreadSweepFindings): string | null {
  const t = f.trend;
  if (t === null) return null;
  const range = (xs: readonly number[]): string => {
    const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
    return lo === hi ? lo.toFixed(1) : `${lo.toFixed(1)}–${hi.toFixed(1)}`;
  };
  const n = t.early.length;
  const head = `Run order: the variants ran one after another (the score table's ran column)`;
  const tail =
    'a trend with run order cannot be told from an engine difference; variants run interleaved, in a new order ' +
    'each repeat, would tell them apart.';
  if (t.direction === 'none') return `${head}; ${tail}`;
  return (
    `${head}: the first ${n} scored ${range(t.early)} overall, the last ${n} ${range(t.late)}, so scores ` +
    `${t.direction === 'falls' ? 'fall' : 'rise'} with run order, and ${tail}`
  );
}

/**
 * Where the variants peak and whether they fall past it, in one sentence: with every peak at a few
 * threads on a machine of few CPUs, the curve's shape is the machine's, not the offerings'.
 */
function peakSentence(f: ThreadSweepFindings): string | null {
  const peaks = f.sweeps.flatMap((s) =>
    s.variants.flatMap((v) => (v.peakThreads === null ? [] : [{ sweep: s.label, v, threads: v.peakThreads }])),
  );
  if (peaks.length < 2) return null;
  const count = (t: number): number => peaks.filter((p) => p.threads === t).length;
  // A peak count held by one sweep and variant alone is named apart, so the range says where most peak.
  const odd = peaks.filter((p) => count(p.threads) === 1 && peaks.length > 3);
  const main = peaks.filter((p) => !odd.includes(p)).map((p) => p.threads);
  const range = (xs: readonly number[]): string => {
    const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
    return lo === hi ? thousands(lo) : `${thousands(lo)}–${thousands(hi)}`;
  };
  const shows = (v: SweepVariantFinding): boolean =>
    v.fallOff !== null && (v.fallOff.interval === null ? v.fallOffThreads !== null : v.fallOff.interval.high < 1);
  const falling = peaks.filter((p) => shows(p.v)).length;
  const lasts = peaks.flatMap((p) => (p.v.lastShareOfPeak === null ? [] : [p.v.lastShareOfPeak]));
  const machine = f.cpus != null ? ` on this machine's ${f.cpus} CPU${f.cpus === 1 ? '' : 's'}` : '';
  return (
    `Every variant peaks at ${range(main)} threads` +
    (odd.length > 0 ? ` (${odd.map((p) => `${p.v.variant} ${p.sweep} at ${thousands(p.threads)}`).join(', ')})` : '') +
    machine +
    (falling === peaks.length
      ? `, and every one falls past it, with a thread pool or without (the last point is ${range(
          lasts.map((x) => Math.round(x * 100)),
        )}% of the peak)`
      : `; ${falling} of ${peaks.length} fall past it`) +
    (f.caveats.local && falling === peaks.length ? `: this machine's shape, not the offerings'.` : '.')
  );
}

/**
 * The Answer (the verdicts first: scope, ranking, thread pool, peak, scale and errors) and the sentences
 * that move to the section's evidence (run order, parameters, when the ranking already names its cause).
 */
function threadSweepAnswer(f: ThreadSweepFindings, all: readonly string[]): { answer: string[]; evidence: string[] } {
  const variants = f.overall.map((o) => o.variant);
  const ranking = all.find((l) =>
    /ranks above|ranking of|highest score in this run|'s lead \(| scores [\d.]+% of /.test(l),
  );
  const pools = all.find((l) => l.startsWith('Thread pool'));
  const errors = all.filter((l) => /^(Deadlocks|Connection errors)/.test(l));
  const errorLine = errors.find((l) => l.startsWith('Connection errors')) ?? errors[0];
  const scale = scaleSentence(anyUnsteady(f) ? { ...f.caveats, longSteps: [] } : f.caveats);
  const order = runOrderSentence(f);
  const parameters =
    f.parameters !== null
      ? parameterEffectSentence(f.parameters, { studied: STUDIED_PARAMETERS, ...f.commits })
      : parameterSentence(f.caveats, STUDIED_PARAMETERS);
  const named = f.ranking !== null && f.ranking.ratio.interval?.covers !== 'run-to-run' && commitLead(f) !== null;
  // A trend with run order is a verdict on the ranking; "ran one after another" alone is evidence.
  const trend = order !== null && f.trend !== null && f.trend.direction !== 'none';
  const answer = [
    scopeSentence(f.caveats, variants, 'how the offerings compare on AWS'),
    ranking,
    ...(trend ? [order] : []),
    ...(named ? [] : [parameters]),
    pools,
    peakSentence(f),
    scale !== null && errorLine !== undefined ? `${scale} ${errorLine}` : (scale ?? errorLine),
  ].filter((x): x is string => x !== undefined && x !== null);
  const evidence = [...(trend ? [] : [order]), ...(named ? [parameters] : [])].filter((x): x is string => x !== null);
  return { answer, evidence };
}

const thousands = (t: number): string => t.toLocaleString('en-US');

/** Whether any point of any sweep is unsteady (the score's title then names what was scored). */
const anyUnsteady = (f: ThreadSweepFindings): boolean =>
  f.sweeps.some((s) => s.variants.some((v) => v.points.some((p) => p.unsteady.length > 0)));

/**
 * The score title's scope: the thread counts scored, and those left out as unsteady in some variant (the
 * one rule for score, peak and fall-off, said once here). "over 2, 8, 64 threads (write-only also 256; ...)".
 */
function scoredScope(f: ThreadSweepFindings): string {
  const out = uniqueInOrder(f.sweeps.flatMap((s) => [...s.unscored])).sort((a, b) => a - b);
  if (out.length === 0) return '';
  // Workloads grouped by the counts they score, so no count is said to be both scored and not.
  const groups = new Map<string, { labels: string[]; scored: number[]; left: number[] }>();
  for (const s of f.sweeps) {
    const all = uniqueInOrder(s.variants.flatMap((v) => v.points.map((p) => p.threads))).sort((a, b) => a - b);
    const scored = all.filter((t) => !s.unscored.includes(t));
    const left = all.filter((t) => s.unscored.includes(t));
    const key = `${scored.join(',')}|${left.join(',')}`;
    const g = groups.get(key) ?? { labels: [], scored, left };
    g.labels.push(s.label);
    groups.set(key, g);
  }
  const list = (ts: readonly number[]): string => (ts.length === 0 ? 'none' : ts.map(thousands).join(', '));
  const one = groups.size === 1;
  const parts = [...groups.values()].map(
    (g) => `${one ? '' : `${g.labels.join(', ')} `}${list(g.scored)} (not ${list(g.left)})`,
  );
  const high = out.some((t) => t > Math.max(0, ...[...groups.values()].flatMap((g) => g.scored)));
  return (
    ` over ${parts.join('; ')} threads: a count where some variant was unsteady (~) is in no score, peak or ` +
    `fall-off${high ? ', so the high counts the thread-pool question is about are not scored' : ''}. Score:`
  );
}

/**
 * Repeats a side to resolve the study's thread-pool gap (7–9%) if each run wandered as the noise says:
 * "18–30 (the study's 7–9%)", "over 1,000" where more would be needed.
 */
function studyGapRepeats(noise: number): string {
  const sigma = Math.log(noise) / Math.SQRT2;
  const need = (gap: number): number | null =>
    repeatsToResolve({ mean: gap, sd: sigma * gap, n: 2 }, { mean: 1, sd: sigma, n: 2 });
  const [few, many] = [need(1.09), need(1.07)];
  const text = (n: number | null): string => (n === null ? 'over 1,000' : String(n));
  return `${few === many ? text(few) : `${text(few)}–${text(many)}`} (the study's 7–9%)`;
}

/** The thread pool what-if varies thread_handling on purpose; it is not a confounder. */
const STUDIED_PARAMETERS = ['thread_handling'];

/**
 * A score ratio's cell: with its interval and verdict over repeats; from one repeat the estimate alone,
 * since the interval of one run's batches misses the run-to-run noise and would read as if it did not.
 */
const scoreRatioCell = (r: RatioFinding): string =>
  r.interval?.covers === 'within-run' ? `${pct(r.estimate, 1)} not judged (1 repeat)` : ratioCell(r, true);

/** @internal exported for its tests (a test seam) */
export function threadSweepSentences(f: ThreadSweepFindings): string[] {
  const out: string[] = [];
  if (f.ranking !== null) {
    const r = f.ranking;
    const covered = r.ratio.interval?.covers;
    if (r.ratio.interval === null)
      out.push(
        `${r.best} ranks above ${r.second} (score ratio ${ratioText(r.ratio)}); the noise of that ranking is ` +
          `not measured.`,
      );
    else if (covered === 'run-to-run')
      out.push(
        r.ratio.direction === 'higher'
          ? `${r.best} ranks above ${r.second} beyond the run-to-run noise: score ratio ${ratioText(r.ratio)} ` +
              `over the repeats.`
          : `The ranking of ${r.best} above ${r.second} is within the run-to-run noise: score ` +
              `ratio ${ratioText(r.ratio)}` +
              (r.repeatsToResolve !== null ? `; about ${r.repeatsToResolve} repeats a side would resolve it` : '') +
              `.`,
      );
    else out.push(oneRepeatRanking(f) + (f.systematic != null ? ` ${systematicGapSentence(f.systematic)}` : ''));
  }
  const poolNoise = f.noise;
  if (
    poolNoise != null &&
    f.threadPool.length > 0 &&
    f.threadPool.every((tp) => tp.ratio.interval?.covers !== 'run-to-run')
  )
    out.push(oneRepeatPools(f, poolNoise));
  else
    for (const tp of f.threadPool) {
      out.push(
        `Thread pool: ${tp.pool} over ${tp.perConnection} (one thread per connection), overall score ` +
          (tp.ratio.interval?.covers === 'within-run'
            ? `ratio ${pct(tp.ratio.estimate, 1)}, not judged: 1 repeat cannot resolve it.`
            : `ratio ${ratioText(tp.ratio)}: ${verdictText(tp.ratio, true)}.`),
      );
    }
  for (const s of f.sweeps) {
    const unjudged = s.variants.some((v) => v.fallOff !== null && v.fallOff.interval?.covers !== 'run-to-run');
    out.push(
      `${s.label}: ` +
        s.variants.map((v) => fallOffText(v, s)).join('; ') +
        ` (fall-off: below 90% of the peak` +
        (unjudged ? '; *: within-run intervals only, one repeat a point, so run-to-run noise is not in them' : '') +
        `).`,
    );
  }
  const conn = f.sweeps.flatMap((s) =>
    s.variants.flatMap((v) =>
      v.errorPoints.filter((e) => e.kind === 'connection').map((e) => `${v.variant} ${s.label} at ${e.threads}`),
    ),
  );
  // Deadlocks per sweep: from which thread count, and the most errors per committed transaction.
  const dead = f.sweeps.flatMap((s) => {
    const points = s.variants.flatMap((v) =>
      v.errorPoints.filter((e) => e.kind === 'deadlocks').map((e) => ({ v: v.variant, e })),
    );
    if (points.length === 0) return [];
    const firsts = s.variants.flatMap((v) => {
      const ts = v.errorPoints.filter((e) => e.kind === 'deadlocks').map((e) => e.threads);
      return ts.length === 0 ? [] : [{ variant: v.variant, threads: Math.min(...ts) }];
    });
    const worst = points.reduce((a, b) => ((b.e.perTransaction ?? 0) > (a.e.perTransaction ?? 0) ? b : a));
    return [
      `${s.label} ${fromThreads(firsts, s.variants.length)} (up to ` +
        per100(worst.e.perTransaction) +
        `, ${worst.v} at ${worst.e.threads})`,
    ];
  });
  if (conn.length > 0) out.push(`Connection errors (a step refused or connections lost): ${conn.join(', ')} threads.`);
  else
    out.push(
      `No connection errors up to ${thousands(Math.max(0, ...f.threadCounts))} threads (the most this run tried).`,
    );
  if (dead.length > 0)
    out.push(
      `Deadlocks and lock waits above 0.1 per 100 committed transactions: ${dead.join('; ')}` +
        (f.dataScale != null
          ? `; on the scaled data (${f.dataScale}) many threads contend for few rows: a scale effect, ` +
            'not the offerings.'
          : '.'),
    );
  else out.push('Deadlocks and lock waits below 0.1 per 100 committed transactions at every point.');
  return out;
}

/**
 * The run's noise apart from the comparisons it judges, one basis a column: each pair that ran alike
 * (the noise gap's, and the A/A pair), its overall score ratio and its widest workload's, with the point behind it.
 */
function noiseTable(f: ThreadSweepFindings): TableBlock | null {
  const n = f.noise;
  if (n == null || f.ranking?.ratio.interval?.covers === 'run-to-run') return null;
  const row = (pair: string, higher: string, lower: string): string[] => {
    const p = pairSpread(f, higher, lower);
    const wide = p.widest;
    const behind =
      wide !== null && wide.sweep === n.sweep && higher === n.higher && lower === n.lower
        ? outlierText(noiseOutlier(f.sweeps, n))
        : '';
    return [
      pair,
      p.overall !== null ? pct(p.overall, 1) : '-',
      wide !== null ? `${pct(wide.ratio, 1)} (${wide.sweep}${behind})` : '-',
    ];
  };
  const aa = f.aa;
  const rows = [
    ...(aa === null || aa.higher !== n.higher || aa.lower !== n.lower
      ? [row(`${n.higher} / ${n.lower} (ran alike${n.sweep !== null ? ` in ${n.sweep}` : ' here'})`, n.higher, n.lower)]
      : []),
    ...(aa !== null
      ? [row(`${aa.higher} / ${aa.lower} (A/A pair: identical servers, run separately)`, aa.higher, aa.lower)]
      : []),
  ];
  return {
    title: "This run's noise: score ratios of servers that ran alike",
    head: ['pair', 'overall score ratio', 'widest workload score ratio'],
    rows,
    notes: [
      `The sentences judge against the widest of these, ${pct(n.ratio, 1)}: single-run differences smaller ` +
        'than this are not called real; ratios are higher over lower score.',
    ],
  };
}

/**
 * What this run shows of the thread pool beyond its score, from the tables below: its tail latency at
 * the most threads run, and its deadlocks where one thread per connection's first pass the threshold.
 */
function poolEvidence(f: ThreadSweepFindings): string | null {
  // Per workload and thread count (the most run, and the one below it), each pair's p95 ratio, in pair order.
  const lat = new Map<string, string[]>();
  const dead = new Map<string, string[]>();
  const counts = [...f.threadCounts].sort((a, b) => b - a).slice(0, 2);
  for (const s of f.sweeps)
    for (const tp of f.threadPool) {
      const [pool, per] = [tp.pool, tp.perConnection].map((n) => s.variants.find((v) => v.variant === n));
      if (pool === undefined || per === undefined) continue;
      const at = (v: SweepVariantFinding, t: number) => v.points.find((p) => p.threads === t)?.latency.value ?? null;
      for (const t of counts) {
        const [a, b] = [at(pool, t), at(per, t)];
        const key = `${s.label}|${t}`;
        lat.set(key, [...(lat.get(key) ?? []), a !== null && b !== null && b > 0 ? pct(a / b, 0) : '-']);
      }
      const first = per.errorPoints.filter((e) => e.kind === 'deadlocks').sort((x, y) => x.threads - y.threads)[0];
      if (first === undefined) continue;
      const mine = pool.errorPoints.find((e) => e.kind === 'deadlocks' && e.threads === first.threads);
      if (mine !== undefined && (mine.perTransaction ?? 0) >= (first.perTransaction ?? 0)) continue;
      const key = `${s.label} at ${thousands(first.threads)} threads`;
      const own = mine === undefined ? 'below 0.1' : per100(mine.perTransaction);
      dead.set(key, [...(dead.get(key) ?? []), `${tp.pool} ${own} vs ${per100(first.perTransaction)}`]);
    }
  const p = f.sweeps[0]?.latencyPercentile;
  const parts = [
    ...(lat.size > 0 && p !== undefined
      ? [
          `the pool's p${p} latency as a share of one thread per connection's ` +
            `(${f.threadPool.map((tp) => tp.pool).join(', ')}): ` +
            f.sweeps
              .map(
                (s) =>
                  `${s.label} ` +
                  counts.map((t) => `${(lat.get(`${s.label}|${t}`) ?? []).join(', ')} at ${thousands(t)}`).join('; '),
              )
              .join('; ') +
            ' threads',
        ]
      : []),
    ...(dead.size > 0
      ? [
          // The deadlocks come from the scaled data (the Answer's scale effect); the pool's cut of them is its own.
          `deadlocks per 100 committed transactions` +
            (f.dataScale != null
              ? ' (on the scaled data, where threads contend for few rows; the pool runs fewer at once)'
              : '') +
            ': ' +
            [...dead].map(([k, xs]) => `${k} ${xs.join(', ')}`).join('; '),
        ]
      : []),
  ];
  return parts.length === 0 ? null : `visible here: ${parts.join('; ')}`;
}

/**
 * The original study's findings, one row each, beside this run's answer from its own findings, or why
 * this run cannot test it. Every number is one the report's other tables show.
 */
function studyFoundTable(f: ThreadSweepFindings): TableBlock | null {
  if (f.overall.length < 2 || f.ranking === null) return null;
  const noise = f.noise ?? null;
  const judged = f.ranking.ratio.interval?.covers === 'run-to-run';
  const lead = judged ? null : commitLead(f);
  const ranking =
    `${f.ranking.best} the highest score in this run, ${pct(f.ranking.ratio.estimate, 1)} of ${f.ranking.second}` +
    (judged
      ? `: ${verdictText(f.ranking.ratio, true)}`
      : lead !== null
        ? `: most likely its commit settings (${commitLeadCaveat(f)}); ${commitLeadEvidence(lead)}`
        : noise !== null
          ? `; one repeat cannot resolve a ranking (servers that ran alike here differ up to ${pct(noise.ratio, 1)})`
          : '; one repeat cannot resolve a ranking');
  const moved = pointPools(f);
  const pools = f.threadPool.map((tp) => {
    const m = moved.find((x) => x.pool === tp.pool);
    return (
      `${tp.pool} ${pct(tp.ratio.estimate, 1)} of ${tp.perConnection}` +
      (!judged && noise !== null && tp.ratio.estimate !== null
        ? ` (${insideNoise(tp.ratio.estimate, noise) ? 'inside' : 'outside'} the noise` +
          (m !== undefined ? `; ${pct(m.ratio, 1)} without the one point behind it` : '') +
          ')'
        : '')
    );
  });
  const poolAnswer =
    pools.length === 0
      ? 'not testable here: no pair differing only in thread_handling'
      : pools.join('; ') +
        (f.threadPool.every((tp) => tp.ratio.interval?.covers === 'run-to-run')
          ? ''
          : `: not judged (1 repeat${noise !== null ? `; noise up to ${pct(noise.ratio, 1)}` : ''})`);
  const most = Math.max(0, ...f.threadCounts);
  const past = f.threadCounts.filter((t) => t > 512);
  const pastScored = f.sweeps.some((s) => past.some((t) => !s.unscored.includes(t)));
  const local = f.caveats.local;
  const peaks = f.sweeps.flatMap((s) => s.variants.flatMap((v) => (v.peakThreads === null ? [] : [v.peakThreads])));
  const machine = f.cpus != null ? `this machine's ${f.cpus} CPU${f.cpus === 1 ? '' : 's'}` : 'this machine';
  // Locally the servers saturate the machine long before 512 threads: the study's fall there cannot show.
  const saturated = local && peaks.length > 0 && Math.max(...peaks) < 512;
  const aws = 'the AWS run (threads 2–3,000, each offering on its own instance) tests it';
  const fall = saturated
    ? `not testable here: ${f.threadCounts.includes(512) ? '' : '512 threads not run, and '}on ` +
      `${machine} every variant peaks by ${thousands(Math.max(...peaks))} threads and falls past it, ` +
      `with a thread pool or without; ${aws}`
    : past.length === 0
      ? `not testable here: no count past 512 ran (the most: ${thousands(most)})`
      : !pastScored
        ? `not testable here: past 512 only ${past.map(thousands).join(', ')} threads ran, unscored ` +
          '(a thread count is unscored when any variant is unsteady there)'
        : 'see the fall-off table (peak and fall-off)';
  const conn = f.sweeps.some((s) => s.variants.some((v) => v.errorPoints.some((e) => e.kind === 'connection')));
  return {
    title: 'What the study found, and this run',
    head: ['the study found', 'this run'],
    rows: [
      [
        'the headline: cloud RDS 1.6x self-built (self-managed here)',
        local
          ? 'not testable locally: the cloud offerings and self-managed are one MariaDB on this machine, so ' +
            'their score ratio shows parameters and run order, not the offerings; the AWS run tests only AWS ' +
            "offerings against self-managed, not the study's 1.6x (another provider's general-purpose tier against " +
            'self-built MySQL)'
          : 'see the score table (the cloud variants against self-managed)',
      ],
      ['a ranking of offerings by a 100-point score', ranking],
      [
        'general-purpose tiers above dedicated ones; one provider slow at few threads',
        'not testable: no such tiers or providers are in this experiment, locally or on AWS',
      ],
      [
        'a thread pool (Percona) 7–9% above MySQL without one',
        poolAnswer +
          (poolEvidence(f) !== null ? `; ${poolEvidence(f)}` : '') +
          (local ? `; the AWS run, with 2+ repeats interleaved, tests it (MariaDB's pool for Percona's)` : ''),
      ],
      ['without a thread pool, throughput falls past 512 threads', fall],
      [
        'connection errors at high thread counts',
        conn
          ? 'connection errors: see the points with errors'
          : local
            ? `not testable here: none up to ${thousands(most)} threads, but locally every server ran ` +
              `max_connections ${f.maxConnections === null ? 'not recorded' : thousands(f.maxConnections)} ` +
              "(the plan's stand-in for Aurora's default on the class; RDS derives its default from the class's " +
              `memory and a self-managed MariaDB defaults to 151 unless configured; neither applies locally); ${aws}`
            : `none up to ${thousands(most)} threads, the most run`,
      ],
      [
        'self-built (self-managed here) above the cloud offerings at 2–4 threads, below from 8',
        local
          ? `not testable here: self-managed and the cloud offerings are one local MariaDB; ${aws}`
          : 'see the TPS per thread count',
      ],
    ],
  };
}

/** A row's steps (one sweep, one variant) with their times and thread counts, in start order. */
function stepTimes(
  ctx: Context | undefined,
  label: string,
  variant: string,
): { threads: number; start: string; end: string }[] {
  if (ctx === undefined) return [];
  return ctx.groups
    .filter((g) => g.variant === variant && g.workload === label.split(' ')[0])
    .flatMap((g) => g.rows.map((r) => ({ threads: g.threads, start: r.started_at, end: r.ended_at })))
    .filter((x) => Boolean(x.start) && Boolean(x.end))
    .sort((a, b) => (a.start < b.start ? -1 : 1));
}

const rowWindow = (steps: readonly { start: string; end: string }[]): string =>
  steps.length === 0
    ? '-'
    : `${clockText(steps[0]!.start, true)}–${clockText(
        steps.reduce((a, b) => (b.end > a ? b.end : a), steps[0]!.end),
        true,
      )}`;

/** How each row's steps ran: back to back in thread order (the window shows them), or not. */
function runOrderNote(ctx: Context, f: ThreadSweepFindings): string {
  const rows = f.sweeps.flatMap((s) => s.variants.map((v) => stepTimes(ctx, s.label, v.variant)));
  const inThreadOrder = rows.every((r) => r.every((x, i) => i === 0 || x.threads >= r[i - 1]!.threads));
  const windows = rows.filter((r) => r.length > 0).map((r) => [r[0]!.start, r.at(-1)!.end] as const);
  windows.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const apart = windows.every((w, i) => i === 0 || w[0] >= windows[i - 1]![1]);
  return inThreadOrder && apart
    ? 'ran: each row’s steps ran back to back, fewest threads first, from the first start to the last end shown ' +
        '(UTC); the rows did not overlap, so run order is the order of these times.'
    : 'ran: from each row’s first step start to its last step end (UTC); rows overlapped or ran out of thread ' +
        'order (results --sql over steps.started_at gives each step’s start).';
}

/**
 * The note for thread counts whose steps took well past their planned time (connecting and draining
 * threads): their mean is not a steady state's, yet each is in the score, the peak and the fall-off.
 */
function longNote(f: ThreadSweepFindings, marked: boolean): string[] {
  const ls = f.caveats.longSteps.filter((l) => f.sweeps.some((s) => !s.unscored.includes(l.threads)));
  if (ls.length === 0) return [];
  return [
    `${marked ? '†: t' : 'T'}he ${ls.map((l) => thousands(l.threads)).join('- and ')}-thread steps took ` +
      ls.map((l) => `${secondsRange(l.lowS, l.highS)} s for ${l.plannedS} s planned`).join(', ') +
      ' (connecting and draining threads): not a steady state, yet in every score, peak and fall-off here' +
      (marked ? '.' : ' (marked † in the TPS per thread count).'),
  ];
}

/** "10–13", or "20" when both ends round alike. */
const secondsRange = (lo: number, hi: number): string =>
  lo.toFixed(0) === hi.toFixed(0) ? lo.toFixed(0) : `${lo.toFixed(0)}–${hi.toFixed(0)}`;

/** What the fall-off column's intervals are, for the kinds the table holds. */
function fallOffIntervalNote(f: ThreadSweepFindings): string {
  const covers = new Set(f.sweeps.flatMap((s) => s.variants.map((v) => v.fallOff?.interval?.covers ?? 'none')));
  const kinds = [
    ...(covers.has('run-to-run') ? ['over the repeats (run to run, with 2+ repeats a point)'] : []),
    ...(covers.has('within-run')
      ? ['marked *, from batch means of one run’s intervals (one repeat a point: within-run noise only)']
      : []),
  ];
  return kinds.length === 0 ? '' : `Its ratio to the peak has an interval ${kinds.join('; or, ')}. `;
}

/**
 * What each thread count weighs in the score: one point of the counts run, so with a thinned sweep the
 * most threads (long steps, not a steady state) are a large share; the last column leaves them out.
 */
function weightNote(f: ThreadSweepFindings): string[] {
  const w = f.withoutTop;
  if (w == null) return [];
  const run = f.threadCounts.length;
  const study = run + f.caveats.threadsNotRun.length;
  const moves =
    w.overall.map((o) => o.variant).join() !== f.overall.map((o) => o.variant).join()
      ? 'it changes the order'
      : 'the order stays';
  return [
    `Each thread count run weighs the same: ${run} here (${f.threadCounts.map(thousands).join(', ')})` +
      (study > run ? `, not the study's ${study}` : '') +
      `, so the ${thousands(w.threads)}-thread step is 1/${run} of every score; without it (last score column) ` +
      `${moves}.`,
  ];
}

export function threadSweepSection(f: ThreadSweepFindings, ctx?: Context): ReportSection {
  const styles = ctx?.styles;
  const charts: ChartBlock[] = [];
  const answerCharts: ChartBlock[] = [];
  const findingRows: string[][] = [];
  const errorRows: string[][] = [];
  const pointRows: string[][] = [];
  const anyWithinRun = f.sweeps.some((s) =>
    s.variants.some((v) =>
      v.points.some((p) => [p.tps, p.qps, p.latency].some((e) => e.interval?.covers === 'within-run')),
    ),
  );
  const bars = (e: Estimated): [number, number] | null =>
    e.interval === null || e.value === null ? null : [Math.max(0, e.interval.low), e.interval.high];
  // A thread count whose steps ran well past their planned time: scored, yet not a steady state (marked †).
  const long = (t: number): boolean => f.caveats.longSteps.some((l) => l.threads === t);
  f.sweeps.forEach((s, i) => {
    const series = (metric: 'tps' | 'qps' | 'latency'): XYSeries[] =>
      s.variants.map((v) => ({
        name: v.variant,
        points: v.points.map((p) => [p.threads, p[metric].value] as const),
        intervals: v.points.flatMap((p) => {
          const b = bars(p[metric]);
          return b === null ? [] : [[p.threads, b[0], b[1]] as const];
        }),
        errorPoints: v.points
          // A left-out point has no value: no marker (drawing it at 0 would read as a failure).
          .filter((p) => !p.leftOut && v.errorPoints.some((e) => e.threads === p.threads))
          .map((p) => [p.threads, p[metric].value ?? 0] as const),
      }));
    answerCharts.push(
      lineChart(
        `sweep-tps-${i}`,
        `${s.label}: TPS by threads (larger markers: points with errors)`,
        'threads',
        'TPS',
        series('tps'),
        {
          logX: true,
          xTicks: f.threadCounts,
          styles,
        },
      ),
    );
    answerCharts.push(
      lineChart(
        `sweep-qps-${i}`,
        `${s.label}: QPS by threads (larger markers: points with errors)`,
        'threads',
        'QPS',
        series('qps'),
        {
          logX: true,
          xTicks: f.threadCounts,
          styles,
        },
      ),
    );
    charts.push(
      lineChart(
        `sweep-lat-${i}`,
        `${s.label}: p${s.latencyPercentile} latency by threads`,
        'threads',
        `p${s.latencyPercentile} ms`,
        series('latency'),
        {
          logX: true,
          logY: true,
          logBase: 2,
          xTicks: f.threadCounts,
          styles,
        },
      ),
    );
    for (const v of s.variants) {
      findingRows.push([
        s.label,
        v.variant,
        v.peakThreads !== null ? String(v.peakThreads) : '-',
        fixed(v.peakTps),
        v.fallOffThreads !== null
          ? v.fallOff?.interval != null && v.fallOff.interval.high >= 1
            ? `${v.fallOffThreads} (no fall shown)`
            : String(v.fallOffThreads)
          : excludedPastPeak(v, s)
            ? 'none among scored'
            : 'none',
        v.fallOff !== null ? fallCell(v.fallOff) : '-',
        v.lastShareOfPeak !== null ? pct(v.lastShareOfPeak, 0) : '-',
      ]);
      for (const e of v.errorPoints)
        errorRows.push([
          s.label,
          v.variant,
          String(e.threads),
          e.what,
          num(e.errors, 0),
          per100(e.perTransaction),
          num(e.reconnects, 0),
          clip(e.error, 70),
        ]);
      const rowSteps = v.points.length > 0 ? stepTimes(ctx, s.label, v.variant) : [];
      pointRows.push([
        s.label,
        v.variant,
        ...(f.runOrder !== null ? [rowWindow(rowSteps)] : []),
        ...f.threadCounts.map((t) => {
          const p = v.points.find((x) => x.threads === t);
          if (p === undefined) return '-';
          if (p.tps.value === null) return p.leftOut ? LEFT_OUT_TEXT : p.failed ? 'failed' : '-';
          return rangeText(p.tps) + (p.unsteady.length > 0 ? ' ~' : long(t) ? ' †' : '') + p.clientBound;
        }),
      ]);
    }
  });
  const tables: TableBlock[] = [
    {
      title: 'Peak and fall-off (TPS)',
      head: [
        'sweep',
        'variant',
        'peak threads',
        'peak TPS',
        'falls off from',
        'fall-off point / peak',
        'last point / peak',
      ],
      rows: findingRows,
      numeric: [2, 3, 4, 6],
      notes: [
        'Fall-off: the first thread count past the peak below 90% of it whose interval is below 100% (every ' +
          'point past the peak is judged; when none is, the first below 90%, no fall shown). ' +
          fallOffIntervalNote(f) +
          'Errors: failed steps, reconnects, or sysbench errors above 0.1 per 100 committed ' +
          'transactions; those points are kept and marked, not dropped.',
      ],
    },
  ];
  if (errorRows.length > 0)
    tables.push({
      title: 'Points with errors',
      head: ['sweep', 'variant', 'threads', 'what', 'errors', 'per 100 committed transactions', 'reconnects', 'error'],
      rows: errorRows,
      numeric: [2, 4, 5, 6],
      notes: [
        `Marked: a failed step (e.g. a connection limit), any reconnect, or sysbench errors (deadlocks, lock ` +
          `waits, dropped connections) above ` +
          fixed(SIGNIFICANT_ERROR_SHARE * 100, 1) +
          ` per 100 committed transactions: the transactions TPS counts (sysbench's events), the one ` +
          `denominator of every error rate here; errors can outnumber them.`,
      ],
    });
  tables.push({
    title: 'TPS per thread count (95% interval)',
    head: ['sweep', 'variant', ...(f.runOrder !== null ? ['ran (UTC)'] : []), ...f.threadCounts.map((t) => `${t} thr`)],
    rows: pointRows,
    // Not right-aligned numbers: a value and its range wrap within a column, so a dozen thread counts fit the page.
    notes: [
      ...(f.runOrder !== null && ctx !== undefined ? [runOrderNote(ctx, f)] : []),
      'Interval: over the repeats (run to run), or, marked *, batch means of one run’s intervals.',
      ...(anyWithinRun ? [WITHIN_RUN_NOTE] : []),
      ...(f.sweeps.some((x) => x.variants.some((v) => v.points.some((p) => p.unsteady.length > 0)))
        ? [`~: not a steady state (${UNSTEADY_RULE}); see the score's title for what is scored.`]
        : []),
      ...longNote(f, true),
    ],
  });
  const coversText = (r: RatioFinding): string =>
    r.interval === null ? '-' : r.interval.covers === 'run-to-run' ? `${r.interval.n} repeats` : 'one repeat';
  const ratioRows: string[][] = [
    ...(f.ranking !== null
      ? [
          [
            `${f.ranking.best} / ${f.ranking.second} (best two)`,
            scoreRatioCell(f.ranking.ratio),
            coversText(f.ranking.ratio),
            f.ranking.repeatsToResolve !== null
              ? String(f.ranking.repeatsToResolve)
              : f.noise?.repeatsToResolve != null
                ? `${f.noise.repeatsToResolve} (against the noise, ${pct(f.noise.ratio, 1)})`
                : '-',
          ],
        ]
      : []),
    ...f.threadPool.map((tp) => [
      `${tp.pool} / ${tp.perConnection} (thread pool)`,
      scoreRatioCell(tp.ratio),
      coversText(tp.ratio),
      tp.ratio.interval?.covers !== 'run-to-run' && f.noise != null ? studyGapRepeats(f.noise.ratio) : '-',
    ]),
  ];
  const noise = noiseTable(f);
  const withoutTop = f.withoutTop ?? null;
  const anyRatioCi = [...(f.ranking !== null ? [f.ranking.ratio] : []), ...f.threadPool.map((tp) => tp.ratio)].some(
    (r) => r.interval?.covers === 'run-to-run',
  );
  const scoreTable: TableBlock[] =
    f.overall.length > 0
      ? [
          {
            title:
              scoredScope(f) === ''
                ? '100-point score per workload (mean committed QPS + mean TPS over its sweep; the best variant ' +
                  'of each workload scores 100) and overall (the mean of those)'
                : `100-point score per workload${scoredScope(f)} mean committed QPS + mean TPS over those counts, ` +
                  'the best variant of each workload 100; overall: the mean of those',
            head: [
              'variant',
              ...f.sweeps.map((s) => s.label),
              'overall',
              ...(withoutTop !== null ? [`overall without ${thousands(withoutTop.threads)} threads`] : []),
              ...(f.runOrder !== null ? [f.runOrder.interleaved ? 'ran (UTC)' : 'ran (order, UTC)'] : []),
            ],
            rows: f.overall.map((o) => [
              o.variant,
              ...f.sweeps.map((s) => {
                const x = s.scores.find((y) => y.target === o.variant);
                const out = s.variants.find((v) => v.variant === o.variant)?.points.filter((p) => p.leftOut) ?? [];
                return x
                  ? `${x.score.toFixed(1)}${x.failedThreads.length > 0 ? ` (${x.failedThreads.length} failed)` : ''}` +
                      (out.length > 0 ? ` (${out.length} left out)` : '')
                  : '-';
              }),
              o.score.toFixed(1),
              ...(withoutTop !== null
                ? [withoutTop.overall.find((x) => x.variant === o.variant)?.score.toFixed(1) ?? '-']
                : []),
              ...(f.runOrder !== null ? [windowCell(f.runOrder, o.variant)] : []),
            ]),
            numeric: f.sweeps
              .map((_, i) => i + 1)
              .concat([f.sweeps.length + 1], withoutTop !== null ? [f.sweeps.length + 2] : []),
            notes: [
              ...leftOutScoreNote(f),
              ...longNote(f, false),
              ...weightNote(f),
              'A failed thread count counts as 0; ' +
                clientBoundScoreText(f) +
                ' ' +
                'QPS: committed transactions’ queries (TPS x ' +
                f.sweeps.map((x) => `${x.label} ${fixed(x.queriesPerTransaction, 0)}`).join(', ') +
                '), not sysbench’s QPS, the study’s metric, which also counts the statements of rolled-back ' +
                'transactions and so rewards deadlocks; each workload’s score is therefore its mean TPS scaled, ' +
                'and ranks as TPS does.',
            ],
          },
          ...(ratioRows.length > 0
            ? [
                {
                  // "(95% CI)" only over a column that shows one: from one repeat the cells are estimates.
                  title: `Overall score ratios${anyRatioCi ? ' (95% CI)' : ''}`,
                  // From one repeat every row says "one repeat": the column would repeat the head.
                  head: [
                    'comparison',
                    anyRatioCi ? 'score ratio (95% CI)' : 'score ratio (no interval: 1 repeat)',
                    ...(anyRatioCi ? ['interval from'] : []),
                    'repeats a side to resolve',
                  ],
                  rows: anyRatioCi ? ratioRows : ratioRows.map((r) => r.filter((_, i) => i !== 2)),
                  notes: [
                    anyRatioCi
                      ? 'Welch interval over the repeats.'
                      : 'Not judged: one run a side gives no run-to-run spread to build an interval from, however ' +
                        'wide the gap. Repeats a side to resolve: how many repeats of each variant a Welch 95% ' +
                        'interval would need to exclude 100%, if each run wandered as much as the noise says (a ' +
                        'run’s log spread ln(noise)/√2): for the best two their own gap, for the thread pools the ' +
                        "study's 7–9% (-: not computed)." +
                        (commitLead(f) !== null && f.ranking !== null
                          ? ` Even resolved, the best two's gap would measure ${f.ranking.best}'s commit settings, ` +
                            'not the offering.'
                          : ''),
                  ],
                },
              ]
            : []),
          ...(noise !== null ? [noise] : []),
        ]
      : [];
  const lines = threadSweepSentences(f);
  if (f.clientBound !== null) lines.push(f.clientBound);
  const { answer, evidence } = threadSweepAnswer(f, lines);
  const found = studyFoundTable(f);
  const table =
    f.parameters !== null
      ? withParameterRows(caveatsTable({ ...f.caveats, parameterDifferences: [] }), f.parameters)
      : caveatsTable(f.caveats, STUDIED_PARAMETERS);
  // The scaled data the deadlock sentence names: shown as a cell, the sentence quotes it.
  const caveats =
    table !== null && f.dataScale != null
      ? { ...table, rows: [...table.rows, ['data (tables x rows)', f.dataScale]] }
      : table;
  const shaped =
    caveats !== null && f.topology != null
      ? { ...caveats, rows: [...caveats.rows, ['servers each variant ran as (locally)', f.topology]] }
      : caveats;
  return {
    id: 'sweep',
    title: 'Thread sweep',
    question: 'How does throughput scale with threads, where does it peak and fall off, and where do connections fail?',
    findings: [...evidence, ...lines],
    tables,
    charts,
    // The Answer's verdicts alone; the fall-offs and the rest stay in the section's evidence.
    answer: {
      lines: answer,
      tables: [
        ...(found !== null ? [found] : []),
        ...scoreTable,
        ...(shaped !== null ? [{ ...shaped, folded: true }] : []),
      ],
      charts: answerCharts,
    },
  };
}
