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
import { clip, errorKind, fixed, num, pct } from '../../format';
import type { ChartBlock, ReportSection, TableBlock } from '../model';
import { overallScores, sweepScores, type TargetScore } from '../score';
import { analyzeSweep } from '../sweep';
import { batchMeans, mean, summarize, welchRatioCi, repeatsToResolve } from '../stats';
import { stepKey } from '../load';
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
  /** " [client-bound 1/3, left out]" when a repeat's client saturated its CPU; '' otherwise. */
  readonly clientBound: string;
}

interface SweepErrorPoint {
  readonly threads: number;
  readonly kind: 'connection' | 'deadlocks' | 'other';
  readonly what: string;
  readonly errors: number;
  readonly shareOfTransactions: number | null;
  readonly reconnects: number;
  readonly error: string | null;
}

interface SweepVariantFinding {
  readonly variant: string;
  readonly points: readonly SweepPointFinding[];
  readonly peakThreads: number | null;
  readonly peakTps: number | null;
  /** The first thread count past the peak below 90% of it. */
  readonly fallOffThreads: number | null;
  /** That point over the peak, with an interval from the repeats when there are 2+ a side. */
  readonly fallOff: RatioFinding | null;
  readonly lastShareOfPeak: number | null;
  readonly errorPoints: readonly SweepErrorPoint[];
}

interface ThreadSweepFinding {
  readonly label: string;
  readonly latencyPercentile: number;
  readonly variants: readonly SweepVariantFinding[];
  readonly scores: readonly TargetScore[];
}

interface ThreadPoolVerdict {
  readonly pool: string;
  readonly perConnection: string;
  /** Score sum (mean QPS + mean TPS over every sweep) of the pool variant over the per-connection one. */
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
}

const sweepKey = (g: StepGroup): string => `${g.workload}\u0000${g.rate}\u0000${g.target}`;

function errorPointOf(g: StepGroup): SweepErrorPoint | null {
  const bad = g.rows.filter(significantErrors);
  if (bad.length === 0) return null;
  const failed = g.ok.length === 0;
  const error = g.rows.find((r) => r.error)?.error ?? null;
  const kindText = errorKind(error);
  const kind = /connection|connect/i.test(kindText)
    ? 'connection'
    : /deadlock|lock wait|ignored SQL/i.test(kindText)
      ? 'deadlocks'
      : 'other';
  const errors = bad.reduce((a, r) => a + r.errors, 0);
  const events = g.rows.reduce((a, r) => a + (r.events ?? 0), 0);
  return {
    threads: g.threads,
    kind,
    what: `${failed ? 'step failed' : 'ran with errors'}: ${kindText}`,
    errors,
    shareOfTransactions: events > 0 ? errors / events : null,
    reconnects: g.rows.reduce((a, r) => a + r.reconnects, 0),
    error,
  };
}

/**
 * Per variant: the score sum (QPS + TPS, averaged over the sweep
 * points) per repeat, or per batch of one run's intervals.
 */
function scoreSamples(
  ctx: Context,
  groups: readonly StepGroup[],
  variant: string,
): { values: number[]; covers: 'run-to-run' | 'within-run' } {
  const gs = groups.filter((g) => g.variant === variant);
  if (gs.every((g) => g.rows.length >= 2)) {
    const repeats = uniqueInOrder(gs.flatMap((g) => g.rows.map((r) => r.repeat)));
    return {
      values: repeats.map((rep) =>
        mean(
          gs.map((g) =>
            g.rows
              .filter((r) => r.repeat === rep && r.status !== 'failed')
              .reduce((a, r) => a + (r.tps ?? 0) + (r.qps ?? 0), 0),
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
          (ctx.data.intervals.get(stepKey(g.ok[0]!.cell_id, g.stepId)) ?? []).map((i) => i.tps + i.qps),
          5,
        ),
  );
  const k = Math.min(...perGroup.map((b) => (b.length === 0 ? Infinity : b.length)));
  if (!Number.isFinite(k) || k < 2) return { values: [], covers: 'within-run' };
  return { values: Array.from({ length: k }, (_, i) => mean(perGroup.map((b) => b[i] ?? 0))), covers: 'within-run' };
}

function scoreRatio(
  ctx: Context,
  groups: readonly StepGroup[],
  a: string,
  b: string,
): { ratio: RatioFinding; repeatsToResolve: number | null } {
  const sa = scoreSamples(ctx, groups, a);
  const sb = scoreSamples(ctx, groups, b);
  const covers = sa.covers === 'run-to-run' && sb.covers === 'run-to-run' ? 'run-to-run' : 'within-run';
  if (sa.values.length < 2 || sb.values.length < 2)
    return { ratio: { estimate: null, interval: null, direction: 'unknown' }, repeatsToResolve: null };
  const ca = summarize(sa.values);
  const cb = summarize(sb.values);
  return {
    ratio: ratioFinding(welchRatioCi(ca, cb), covers),
    repeatsToResolve: covers === 'run-to-run' ? repeatsToResolve(ca, cb) : null,
  };
}

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
    const scoreInput = new Map<string, { threads: number; tps: number | null; qps: number | null }[]>();
    for (const v of ctx.variants) {
      const vg = groups.filter((g) => g.variant === v.name).sort((a, b) => a.threads - b.threads);
      if (vg.length === 0) continue;
      const points = vg.map((g) => ({
        threads: g.threads,
        tps: estimate(ctx, g, 'tps'),
        qps: estimate(ctx, g, 'qps'),
        latency: estimate(ctx, g, 'lat_pct_ms'),
        failed: g.ok.length === 0,
        clientBound: clientBoundMark(ctx, g),
      }));
      scoreInput.set(
        v.name,
        points.map((p) => ({ threads: p.threads, tps: p.tps.value, qps: p.qps.value })),
      );
      const a = analyzeSweep(
        vg.map((g, i) => ({
          threads: g.threads,
          throughput: points[i]!.tps.value,
          failed: g.ok.length === 0,
          errors: g.rows.filter(significantErrors).reduce((acc, r) => acc + r.errors, 0),
          reconnects: g.rows.reduce((acc, r) => acc + r.reconnects, 0),
          error: g.rows.find((r) => r.error)?.error ?? null,
        })),
      );
      const peak = vg.find((g) => g.threads === a.peakThreads);
      const fall = vg.find((g) => g.threads === a.fallOffThreads);
      variants.push({
        variant: v.name,
        points,
        peakThreads: a.peakThreads,
        peakTps: a.peakThroughput,
        fallOffThreads: a.fallOffThreads,
        fallOff:
          peak !== undefined && fall !== undefined
            ? ratioOf(estimate(ctx, fall, 'tps'), estimate(ctx, peak, 'tps'))
            : null,
        lastShareOfPeak: a.lastShareOfPeak,
        errorPoints: vg.map(errorPointOf).filter((e): e is SweepErrorPoint => e !== null),
      });
    }
    return { label, latencyPercentile: first.latPct, variants, scores: sweepScores(scoreInput) };
  });
  const threadCounts = uniqueInOrder(swept.map((g) => g.threads)).sort((a, b) => a - b);
  const overall =
    ctx.variants.length >= 2
      ? overallScores(new Map(sweeps.map((s) => [s.label, s.scores]))).map((o) => ({
          variant: o.target,
          score: o.score,
        }))
      : [];
  const [best, second] = overall;
  const ranking =
    best !== undefined && second !== undefined
      ? { best: best.variant, second: second.variant, ...scoreRatio(ctx, swept, best.variant, second.variant) }
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
    if (other !== undefined)
      threadPool.push({
        pool: pool.name,
        perConnection: other.name,
        ratio: scoreRatio(ctx, swept, pool.name, other.name).ratio,
      });
  }
  return {
    kind: 'thread-sweep',
    sweeps,
    threadCounts,
    overall,
    ranking,
    threadPool,
    clientBound: clientBoundFinding(ctx, swept),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

function fallOffText(v: SweepVariantFinding): string {
  if (v.peakThreads === null) return `${v.variant}: no successful point`;
  if (v.fallOffThreads === null) return `${v.variant} peaks at ${v.peakThreads} threads, no fall-off past it`;
  const f = v.fallOff;
  const share = f?.estimate !== null && f?.estimate !== undefined ? pct(f.estimate, 0) : '?';
  const judged = f !== null && f.interval?.covers === 'run-to-run';
  const verdict = judged
    ? f.direction === 'lower'
      ? ', beyond the run-to-run noise'
      : ', within the run-to-run noise'
    : '';
  return (
    `${v.variant} peaks at ${v.peakThreads} threads and falls to ${share} of the peak ` +
    `at ${v.fallOffThreads}${verdict}`
  );
}

/** @internal exported for its tests (a test seam) */
export function threadSweepSentences(f: ThreadSweepFindings): string[] {
  const out: string[] = [];
  if (f.overall.length > 0)
    out.push(
      `Score (mean QPS + mean TPS over the sweep, best = 100): ` +
        f.overall.map((o) => `${o.variant} ${o.score.toFixed(1)}`).join(', ') +
        `.`,
    );
  if (f.ranking !== null) {
    const r = f.ranking;
    const covered = r.ratio.interval?.covers;
    if (r.ratio.interval === null)
      out.push(`${r.best} ranks above ${r.second}; the noise of that ranking is not measured.`);
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
    else
      out.push(
        `${r.best} ranks above ${r.second} (score ratio ${ratioText(r.ratio)} within one run); with one repeat ` +
          `per point the run-to-run noise is not measured, so the ranking is not judged (run 2+ repeats).`,
      );
  }
  for (const tp of f.threadPool) {
    out.push(
      `Thread pool: ${tp.pool} over ${tp.perConnection} (one thread per connection), score ` +
        `sum ${ratioText(tp.ratio)}: ${verdictText(tp.ratio, true)}.`,
    );
  }
  for (const s of f.sweeps) {
    const unjudged = s.variants.some((v) => v.fallOff !== null && v.fallOff.interval?.covers !== 'run-to-run');
    out.push(
      `${s.label}: ` +
        s.variants.map(fallOffText).join('; ') +
        ` (fall-off: below 90% of the peak` +
        (unjudged ? '; one repeat a point: run-to-run noise not measured, so no fall-off is judged beyond it' : '') +
        `).`,
    );
  }
  const conn = f.sweeps.flatMap((s) =>
    s.variants.flatMap((v) =>
      v.errorPoints.filter((e) => e.kind === 'connection').map((e) => `${v.variant} ${s.label} at ${e.threads}`),
    ),
  );
  // Deadlocks per sweep: from which thread count, and the largest share of transactions.
  const dead = f.sweeps.flatMap((s) => {
    const points = s.variants.flatMap((v) =>
      v.errorPoints.filter((e) => e.kind === 'deadlocks').map((e) => ({ v: v.variant, e })),
    );
    if (points.length === 0) return [];
    const from = Math.min(...points.map((p) => p.e.threads));
    const worst = points.reduce((a, b) => ((b.e.shareOfTransactions ?? 0) > (a.e.shareOfTransactions ?? 0) ? b : a));
    const who = uniqueInOrder(points.map((p) => p.v));
    return [
      `${s.label} from ${from} threads for ` +
        (who.length === s.variants.length ? 'every variant' : who.join(', ')) +
        ` (up to ` +
        pct(worst.e.shareOfTransactions, 1) +
        ` of transactions, ${worst.v} at ${worst.e.threads})`,
    ];
  });
  if (conn.length > 0) out.push(`Connection errors (a step refused or connections lost): ${conn.join(', ')} threads.`);
  else out.push('No connection errors at any thread count.');
  if (dead.length > 0)
    out.push(
      `Deadlocks and lock waits above 0.1% of transactions (counted by sysbench, not connection ` +
        `errors): ${dead.join('; ')}.`,
    );
  else out.push('Deadlocks and lock waits below 0.1% of transactions at every point.');
  return out;
}

export function threadSweepSection(f: ThreadSweepFindings): ReportSection {
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
          .filter((p) => v.errorPoints.some((e) => e.threads === p.threads))
          .map((p) => [p.threads, p[metric].value ?? 0] as const),
      }));
    answerCharts.push(
      lineChart(`sweep-tps-${i}`, `${s.label}: TPS by threads (red: errors)`, 'threads', 'TPS', series('tps'), {
        logX: true,
      }),
    );
    answerCharts.push(
      lineChart(`sweep-qps-${i}`, `${s.label}: QPS by threads (red: errors)`, 'threads', 'QPS', series('qps'), {
        logX: true,
      }),
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
        },
      ),
    );
    for (const v of s.variants) {
      findingRows.push([
        s.label,
        v.variant,
        v.peakThreads !== null ? String(v.peakThreads) : '-',
        fixed(v.peakTps),
        v.fallOffThreads !== null ? String(v.fallOffThreads) : 'none',
        v.fallOff !== null ? ratioCell(v.fallOff, true, 0) : '-',
        v.lastShareOfPeak !== null ? pct(v.lastShareOfPeak, 0) : '-',
      ]);
      for (const e of v.errorPoints)
        errorRows.push([
          s.label,
          v.variant,
          String(e.threads),
          e.what,
          num(e.errors, 0),
          e.shareOfTransactions !== null ? pct(e.shareOfTransactions, 2) : '-',
          num(e.reconnects, 0),
          clip(e.error, 70),
        ]);
      pointRows.push([
        s.label,
        v.variant,
        ...f.threadCounts.map((t) => {
          const p = v.points.find((x) => x.threads === t);
          if (p === undefined) return '-';
          if (p.tps.value === null) return p.failed ? 'failed' : '-';
          return rangeText(p.tps) + p.clientBound;
        }),
      ]);
    }
  });
  const tables: TableBlock[] = [
    {
      title: 'Peak and fall-off (TPS)',
      head: ['sweep', 'variant', 'peak threads', 'peak TPS', 'falls off from', 'fall-off point / peak', 'last vs peak'],
      rows: findingRows,
      numeric: [2, 3, 4, 6],
      notes: [
        'Fall-off: the first thread count past the peak below 90% of it; its ratio to the peak has an interval ' +
          'only from 2+ repeats a point. Errors: failed steps, reconnects, or sysbench errors above 0.1% of ' +
          'transactions; those points are kept and marked, not dropped.',
      ],
    },
  ];
  if (errorRows.length > 0)
    tables.push({
      title: 'Points with errors',
      head: ['sweep', 'variant', 'threads', 'what', 'errors', 'of transactions', 'reconnects', 'error'],
      rows: errorRows,
      numeric: [2, 4, 5, 6],
      notes: [
        `Marked: a failed step (e.g. a connection limit), any reconnect, or sysbench errors (deadlocks, lock ` +
          `waits, dropped connections) above ` +
          pct(SIGNIFICANT_ERROR_SHARE, 1) +
          ` of transactions.`,
      ],
    });
  tables.push({
    title: 'TPS per thread count (95% interval)',
    head: ['sweep', 'variant', ...f.threadCounts.map((t) => `${t} thr`)],
    rows: pointRows,
    // Not right-aligned numbers: a value and its range wrap within a column, so a dozen thread counts fit the page.
    notes: [
      'Interval: over the repeats (run to run), or, marked *, batch means of one run’s intervals.',
      ...(anyWithinRun ? [WITHIN_RUN_NOTE] : []),
    ],
  });
  const scoreTable: TableBlock[] =
    f.overall.length > 0
      ? [
          {
            title: '100-point score: mean QPS + mean TPS over the sweep, best = 100',
            head: ['variant', ...f.sweeps.map((s) => s.label), 'overall'],
            rows: f.overall.map((o) => [
              o.variant,
              ...f.sweeps.map((s) => {
                const x = s.scores.find((y) => y.target === o.variant);
                return x
                  ? `${x.score.toFixed(1)}${x.failedThreads.length > 0 ? ` (${x.failedThreads.length} failed)` : ''}`
                  : '-';
              }),
              o.score.toFixed(1),
            ]),
            numeric: f.sweeps.map((_, i) => i + 1).concat([f.sweeps.length + 1]),
            notes: ['A thread count a variant could not serve counts as 0 throughput.'],
          },
        ]
      : [];
  const lines = threadSweepSentences(f);
  if (f.clientBound !== null) lines.push(f.clientBound);
  return {
    id: 'sweep',
    title: 'Thread sweep',
    question: 'How does throughput scale with threads, where does it peak and fall off, and where do connections fail?',
    findings: lines,
    tables,
    charts,
    answer: { lines, tables: scoreTable, charts: answerCharts },
  };
}
