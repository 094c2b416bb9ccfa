/**
 * S3, write forwarding: the same workload on the writer and on a reader (writes forwarded) per
 * thread count and statement mix, the read shares at which the reader wins, readers summed against
 * the writer (scale-out), and each consistency level's latency cost (average and tail, with
 * intervals) with the stale reads it allows.
 *
 * Which read shares the reader wins at is read off the same ratios the grid shows, so the sentence
 * and the grid cannot disagree: a win needs the interval above 100%; on one run's intervals it is a
 * win "in this run", not beyond the noise.
 */
import { forestChart, lineChart, type ForestRow, type XYSeries } from '../charts';
import { fixed, num, pct } from '../../format';
import type { ChartBlock, ReportSection, TableBlock } from '../model';
import { compactRatio, rangeText, ratioText, verdictText, type Estimated, type RatioFinding } from '../findings';
import {
  clientBoundFinding,
  estimate,
  ratioOf,
  uniqueInOrder,
  type Context,
  type Estimate,
  type StepGroup,
} from '../context';
import { studyTable } from './forwarding-study';
import {
  coTenantSentence,
  replicaLagOf,
  timelineOf,
  timelineTable,
  type Lag,
  type TimelineRow,
} from './forwarding-timeline';
import {
  FIXED_ORDER_WORDS,
  controlOrderText,
  serverRatio,
  sideOf,
  splitTransactionSentence,
  writerAlwaysFirst,
  type StepSide,
} from './forwarding-confounds';

/**
 * One run's interval clear of 100% says only that the figure was higher or lower in that run, not
 * better or worse beyond the noise: the cells and sentences say the direction, the note what it rests on.
 */
function verdict(r: RatioFinding, higherIsBetter: boolean): string {
  const oneRunDirection = r.interval?.covers === 'within-run' && (r.direction === 'higher' || r.direction === 'lower');
  return oneRunDirection ? `${r.direction} in this run*` : verdictText(r, higherIsBetter);
}

const cell = (r: RatioFinding, higherIsBetter: boolean, digits = 1): string =>
  `${ratioText(r, digits)} ${verdict(r, higherIsBetter)}`;

function compact(r: RatioFinding, higherIsBetter: boolean): string {
  const c = compactRatio(r, higherIsBetter);
  const v = verdictText(r, higherIsBetter);
  return c.endsWith(v) ? c.slice(0, c.length - v.length) + verdict(r, higherIsBetter) : c;
}

/**
 * What the server-side column counts, and why it is not the server table's plain mean: in both steps of a pair
 * every transaction commits once on the writer, and a reader step's load starts later in its window.
 */
const SERVER_RATIO_WORDS =
  "writer's own commits/s: the writer's CommitThroughput, reader step over writer step, over the seconds the " +
  'load filled; each transaction commits once on the writer in both, so it counts what sysbench’s ratio ' +
  'counts. The server table’s plain means read a reader step low: its load starts late (the emulation first ' +
  'waits for the replica).';

/** The within-run note in the words the cells use. */
const WITHIN_RUN_WORDS =
  '*: interval from batch means of one run’s per-interval samples; “higher/lower in this run” says only that ' +
  'this interval excludes 100%. It sees how that run wobbled, not how runs differ (run 2+ repeats to measure ' +
  'that), so it does not tell whether a difference is beyond the run-to-run noise.';

interface ForwardingPair {
  readonly workload: string;
  /** reads:writes per transaction, e.g. "16:4"; "default" for the stock mix. */
  readonly mix: string;
  /** Share of statements that read (0..1) when the mix is set by point_selects; null for the stock mix. */
  readonly readShare: number | null;
  readonly threads: number;
  readonly writerTps: Estimated;
  readonly readerTps: Estimated;
  /** reader TPS / writer TPS */
  readonly ratio: RatioFinding;
  readonly writerLatency: Estimated;
  readonly readerLatency: Estimated;
  /**
   * Locally, a write-only pair is the emulation's control: its reader step sends every statement to the
   * writer as its writer step does, so their ratio is the run's noise alone.
   */
  readonly control: boolean;
  readonly test: string;
  /** The writer's deadlocks and the reader lag at the start of the writer step and of the reader step. */
  readonly writerSide: StepSide;
  readonly readerSide: StepSide;
}

/**
 * The reader step's statements are all writes (oltp_write_only): the local emulation runs every one of
 * them on the writer, so its reader step is the writer step again and compares nothing.
 */
const writesOnly = (g: StepGroup): boolean => g.test === 'oltp_write_only';

interface ReadShareVerdict {
  readonly threads: number;
  /** Read shares (0..1) at which the reader's TPS is above the writer's beyond its interval. */
  readonly wins: readonly number[];
  /** The lowest share from which the reader wins at every higher share tried; null when it does not. */
  readonly winsFrom: number | null;
  /**
   * Not winsFrom, but the lowest win's cell has every higher share's interval around its figure (a win at 80:20,
   * 90:10 at the same level with a wider interval): consistent with a threshold there; null otherwise.
   */
  readonly consistentFrom: number | null;
  readonly tried: readonly number[];
  readonly best: { readonly share: number; readonly ratio: RatioFinding } | null;
  /** Every share's interval includes 100%: the reader is not told apart from the writer at any. */
  readonly noneDiffers: boolean;
  /** Whether the verdicts rest on run-to-run intervals (else one run's). */
  readonly runToRun: boolean;
  /** Each share's ratio, in share order. */
  readonly ratios: readonly { readonly share: number; readonly ratio: RatioFinding }[];
}

interface ScaleOut {
  readonly workload: string;
  readonly readers: number;
  readonly threadsEach: number;
  readonly summed: Estimated;
  readonly writer: Estimated | null;
  readonly ratio: RatioFinding | null;
  /** One reader at the same total threads (the ps*-reader step), and the readers' sum over it. */
  readonly single: Estimated | null;
  readonly vsSingle: RatioFinding | null;
  /** Share of statements that read (0..1) when point_selects sets the mix; null for the stock mix. */
  readonly readShare: number | null;
}

interface ConsistencyLevel extends Lag {
  readonly level: string;
  readonly threads: number;
  readonly tps: Estimated;
  readonly avgMs: Estimated;
  readonly tailMs: Estimated;
  /** TPS over EVENTUAL's; null for EVENTUAL itself. */
  readonly tpsCost: RatioFinding | null;
  /** Tail latency over EVENTUAL's; null for EVENTUAL itself. */
  readonly tailCost: RatioFinding | null;
  readonly avgCost: RatioFinding | null;
  readonly staleReads: { readonly stale: number; readonly checks: number } | null;
  /** Whether the average's interval is TPS's inverted (one run, closed loop: avg = threads / TPS). */
  readonly avgFromTps: boolean;
  /** p99 over p50 (means over the repeats): how widely the level's times vary; null when not measured. */
  readonly spread: number | null;
  /** The median latency, ms (mean over the repeats; no interval from one run); null when not measured. */
  readonly p50Ms: number | null;
  /** p50 over EVENTUAL's; null for EVENTUAL itself or when either is not measured. */
  readonly p50Cost: number | null;
}

export interface ForwardingFindings {
  readonly kind: 'forwarding';
  readonly latencyPercentile: number;
  readonly pairs: readonly ForwardingPair[];
  readonly readShares: readonly ReadShareVerdict[];
  readonly scaleOut: readonly ScaleOut[];
  readonly consistency: readonly ConsistencyLevel[];
  /** No step targets a reader (the local run kept only writer steps). */
  readonly noReaderSteps: boolean;
  readonly localEmulation: boolean;
  /** Write-only workloads kept locally as the emulation's control (writesOnly). */
  readonly controls: readonly string[];
  readonly clientBound: string | null;
  /** Every step in the order it ran, with the reader lag and co-tenant seconds. */
  readonly timeline: readonly TimelineRow[];
}

function writesPerTx(options: Readonly<Record<string, unknown>>): number {
  const n = (k: string, d: number): number => (typeof options[k] === 'number' ? options[k] : d);
  return n('index_updates', 1) + n('non_index_updates', 1) + 2 * n('delete_inserts', 1);
}

/** The mix's point selects when it sets the read share (range selects off); null for the stock mix. */
const pointSelects = (o: Readonly<Record<string, unknown>>): number | null =>
  typeof o['point_selects'] === 'number' && o['range_selects'] === false ? o['point_selects'] : null;

function readShareOf(o: Readonly<Record<string, unknown>>): number | null {
  const ps = pointSelects(o);
  return ps !== null ? ps / (ps + writesPerTx(o)) : null;
}

/** A read share as reads:writes, e.g. 0.714 -> "≈70:30", 0.5 -> "50:50".
 * @internal exported for its tests (a test seam)
 */
export function readShareLabel(share: number): string {
  const reads = Math.round(share * 100);
  const tens = Math.round(share * 10) * 10;
  return Math.abs(reads - tens) <= 2 ? `${reads === tens ? '' : '≈'}${tens}:${100 - tens}` : `${reads}:${100 - reads}`;
}

const sameWorkloadShape = (a: StepGroup, b: StepGroup): boolean =>
  a.variant === b.variant &&
  a.test === b.test &&
  JSON.stringify(a.options) === JSON.stringify(b.options) &&
  a.rate === b.rate;

const LEVEL_ORDER = ['EVENTUAL', 'SESSION', 'GLOBAL'];

/** p99 over p50, each the mean over the successful repeats; null when a repeat lacks either. */
function spreadOf(g: StepGroup): number | null {
  const rows = g.ok.filter((r) => (r.lat_p50_ms ?? 0) > 0 && typeof r.lat_p99_ms === 'number');
  if (rows.length === 0 || rows.length < g.ok.length) return null;
  const m = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return m(rows.map((r) => r.lat_p99_ms!)) / m(rows.map((r) => r.lat_p50_ms!));
}

/** The median latency, the mean over the successful repeats; null when a repeat lacks it. */
function p50Of(g: StepGroup): number | null {
  const xs = g.ok.map((r) => r.lat_p50_ms).filter((v): v is number => typeof v === 'number' && v > 0);
  return xs.length === 0 || xs.length < g.ok.length ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * A reader this close to the writer when a step starts has nothing left to apply: the heartbeat's resolution
 * is a client round trip (core/backends/local/cluster.ts) and Aurora replicas typically lag by tens of ms.
 */
const DRAINED_LAG_MS = 250;

/**
 * With N threads, no rate and no pause between transactions, each thread always has one in flight, so the
 * mean latency is N / TPS (Little's law). From one run the average has no interval of its own; where its
 * figure agrees with N / TPS (within 10%), its interval is TPS's inverted, and its ratio's is too.
 */
function avgFromTps(g: StepGroup, avg: Estimate, tps: Estimate): Estimate | null {
  if (avg.interval !== null || avg.value === null || tps.value === null || tps.interval === null) return null;
  if (g.rate !== 0 || tps.interval.low <= 0) return null;
  if (Math.abs((g.threads * 1000) / tps.value - avg.value) > 0.1 * avg.value) return null;
  const interval = {
    ...tps.interval,
    low: (avg.value * tps.value) / tps.interval.high,
    high: (avg.value * tps.value) / tps.interval.low,
  };
  return { ...avg, interval, ci: null };
}

/** A TPS ratio's interval and verdict carried to the average latency's ratio (avg = threads / TPS). */
function invertedCost(tpsCost: RatioFinding, avgRatio: number | null): RatioFinding {
  if (tpsCost.interval === null || tpsCost.estimate === null || avgRatio === null)
    return { estimate: avgRatio, interval: null, direction: 'unknown' };
  const flip = { higher: 'lower', lower: 'higher' } as const;
  return {
    estimate: avgRatio,
    interval: {
      ...tpsCost.interval,
      low: (avgRatio * tpsCost.estimate) / tpsCost.interval.high,
      high: (avgRatio * tpsCost.estimate) / tpsCost.interval.low,
    },
    direction:
      tpsCost.direction === 'higher' || tpsCost.direction === 'lower' ? flip[tpsCost.direction] : tpsCost.direction,
  };
}

export function analyzeForwarding(ctx: Context): ForwardingFindings | null {
  const readerGroups = ctx.groups.filter((g) => g.target !== 'writer');
  const forwardingVariants = ctx.variants.filter((v) => v.writeForwarding);
  if (readerGroups.length === 0 && forwardingVariants.length === 0) return null;
  const latencyPercentile = (readerGroups[0] ?? ctx.groups[0])?.latPct ?? 95;
  const empty = { pairs: [], readShares: [], scaleOut: [], consistency: [] };
  if (readerGroups.length === 0)
    return {
      kind: 'forwarding',
      latencyPercentile,
      ...empty,
      noReaderSteps: true,
      localEmulation: false,
      controls: [],
      clientBound: null,
      timeline: [],
    };
  const localEmulation = ctx.data.run.backend === 'local';
  const pairs: ForwardingPair[] = [];
  const controls: string[] = [];
  for (const r of readerGroups.filter((g) => g.target === 'reader' && g.options['consistency'] === undefined)) {
    const w = ctx.groups.find((g) => g.target === 'writer' && g.threads === r.threads && sameWorkloadShape(g, r));
    if (!w) continue;
    const control = localEmulation && writesOnly(r);
    if (control) controls.push(r.workload.replace(/-reader$/, ''));
    const ps = pointSelects(r.options);
    const writerTps = estimate(ctx, w, 'tps');
    const readerTps = estimate(ctx, r, 'tps');
    pairs.push({
      workload: r.workload.replace(/-reader$/, ''),
      mix: ps !== null ? `${ps}:${writesPerTx(r.options)}` : 'default',
      readShare: readShareOf(r.options),
      threads: r.threads,
      writerTps,
      readerTps,
      ratio: ratioOf(readerTps, writerTps),
      writerLatency: estimate(ctx, w, 'lat_pct_ms'),
      readerLatency: estimate(ctx, r, 'lat_pct_ms'),
      control,
      test: r.test,
      writerSide: sideOf(ctx, w),
      readerSide: sideOf(ctx, r),
    });
  }
  const readShares: ReadShareVerdict[] = uniqueInOrder(pairs.filter((p) => p.readShare !== null).map((p) => p.threads))
    .sort((a, b) => a - b)
    .map((threads) => {
      const pts = pairs
        .filter((p) => p.threads === threads && p.readShare !== null)
        .sort((a, b) => a.readShare! - b.readShare!);
      const wins = pts.filter((p) => p.ratio.direction === 'higher').map((p) => p.readShare!);
      const from = pts.findIndex((_, i) => pts.slice(i).every((p) => p.ratio.direction === 'higher'));
      const best = pts
        .filter((p) => p.ratio.estimate !== null)
        .sort((a, b) => b.ratio.estimate! - a.ratio.estimate!)[0];
      const lowest = pts.findIndex((p) => p.ratio.direction === 'higher');
      const lowEst = lowest >= 0 ? pts[lowest]!.ratio.estimate : null;
      const consistent =
        from < 0 &&
        lowEst !== null &&
        pts
          .slice(lowest + 1)
          .every(
            (p) =>
              p.ratio.direction === 'higher' ||
              (p.ratio.interval !== null && p.ratio.interval.low <= lowEst && lowEst <= p.ratio.interval.high),
          );
      return {
        threads,
        wins,
        winsFrom: from >= 0 ? pts[from]!.readShare! : null,
        consistentFrom: consistent ? pts[lowest]!.readShare! : null,
        tried: pts.map((p) => p.readShare!),
        best: best !== undefined ? { share: best.readShare!, ratio: best.ratio } : null,
        noneDiffers: pts.length > 0 && pts.every((p) => p.ratio.direction === 'within-noise'),
        runToRun: pts.every((p) => p.ratio.interval?.covers === 'run-to-run'),
        ratios: pts.map((p) => ({ share: p.readShare!, ratio: p.ratio })),
      };
    });
  const scaleOut: ScaleOut[] = readerGroups
    .filter((g) => g.target === 'all-readers')
    .map((r) => {
      const clients = r.rows[0]?.clients ?? 1;
      const w = ctx.groups.find(
        (g) => g.target === 'writer' && g.threads === r.threads * clients && sameWorkloadShape(g, r),
      );
      const one = ctx.groups.find(
        (g) => g.target === 'reader' && g.threads === r.threads * clients && sameWorkloadShape(g, r),
      );
      const summed = estimate(ctx, r, 'tps');
      const writer = w ? estimate(ctx, w, 'tps') : null;
      const single = one ? estimate(ctx, one, 'tps') : null;
      return {
        workload: r.workload,
        readers: clients,
        threadsEach: r.threads,
        summed,
        writer,
        ratio: writer ? ratioOf(summed, writer) : null,
        single,
        vsSingle: single ? ratioOf(summed, single) : null,
        readShare: readShareOf(r.options),
      };
    });
  const levelRank = (g: StepGroup): number => {
    const i = LEVEL_ORDER.indexOf(String(g.options['consistency']).toUpperCase());
    return i < 0 ? LEVEL_ORDER.length : i;
  };
  const levels = readerGroups
    .filter((g) => typeof g.options['consistency'] === 'string')
    .sort((a, b) => levelRank(a) - levelRank(b) || a.threads - b.threads);
  const eventual = levels.find((g) => String(g.options['consistency']).toUpperCase() === 'EVENTUAL');
  const consistency: ConsistencyLevel[] = levels.map((g) => {
    const measured = g.ok.filter((r) => typeof r.read_back_checks === 'number' && typeof r.stale_reads === 'number');
    const tail = estimate(ctx, g, 'lat_pct_ms');
    const tps = estimate(ctx, g, 'tps');
    const avgOf = (x: StepGroup): Estimate => {
      const a = estimate(ctx, x, 'lat_avg_ms');
      return avgFromTps(x, a, estimate(ctx, x, 'tps')) ?? a;
    };
    const avg = avgOf(g);
    const fromTps = avg.interval !== null && avg.source === 'single';
    const vsEventual = eventual !== undefined && g !== eventual;
    const tpsCost = vsEventual ? ratioOf(tps, estimate(ctx, eventual, 'tps')) : null;
    const evAvg = vsEventual ? avgOf(eventual) : null;
    const avgRatio = evAvg?.value && avg.value !== null ? avg.value / evAvg.value : null;
    return {
      level: String(g.options['consistency']),
      threads: g.threads,
      tps,
      tpsCost,
      avgMs: avg,
      avgFromTps: fromTps,
      tailMs: tail,
      tailCost: vsEventual ? ratioOf(tail, estimate(ctx, eventual, 'lat_pct_ms')) : null,
      avgCost:
        tpsCost === null
          ? null
          : fromTps && evAvg?.interval !== null
            ? invertedCost(tpsCost, avgRatio)
            : ratioOf(avg, estimate(ctx, eventual!, 'lat_avg_ms')),
      staleReads:
        measured.length === 0
          ? null
          : {
              stale: measured.reduce((a, r) => a + r.stale_reads!, 0),
              checks: measured.reduce((a, r) => a + r.read_back_checks!, 0),
            },
      spread: spreadOf(g),
      p50Ms: p50Of(g),
      p50Cost: vsEventual && p50Of(g) !== null && p50Of(eventual) ? p50Of(g)! / p50Of(eventual)! : null,
      ...replicaLagOf(ctx, g),
    };
  });
  if (pairs.length === 0 && scaleOut.length === 0 && consistency.length === 0) return null;
  return {
    kind: 'forwarding',
    latencyPercentile,
    pairs,
    readShares,
    scaleOut,
    consistency,
    noReaderSteps: false,
    localEmulation,
    controls: uniqueInOrder(controls),
    clientBound: clientBoundFinding(ctx, ctx.groups),
    timeline: timelineOf(ctx, ctx.groups),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

const staleText = (s: ConsistencyLevel['staleReads']): string | null =>
  s === null
    ? null
    : `${num(s.stale, 0)} / ${num(s.checks, 0)}${s.checks > 0 ? ` (${pct(s.stale / s.checks, 2)})` : ''}`;

/**
 * What a "reader" figure measured. On Aurora the reader forwards its writes to the writer; locally no write
 * is forwarded: the emulation sends them to the writer on a second connection (client/workloads/wf_emulation.lua),
 * which the Answer's first sentence says once, so the headings do not repeat it.
 */
const readerWrites = (f: ForwardingFindings): string => (f.localEmulation ? '' : ' (writes forwarded)');

const pairName = (p: ForwardingPair): string => (p.control ? `${p.workload} (control)` : p.workload);

const labels = (xs: readonly number[]): string => xs.map(readShareLabel).join(', ');

/** One thread count's read shares as this run's intervals place them, in the grid's words, and what follows. */
function shareWords(v: ReadShareVerdict): { text: string; tail: string } {
  const top = Math.max(...v.tried);
  if (v.winsFrom !== null)
    return v.winsFrom === top && v.tried.length > 1
      ? { text: `at ${readShareLabel(top)} only, the highest share tried`, tail: '' }
      : { text: `from ${readShareLabel(v.winsFrom)} up`, tail: '' };
  // A win at one share with the higher shares at its level but within the noise: one cell, not a threshold.
  if (v.consistentFrom !== null) return { text: `at ${labels(v.wins)} only`, tail: '' };
  if (v.wins.length > 0) {
    const not = v.tried.filter((s) => !v.wins.includes(s) && s > Math.min(...v.wins));
    return { text: `at ${labels(v.wins)} but not ${labels(not)}`, tail: '' };
  }
  return { text: 'at no share', tail: '' };
}

/** Each distinct reading once, with the thread counts it holds for: "at 80:20 only (32, 64 threads); ...". */
function sharesInRun(shares: readonly ReadShareVerdict[]): string {
  const groups: { text: string; tail: string; threads: number[] }[] = [];
  for (const v of shares) {
    const w = shareWords(v);
    const g = groups.find((x) => x.text === w.text && x.tail === w.tail);
    if (g) g.threads.push(v.threads);
    else groups.push({ ...w, threads: [v.threads] });
  }
  return groups.map((g) => `${g.text} (${g.threads.join(', ')} threads)${g.tail}`).join('; ') + unresolvedAbove(shares);
}

/**
 * The shares above a single win that stayed within the noise, with their figures: "90:10 at 32, 64 threads 111%,
 * 108%, interval includes 100%" (a point estimate as high as the win's is not a win).
 */
function unresolvedAbove(shares: readonly ReadShareVerdict[]): string {
  const cells = shares.flatMap((v) =>
    v.consistentFrom === null
      ? []
      : v.ratios
          .filter((r) => r.share > v.consistentFrom! && r.ratio.direction === 'within-noise')
          .map((r) => ({ share: r.share, threads: v.threads, ratio: r.ratio })),
  );
  const byShare = uniqueInOrder(cells.map((c) => c.share)).sort((a, b) => a - b);
  if (byShare.length === 0) return '';
  return (
    '; ' +
    byShare
      .map((sh) => {
        const of = cells.filter((c) => c.share === sh);
        return (
          `${readShareLabel(sh)} at ${of.map((c) => c.threads).join(', ')} threads ` +
          of.map((c) => pct(c.ratio.estimate, 0)).join(', ')
        );
      })
      .join('; ') +
    `, interval includes 100%`
  );
}

/** No thread count wins from a share below the top one up: the grid resolves no threshold in this run. */
const noThreshold = (shares: readonly ReadShareVerdict[]): boolean =>
  shares.some((v) => v.wins.length > 0) &&
  // Scattered cells say "not a threshold" themselves.
  !shares.some(isScattered) &&
  !shares.some((v) => v.winsFrom !== null && v.winsFrom < Math.max(...v.tried));

/**
 * The read-share finding, once, from the same verdicts the grid shows: from one repeat it cannot be
 * resolved, and the shares at which this run's interval clears 100% are named as this run's only.
 */
function readShareSentence(shares: readonly ReadShareVerdict[]): string {
  return readShareWins(shares);
}

const isScattered = (v: ReadShareVerdict): boolean =>
  v.wins.length > 0 && v.winsFrom === null && v.consistentFrom === null;

/** Which thread counts' wins are scattered: a row with a threshold is not called scattered with the others. */
function scatteredText(shares: readonly ReadShareVerdict[], words: string): string {
  const scattered = shares.filter(isScattered);
  if (scattered.length === 0) return '';
  if (scattered.length === shares.length) return words;
  return `: at ${scattered.map((v) => v.threads).join(', ')} threads, ${words.replace(/^: /, '')}`;
}

function readShareWins(shares: readonly ReadShareVerdict[]): string {
  if (!shares.every((v) => v.runToRun))
    return (
      `Read share (reads:writes) from which the reader wins: 1 repeat cannot resolve the grid's ratios ` +
      `(run 2+ repeats to measure the run-to-run noise); ${noThreshold(shares) ? 'no threshold resolved; ' : ''}` +
      `in this run the reader was higher (interval above 100%) ${sharesInRun(shares)}` +
      `${scatteredText(shares, ': scattered cells, not a threshold')}.`
    );
  const per = shares.map((v) => {
    if (v.winsFrom !== null) return `${v.threads} threads from ${readShareLabel(v.winsFrom)} up`;
    if (v.wins.length > 0)
      return `${v.threads} threads none (it wins at ${labels(v.wins)} but not at the higher shares tried)`;
    return `${v.threads} threads none (it wins at no share tried)`;
  });
  return (
    `Read share (reads:writes) from which the reader wins at every higher share, beyond the run-to-run noise: ` +
    `${per.join('; ')}.`
  );
}

/**
 * A verdict list's tail, from the same ratios the tables show: on run-to-run intervals which differ
 * and that the rest are within the noise; from one repeat that it cannot resolve them, and which of
 * this run's intervals exclude 100% (the tables' "higher/lower in this run").
 */
function differing(items: readonly { label: string; ratio: RatioFinding }[], higherIsBetter: boolean): string {
  const apart = items.filter((x) => x.ratio.direction === 'higher' || x.ratio.direction === 'lower');
  if (items.every((x) => x.ratio.interval === null))
    return 'no interval, so the noise is unknown (run 2+ repeats to measure it)';
  if (!items.every((x) => x.ratio.interval?.covers === 'run-to-run')) {
    const allOneWay = apart.length === items.length && new Set(apart.map((x) => x.ratio.direction)).size === 1;
    const inRun =
      apart.length === 0
        ? 'in this run every interval includes 100%'
        : allOneWay
          ? `in this run all ${apart[0]!.ratio.direction} (every interval excludes 100%)`
          : `in this run ${apart.map((x) => `${x.label} ${x.ratio.direction}`).join(', ')} (interval clear of ` +
            `100%), the others within this run's noise`;
    return (
      `1 repeat cannot resolve ${items.length === 1 ? 'this' : 'these'} ` +
      `(run 2+ repeats to measure the run-to-run noise); ${inRun}`
    );
  }
  if (apart.length === 0) return 'none differs beyond the run-to-run noise';
  const list = apart.map((x) => `${x.label} ${verdictText(x.ratio, higherIsBetter)}`).join(', ');
  const rest = items.length - apart.length;
  return `beyond the run-to-run noise: ${list}` + (rest > 0 ? `, the others within the noise` : '');
}

const secs = (ms: number): string => `${fixed(ms / 1000, 2)} s`;

/**
 * The replica state behind each level's figures: the lag when its step started (left from the step
 * before) and during it (from its own writes). EVENTUAL reads do not wait, so a replica its own
 * writes put behind makes its read-backs stale; SESSION and GLOBAL wait, so a lag shows as latency.
 */
function lagSentence(levels: readonly ConsistencyLevel[], local: boolean): string {
  return [lagStates(levels, local), eventualStale(levels, local)].filter((x) => x !== '').join(' ');
}

/**
 * What EVENTUAL's stale share says. Locally the emulation reads the marker back on the reader the moment its
 * commit returns on the writer, without waiting, and MariaDB replicates asynchronously (a commit returns
 * before a replica has it): the read-back can come first at any lag, so its share is the emulation's
 * timing, not the replica's lag. On Aurora the share goes with the lag the step ran at, which one step at
 * one lag cannot separate from the level.
 */
function eventualStale(levels: readonly ConsistencyLevel[], local: boolean): string {
  const ev = levels.find((c) => c.level.toUpperCase() === 'EVENTUAL');
  if (ev === undefined || ev.staleReads === null || ev.staleReads.checks === 0 || ev.staleReads.stale === 0) return '';
  const share = pct(ev.staleReads.stale / ev.staleReads.checks, 2);
  return local
    ? `EVENTUAL's stale share (${share}) is how the emulation serves EVENTUAL: it reads the marker on the reader ` +
        `as soon as the commit returns on the writer, with no wait, and MariaDB's replication is asynchronous ` +
        `(a commit returns before a replica has it), so a read-back can come first at any lag; it ` +
        `measures that timing, not Aurora's.`
    : `EVENTUAL reads do not wait: its stale share (${share}) came with the lag its step ran at, and one ` +
        `step at one lag does not separate the two.`;
}

function lagStates(levels: readonly ConsistencyLevel[], local: boolean): string {
  const measured = levels.filter((c) => c.lagAtStartMs !== null);
  if (measured.length === 0)
    return (
      'Replica lag was not measured, so whether each level started from a drained replica (rather than one ' +
      'still applying the step before) is unknown.'
    );
  const behind = measured.filter((c) => c.lagAtStartMs! > DRAINED_LAG_MS);
  // A lag rising past where the step started it: the step's own writes outran the replica.
  const grew = measured.filter((c) => c.lagDuringMs !== null && c.lagDuringMs.max > c.lagAtStartMs! + DRAINED_LAG_MS);
  if (behind.length === 0 && grew.length === 0)
    return (
      `Each level started from a drained replica (reader lag when the step started: ` +
      `${measured.map((c) => `${c.level} ${secs(c.lagAtStartMs!)}`).join(', ')}).`
    );
  const each = measured
    .map(
      (c) =>
        `${c.level} ${secs(c.lagAtStartMs!)}` +
        (c.lagDuringMs !== null ? `, ${fixed(c.lagDuringMs.mean / 1000, 2)} / ${secs(c.lagDuringMs.max)}` : ''),
    )
    .join('; ');
  const out = [`Reader lag at the start of each level's step, then during it (mean / max): ${each}.`];
  const upTo = (c: ConsistencyLevel): string => secs(c.lagDuringMs!.max);
  const waiting = grew.filter((c) => c.level.toUpperCase() !== 'EVENTUAL');
  if (waiting.length > 0)
    out.push(
      `${waiting.map((c) => `${c.level} (up to ${upTo(c)})`).join(', ')}: each step's own writes put the replica ` +
        `behind and its reads waited for it, so its latency includes that lag.`,
    );
  // What a lag left by the step before can change depends on whether the level's reads wait: a waiting level
  // (SESSION, GLOBAL) waits for its own writes whatever the lag, so it cannot turn its reads stale, only slower.
  const started = (c: ConsistencyLevel): string =>
    `${c.level} started with the replica still behind (over ${secs(DRAINED_LAG_MS)}, still applying the step ` +
    `before)`;
  for (const c of behind)
    out.push(
      c.level.toUpperCase() === 'EVENTUAL'
        ? local
          ? // One machine: the replica applies that backlog on the CPUs the step's queries use. A lag that
            // stays up through the step is the level's too: with no wait, nothing throttles its writes.
            c.lagDuringMs !== null && c.lagDuringMs.mean > DRAINED_LAG_MS
            ? `${started(c)}, on the CPUs its queries use, and stayed behind through its step ` +
              `(${secs(c.lagDuringMs.mean)} mean; with no wait nothing throttles its writes, so that lag may be ` +
              `the level's own): its latency, and each level's difference from it, may come from the order ` +
              `the steps ran in or from the level, which this run cannot tell apart (run the levels in random ` +
              `order, resting until the lag is 0).`
            : `${started(c)}, on the CPUs its queries use: its latency, and each level's difference from it, ` +
              `may come from the order the steps ran in, not the level.`
          : `${started(c)}: its reads do not wait, so its stale reads, not its latency, may come from the ` +
            `order the steps ran in, not the level.`
        : `${started(c)}: its reads waited for that lag too, so its latency difference from EVENTUAL may come ` +
            `from the order the steps ran in, not the level; its stale reads cannot (it waits for its own ` +
            `writes whatever the lag).`,
    );
  const baseline = measured.find((c) => c.level.toUpperCase() === 'EVENTUAL');
  if (behind.some((c) => c !== baseline) && baseline !== undefined && !behind.includes(baseline))
    out.push('EVENTUAL, the baseline, started drained.');
  return out.join(' ');
}

/**
 * The Answer's first sentence on a local run: what the reader steps measured, and what only Aurora can
 * show. (Aurora User Guide, "Using local write forwarding": aurora_fwd_writer_max_connections_pct caps the
 * forwarded sessions on the writer, aurora_fwd_writer_idle_timeout closes idle ones; none of it, nor
 * failover, exists in MariaDB.)
 */
function localScope(): string {
  return (
    'Locally no write is forwarded: a reader step reads on the reader and the emulation runs its writes on ' +
    'the writer ("reader" below means that); Aurora’s forwarding cost (the reader-to-writer hop, the ' +
    'writer’s forwarding sessions) and failover cannot be shown here.'
  );
}

/**
 * The Answer's first line: where the reader was ahead of the writer (and behind), from the same directions the
 * tables show, so the question has a one-line answer before the evidence.
 */
function headline(f: ForwardingFindings): string | null {
  const plain = f.pairs.filter((p) => p.readShare === null && !p.control);
  const list = (xs: string[]): string =>
    xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
  const at = (dir: string): string[] => {
    const groups: { label: string; threads: number[] }[] = [];
    for (const v of f.readShares)
      for (const r of v.ratios.filter((x) => x.ratio.direction === dir)) {
        const label = readShareLabel(r.share);
        const g = groups.find((x) => x.label === label);
        if (g) g.threads.push(v.threads);
        else groups.push({ label, threads: [v.threads] });
      }
    const shares = groups.map((g) => `${g.label} (${g.threads.join(', ')} threads)`);
    // The scale-out's readers summed against the writer are a reader-vs-writer finding too.
    const scaled = f.scaleOut.filter((s) => s.ratio?.direction === dir);
    const scaledText =
      scaled.length === 0
        ? []
        : [
            `${scaled[0]!.readers} readers summed (scale-out) at ` +
              scaled.map((s) => (s.readShare !== null ? readShareLabel(s.readShare) : s.workload)).join(', '),
          ];
    return [
      ...uniqueInOrder(plain.filter((p) => p.ratio.direction === dir).map((p) => p.workload)).map(
        (w) =>
          `${w} at ${plain
            .filter((p) => p.workload === w && p.ratio.direction === dir)
            .map((p) => p.threads)
            .join(', ')} threads`,
      ),
      ...(shares.length > 0 ? [`read shares ${list(shares)}`] : []),
      ...scaledText,
    ];
  };
  if (plain.length === 0 && f.readShares.length === 0) return null;
  const ahead = at('higher');
  const behind = at('lower');
  const oneRun = f.pairs.some((p) => p.ratio.interval?.covers === 'within-run');
  // Items that hold commas and "and" of their own: three or more read apart with semicolons.
  const join = (xs: string[]): string =>
    xs.length === 2
      ? `${xs[0]}, and ${xs[1]}`
      : xs.length > 2
        ? `${xs.slice(0, -1).join('; ')}; and ${xs[xs.length - 1]}`
        : list(xs);
  return (
    (ahead.length === 0
      ? 'In this run the reader was not ahead of the writer at any setting'
      : `In this run the reader was ahead of the writer only for ${join(ahead)}`) +
    (behind.length > 0 ? `; behind for ${join(behind)}` : '') +
    (oneRun ? ': one repeat, so none of it is resolved beyond run-to-run noise.' : '.')
  );
}

/** "rw 86%, 98%, 121%": each workload's ratios at the threads given, bare (their verdicts follow). */
function ratiosByThreads(pairs: readonly ForwardingPair[], threads: readonly number[]): string {
  return uniqueInOrder(pairs.map((p) => p.workload))
    .map(
      (w) =>
        `${w} ${threads
          .map((t) => pairs.find((p) => p.workload === w && p.threads === t))
          .map((p) => (p ? ratioText(p.ratio, 0).replace(/ \(.*\)$/, '') : '-'))
          .join(', ')}`,
    )
    .join(', ');
}

/** The rw pairs' start lags where they differ: the step order weighs on this ratio as on the control's. */
function rwOrderText(rw: readonly ForwardingPair[]): string {
  const order = controlOrderText(rw, DRAINED_LAG_MS, false);
  return order !== null ? ` Also ${order.replace(/^its steps/, 'its steps (rw)')}.` : '';
}

const items = (pairs: readonly ForwardingPair[]) =>
  pairs.map((p) => ({ label: `${p.workload} t${p.threads}`, ratio: p.ratio }));

/**
 * The write-only pairs as the emulation's control: both steps send every statement to the writer, so what
 * their ratio shows is this run's noise. A control clear of 100% says this run's intervals call differences
 * where the setup has none.
 */
function controlSentence(controls: readonly ForwardingPair[], threads: readonly number[]): string {
  const apart = controls.filter((p) => p.ratio.direction === 'higher' || p.ratio.direction === 'lower');
  const order = controlOrderText(controls, DRAINED_LAG_MS);
  return (
    `Write-only is the emulation's control: locally both of its steps send every statement to the writer: ` +
    `${ratiosByThreads(controls, threads)}: ` +
    differing(items(controls), true) +
    (order !== null ? `; but ${order}.` : '.') +
    (apart.length > 0
      ? ` A control cell "higher/lower in this run" with nothing to tell apart: this run's intervals understate ` +
        `its noise, so no cell above is a difference on its own.`
      : '')
  );
}

/**
 * The study's scale-out gain came at read shares above 70:30. Readers higher in this run only at lower shares,
 * with the shares above 70:30 within its noise, is no pattern at all on one run's intervals (not its reverse):
 * the sentence says none is resolved rather than read a trend into the cells.
 */
function scaleOutPattern(scaled: readonly ScaleOut[]): string {
  const higher = scaled.filter((s) => s.ratio!.direction === 'higher' && s.readShare !== null);
  const above = scaled.filter((s) => s.readShare !== null && s.readShare > 0.7);
  if (higher.length === 0 || higher.some((s) => s.readShare! > 0.7) || above.length === 0) return '';
  return (
    ` The readers were higher in this run only at ${labels(higher.map((s) => s.readShare!))}; the shares above ` +
    `70:30 (where the study's gain was) are within this run's noise: no pattern over the read shares is resolved.`
  );
}

/** The readers summed against one reader at the same total threads: what the second reader added. */
function vsOneReader(scaled: readonly ScaleOut[]): string {
  const one = scaled.filter((s) => s.vsSingle !== null && s.vsSingle.estimate !== null);
  if (one.length === 0) return '';
  const total = one[0]!.readers * one[0]!.threadsEach;
  return (
    ` Against one reader at ${total} threads (its ps*-reader step): ` +
    one.map((s) => `${s.workload} ${pct(s.vsSingle!.estimate, 0)}`).join(', ') +
    `: ${differing(
      one.map((s) => ({ label: s.workload, ratio: s.vsSingle! })),
      true,
    )}.`
  );
}

/** What one repeat cannot do, as differing() and the other verdict lists word it, with what joins it. */
const ONE_REPEAT = new RegExp(
  "(; )?1 repeat cannot resolve (?:these differences|these|this|the grid's ratios) " +
    '\\(run 2\\+ repeats to measure the run-to-run noise\\)(; |\\.)?',
  'g',
);

/**
 * The one-repeat caveat once, where it first comes: after it, each list keeps only what this run showed
 * ("; 1 repeat cannot resolve these differences (...)." ends a sentence, the others lead one).
 */
function sayOnce(lines: readonly string[]): string[] {
  let said = false;
  return lines.map((line) =>
    line.replace(ONE_REPEAT, (m: string, lead?: string, tail?: string) => {
      if (!said) {
        said = true;
        return m.replace(/cannot resolve (these|this)(?: differences)? /, 'cannot resolve $1 or any difference below ');
      }
      if (lead !== undefined && tail === '.') return '.';
      return lead === undefined && tail === '; ' ? '' : m;
    }),
  );
}

/** The answer's sentences, in S3's shape, and the scale-out line its table carries in the evidence. */
function forwardingSentences(f: ForwardingFindings): { answer: string[]; scaleOut: string[] } {
  if (f.noReaderSteps)
    return {
      answer: [
        'No step of this run targets a reader: write forwarding, reader scale-out and consistency levels are ' +
          'Aurora features (AWS only); a local run keeps only the writer steps.',
      ],
      scaleOut: [],
    };
  const head = headline(f);
  // The one-line answer first, and the local scope with it: one bullet, so the Answer stays at five.
  const out: string[] =
    head !== null ? [head + (f.localEmulation ? ` ${localScope()}` : '')] : f.localEmulation ? [localScope()] : [];
  const stock = f.pairs.filter((p) => p.readShare === null && !p.control);
  const controls = f.pairs.filter((p) => p.control);
  const threads = uniqueInOrder([...stock, ...controls].map((p) => p.threads)).sort((a, b) => a - b);
  const rwStock = stock.filter((p) => p.test === 'oltp_read_write');
  if (stock.length > 0)
    out.push(
      `Reader${readerWrites(f)} over writer TPS at ${threads.join('/')} threads: ` +
        // The writer's own commit ratios are in the study table and beside these in the TPS table: not here too.
        ratiosByThreads(stock, threads) +
        `: ${differing(items(stock), true)}.` +
        (f.localEmulation && rwStock.length > 0
          ? ' ' +
            splitTransactionSentence(
              rwStock,
              rwStock.some((p) => p.ratio.direction === 'higher'),
            ) +
            rwOrderText(rwStock)
          : ''),
    );
  const fixedOrder = f.localEmulation && writerAlwaysFirst(f.pairs) ? FIXED_ORDER_WORDS : null;
  if (controls.length > 0) out.push(controlSentence(controls, threads) + (fixedOrder ? ` ${fixedOrder}` : ''));
  else if (fixedOrder !== null) out.push(fixedOrder);
  if (f.readShares.length > 0) out.push(readShareSentence(f.readShares));
  const scaleOut: string[] = [];
  const scaled = f.scaleOut.filter((s) => s.ratio !== null && s.ratio.estimate !== null);
  if (scaled.length > 0) {
    const first = scaled[0]!;
    // One machine: the readers' CPUs are the writer's, so what a reader instance adds cannot show; what
    // differs from the writer step is the client and how the sessions spread over the servers.
    const oneMachine = f.localEmulation
      ? ' On one machine the readers share the writer’s CPUs and the emulation runs their writes on the ' +
        'writer, so the capacity an added reader instance brings on Aurora cannot show here.' +
        (scaled.some((s) => s.ratio!.direction === 'higher')
          ? ` Where the readers were higher, the gain can come from ${first.readers} sysbench processes instead ` +
            `of one and fewer sessions per server (each reader serves the reads of ${first.threadsEach} threads, ` +
            `not one server all ${first.readers * first.threadsEach}), not from added capacity.`
          : '')
      : '';
    scaleOut.push(
      `Scale-out, ${first.readers} readers x ${first.threadsEach} threads summed against the writer at ` +
        `${first.readers * first.threadsEach}: ` +
        scaled.map((s) => `${s.workload} ${ratioText(s.ratio!, 0).replace(/ \(.*\)$/, '')}`).join(', ') +
        ` of the writer's TPS: ${differing(
          scaled.map((s) => ({ label: s.workload, ratio: s.ratio! })),
          true,
        )}.` +
        vsOneReader(scaled) +
        oneMachine +
        scaleOutPattern(scaled),
    );
  }
  const costs = f.consistency.filter((c) => c.tailCost !== null);
  const stale = f.consistency.filter((c) => c.staleReads !== null);
  if (costs.length > 0 || stale.length > 0) {
    const oneRun = costs.some((c) => c.tailCost!.interval?.covers !== 'run-to-run');
    // From one repeat the within-run intervals are left to the table: they miss the run-to-run noise.
    // The figures bare (their intervals are the table's); each ratio against EVENTUAL's with the verdict its
    // table cell shows, and its interval where that interval tells a difference beyond the run-to-run noise.
    const shown = (e: Estimated): string => rangeText({ ...e, interval: null });
    const against = (r: RatioFinding | null, higherIsBetter: boolean): string => {
      if (r === null || r.estimate === null) return '';
      if (r.interval === null) return ` (${pct(r.estimate, 0)})`;
      const words = verdict(r, higherIsBetter).replace(/\*$/, '');
      const apart = !oneRun && (r.direction === 'higher' || r.direction === 'lower');
      return ` (${apart ? ratioText(r, 0) : pct(r.estimate, 0)}, ${words})`;
    };
    const p = `p${f.latencyPercentile}`;
    const ev = f.consistency.find((c) => c.tailCost === null);
    const all = [...(ev !== undefined ? [ev] : []), ...costs];
    // Each metric across the levels, so none is quoted where another points the other way: TPS, the average
    // (only when it is not threads / TPS again), the median and the tail.
    const metric = (name: string, unit: string, of: (c: ConsistencyLevel) => string): string =>
      `${name} ${all.map((c, i) => `${c.level} ${of(c)}${i === 0 ? unit : ''}`).join(', ')}`;
    const withP50 = all.every((c) => c.p50Ms !== null);
    const metrics = [
      metric('TPS', '', (c) => `${shown(c.tps)}${against(c.tpsCost, true)}`),
      ...(all.some((c) => c.avgFromTps)
        ? []
        : [metric('average', ' ms', (c) => `${shown(c.avgMs)}${against(c.avgCost, false)}`)]),
      ...(withP50
        ? [metric('p50', ' ms', (c) => `${fixed(c.p50Ms, 2)}${c.p50Cost !== null ? ` (${pct(c.p50Cost, 0)})` : ''}`)]
        : []),
      metric(p, ' ms', (c) => `${shown(c.tailMs)}${against(c.tailCost, false)}`),
    ];
    // The median and the tail moving apart is the finding: neither alone is the level's latency cost.
    const apartWays =
      withP50 &&
      costs.length > 0 &&
      (costs.every((c) => c.p50Cost! > 1 && c.tailCost!.estimate !== null && c.tailCost!.estimate < 1) ||
        costs.every((c) => c.p50Cost! < 1 && c.tailCost!.estimate !== null && c.tailCost!.estimate > 1));
    const levels =
      metrics.join('; ') +
      (apartWays
        ? `: the p50 ${costs[0]!.p50Cost! > 1 ? 'rose' : 'fell'} and the ${p} ` +
          `${costs[0]!.p50Cost! > 1 ? 'fell' : 'rose'}, so neither alone is the levels' latency cost`
        : '');
    const staleText2 =
      stale.length > 0
        ? ` Stale reads after the session's own write: ` +
          stale.map((c) => `${c.level} ${staleText(c.staleReads)}`).join(', ') +
          '.'
        : '';
    // One bullet with the lag it ran at: the page folds an Answer past five, and the lag is what reads it.
    out.push(
      `Consistency levels at ${uniqueInOrder(f.consistency.map((c) => c.threads)).join('/')} threads, ` +
        `against EVENTUAL's figure: ${levels}` +
        (oneRun
          ? '; 1 repeat cannot resolve these differences (run 2+ repeats to measure the run-to-run noise).'
          : '.') +
        staleText2 +
        ` ${lagSentence(f.consistency, f.localEmulation)}`,
    );
  }
  if (f.clientBound !== null) out.push(f.clientBound);
  const coTenant = coTenantSentence(f.timeline);
  if (coTenant !== null) out.splice(f.localEmulation ? 1 : 0, 0, coTenant);
  return { answer: sayOnce(out), scaleOut: sayOnce(scaleOut) };
}

/**
 * How every reader step of a local run reads: in the banner, because it changes each figure of the
 * study, not one sentence of it.
 */
export const LOCAL_EMULATION_WARNING =
  'Local rehearsal: MariaDB has no write forwarding; the reader steps ran a client-side emulation on real ' +
  'GTID replication (writes on a second connection to the writer; SESSION waits for the session’s last ' +
  'write GTID on the replica, GLOBAL for the writer’s current GTID). It shows the method and the cost of ' +
  'waiting for replication on this machine, not Aurora’s numbers.';

/** The study's findings, each against this run's answer to it (forwarding-study.ts). */
/** GLOBAL against EVENTUAL for the study table: average, tail and spread, and whether EVENTUAL started behind. */
function globalInputs(f: ForwardingFindings, global: ConsistencyLevel) {
  const ev = f.consistency.find((c) => c.level.toUpperCase() === 'EVENTUAL');
  const spread = global.spread !== null && ev?.spread != null ? { global: global.spread, eventual: ev.spread } : null;
  const behind = ev?.lagAtStartMs != null && ev.lagAtStartMs > DRAINED_LAG_MS ? ev.lagAtStartMs / 1000 : null;
  return {
    globalLagMaxS: global.lagDuringMs !== null ? global.lagDuringMs.max / 1000 : null,
    drainedS: DRAINED_LAG_MS / 1000,
    tps: global.tpsCost,
    avg: global.avgCost,
    tail: global.tailCost,
    percentile: f.latencyPercentile,
    spread,
    eventualBehindS: behind,
  };
}

/**
 * The study against this run's grid: at 32 threads the reader ahead above 70:30 (the first share tried above it
 * is the threshold it predicts), at 64 and 128 threads never clearly ahead (no win at any share).
 */
function studyShareVerdict(shares: readonly ReadShareVerdict[]): string {
  const oneRun = !shares.every((v) => v.runToRun);
  const parts = shares.map((v) => {
    if (v.threads <= 32) {
      // "超过 7:3": the shares past the 70:30 column (≈70:30 itself is the study's 70:30, point_selects 10).
      const predicted = v.tried.filter((s) => Math.round(s * 10) > 7).sort((a, b) => a - b)[0];
      if (v.wins.length === 0) return `${v.threads} threads not resolved`;
      if (v.winsFrom !== null && v.winsFrom === predicted) return `${v.threads} threads agrees`;
      // Wins only above 70:30 but not at every share there: the direction the study saw, not its threshold.
      return v.wins.every((s) => Math.round(s * 10) > 7)
        ? `${v.threads} threads partly agrees (higher at ${labels(v.wins)} only)`
        : `${v.threads} threads contradicts`;
    }
    return v.wins.length === 0
      ? `${v.threads} threads agrees`
      : `${v.threads} threads contradicts (higher at ${labels(v.wins)})`;
  });
  return parts.join('; ') + (oneRun ? ' in this run (1 repeat)' : '');
}

/**
 * The study's trend, "写比例越高，写节点的整体效率更高" (the higher the write share, the better the writer): its
 * clearest test is the highest write share tried; no reader below the writer there is the trend not seen.
 */
function trendText(shares: readonly ReadShareVerdict[]): string {
  const lowest = shares.map((v) => ({ threads: v.threads, r: v.ratios[0] })).filter((x) => x.r !== undefined);
  if (lowest.length === 0 || lowest.some((x) => x.r!.ratio.direction === 'lower' || x.r!.ratio.estimate === null))
    return '';
  const label = readShareLabel(lowest[0]!.r!.share);
  if (!lowest.every((x) => readShareLabel(x.r!.share) === label)) return '';
  return (
    `; at ${label}, the highest write share, the reader was not below the writer ` +
    `(${lowest.map((x) => `${pct(x.r!.ratio.estimate, 0)} at ${x.threads}`).join(', ')} threads): the study's ` +
    `trend, the writer further ahead the higher the write share, not seen`
  );
}

/** The rw pair whose writer step deadlocked most, for the study table's note on the split transaction. */
function splitDeadlocksOf(f: ForwardingFindings): { threads: number; writer: number; reader: number } | null {
  if (!f.localEmulation) return null;
  const rw = f.pairs
    .filter((p) => p.readShare === null && !p.control && p.test === 'oltp_read_write')
    .filter((p) => p.writerSide.deadlocks !== null && p.readerSide.deadlocks !== null)
    .sort((a, b) => b.writerSide.deadlocks! - a.writerSide.deadlocks!)[0];
  return rw === undefined
    ? null
    : { threads: rw.threads, writer: rw.writerSide.deadlocks!, reader: rw.readerSide.deadlocks! };
}

function studyTableOf(f: ForwardingFindings): TableBlock {
  const global = f.consistency.find((c) => c.level.toUpperCase() === 'GLOBAL');
  const words = (r: RatioFinding, higherIsBetter: boolean): string => verdict(r, higherIsBetter);
  return studyTable(
    {
      local: f.localEmulation,
      rw: f.pairs
        .filter((p) => p.readShare === null && !p.control && p.test === 'oltp_read_write')
        .map((p) => ({ ...p, server: serverRatio(p) })),
      controls: f.pairs
        .filter((p) => p.control)
        .map((p) => ({
          ...p,
          server: serverRatio(p),
          latency:
            p.writerLatency.value !== null && p.readerLatency.value !== null
              ? {
                  writer: rangeText({ ...p.writerLatency, interval: null }),
                  reader: rangeText({ ...p.readerLatency, interval: null }),
                }
              : null,
        })),
      percentile: f.latencyPercentile,
      splitDeadlocks: splitDeadlocksOf(f),
      shares:
        f.readShares.length > 0
          ? (noThreshold(f.readShares) ? 'no threshold resolved; ' : '') +
            `the reader was higher (interval above 100%) ${sharesInRun(f.readShares)}` +
            scatteredText(f.readShares, ': scattered, no threshold') +
            trendText(f.readShares)
          : null,
      sharesState:
        f.readShares.length === 0
          ? null
          : f.readShares.some(isScattered)
            ? 'scattered'
            : f.readShares.some((v) => v.winsFrom !== null || v.consistentFrom !== null)
              ? 'threshold'
              : 'within-noise',
      sharesVerdict: f.readShares.length > 0 ? studyShareVerdict(f.readShares) : null,
      scaleOut: f.scaleOut.map((s) => ({
        vsWriter: s.ratio,
        vsOne: s.vsSingle,
        readShare: s.readShare,
        share: s.readShare !== null ? readShareLabel(s.readShare) : null,
      })),
      stale: f.consistency.flatMap((c) =>
        c.staleReads !== null ? [{ level: c.level, text: staleText(c.staleReads)!, ...c.staleReads }] : [],
      ),
      global: global !== undefined ? globalInputs(f, global) : null,
    },
    words,
  );
}

const ANSWER_CHARTS = new Set(['fwd-threads', 'fwd-ratio']);

export function forwardingSection(f: ForwardingFindings): ReportSection {
  // The scale-out line goes with its table in the evidence: the Answer keeps at most five sentences.
  const { answer: lines, scaleOut: scaleOutLine } = forwardingSentences(f);
  const base = {
    id: 'forwarding' as const,
    title: 'Write forwarding',
    question: 'When does sending reads and writes to a reader beat sending them to the writer?',
  };
  if (f.noReaderSteps) return { ...base, findings: lines, tables: [], charts: [] };
  const pctName = `p${f.latencyPercentile} ms`;
  const anyWithinRun = [
    ...f.pairs.map((p) => p.ratio),
    ...f.consistency.flatMap((c) => [c.tpsCost, c.tailCost].filter((r): r is RatioFinding => r !== null)),
  ].some((r) => r.interval?.covers === 'within-run');
  const withinNote = anyWithinRun ? [WITHIN_RUN_WORDS] : [];
  const tables: TableBlock[] = [];
  if (f.pairs.length > 0)
    tables.push({
      title: `Writer vs reader${readerWrites(f)}`,
      head: [
        'workload',
        'reads:writes',
        'threads',
        'writer TPS',
        'reader TPS',
        'reader/writer',
        `writer ${pctName}`,
        `reader ${pctName}`,
      ],
      rows: f.pairs.map((p) => [
        pairName(p),
        p.mix,
        String(p.threads),
        rangeText(p.writerTps),
        rangeText(p.readerTps),
        cell(p.ratio, true),
        rangeText(p.writerLatency),
        rangeText(p.readerLatency),
      ]),
      numeric: [2, 3, 4, 6, 7],
      notes: withinNote,
    });
  if (f.scaleOut.length > 0)
    tables.push(
      {
        title: 'Scale-out: readers summed vs the writer at the same total threads',
        head: ['workload', 'readers x threads', 'summed TPS', 'writer TPS', 'readers/writer'],
        rows: f.scaleOut.map((s) => [
          s.workload,
          `${s.readers} x ${s.threadsEach}`,
          rangeText(s.summed),
          s.writer ? rangeText(s.writer) : 'no writer step',
          s.ratio ? cell(s.ratio, true, 0) : '-',
        ]),
        numeric: [2, 3, 4],
      },
      // A table of its own: beside the writer's columns it is wider than the page.
      {
        title: 'Scale-out: readers summed vs one reader at the same total threads',
        head: ['workload', 'readers x threads', '1 reader TPS', 'readers/1 reader'],
        rows: f.scaleOut.map((s) => [
          s.workload,
          `${s.readers} x ${s.threadsEach}`,
          s.single ? rangeText(s.single) : 'no reader step',
          s.vsSingle ? cell(s.vsSingle, true, 0) : '-',
        ]),
        numeric: [2, 3],
        notes: ['1 reader: the same statement mix on one reader at the readers’ total threads (the ps*-reader step).'],
      },
    );
  if (f.timeline.length > 0) tables.push(timelineTable(f.timeline, f.localEmulation));
  const answerTables: TableBlock[] = [studyTableOf(f)];
  // The author's table: writer vs reader at 32/64/128 threads for the stock read-write and write-only mixes.
  const stock = f.pairs.filter((p) => p.readShare === null);
  const withControl = stock.some((p) => p.control);
  const serverCounted = stock.some((p) => serverRatio(p) !== null);
  if (stock.length > 0)
    answerTables.push({
      title: `Writer vs reader${readerWrites(f)}, TPS by threads`,
      head: [
        'workload',
        'threads',
        'writer TPS',
        'reader TPS',
        'reader/writer',
        ...(serverCounted ? ["writer's own commits/s, reader/writer (reader step / writer step)"] : []),
      ],
      rows: stock.map((p) => [
        pairName(p),
        String(p.threads),
        rangeText(p.writerTps),
        rangeText(p.readerTps),
        cell(p.ratio, true, 0),
        // The ratio with the two counts behind it, so the column can be checked like the TPS beside it.
        ...(serverCounted
          ? [
              serverRatio(p) !== null
                ? `${pct(serverRatio(p), 0)} (${num(p.readerSide.commits, 0)} / ${num(p.writerSide.commits, 0)})`
                : '-',
            ]
          : []),
      ]),
      numeric: serverCounted ? [1, 2, 3, 4, 5] : [1, 2, 3, 4],
      notes: [
        ...(serverCounted ? [SERVER_RATIO_WORDS] : []),
        ...(withControl
          ? [
              '(control): write-only; locally both of its steps send every statement to the writer, so its ' +
                'ratio shows the noise and the order the steps ran in (Run order table).',
            ]
          : []),
        ...withinNote,
      ],
    });
  const shares = uniqueInOrder(f.pairs.filter((p) => p.readShare !== null).map((p) => p.readShare!)).sort(
    (a, b) => a - b,
  );
  if (shares.length > 0) {
    const threadsList = uniqueInOrder(f.pairs.filter((p) => p.readShare !== null).map((p) => p.threads)).sort(
      (a, b) => a - b,
    );
    answerTables.push({
      title: `Reader/writer TPS${readerWrites(f)} by threads and read share (reads:writes)`,
      head: ['threads', ...shares.map(readShareLabel)],
      rows: threadsList.map((t) => [
        String(t),
        ...shares.map((sh) => {
          const p = f.pairs.find((x) => x.threads === t && x.readShare === sh);
          return p ? compact(p.ratio, true) : '-';
        }),
      ]),
      numeric: shares.map((_, i) => i + 1),
      notes: [
        'Each cell: reader TPS over writer TPS at the same threads and statement mix, in % with its 95% interval.',
        ...withinNote,
      ],
    });
  }
  const withP50 = f.consistency.length > 0 && f.consistency.every((c) => c.p50Ms !== null);
  if (f.consistency.length > 0)
    answerTables.push({
      title: 'Read consistency: the latency cost of each level and the stale reads it prevents',
      head: [
        'level',
        'threads',
        'TPS',
        'TPS vs EVENTUAL',
        'avg ms',
        'avg ms vs EVENTUAL',
        ...(withP50 ? ['p50 ms (vs EVENTUAL)'] : []),
        pctName,
        `${pctName} vs EVENTUAL`,
        'p99/p50',
        'reader lag at start s',
        'lag during s (mean/max)',
        'stale reads',
      ],
      rows: f.consistency.map((c) => [
        c.level,
        String(c.threads),
        rangeText(c.tps),
        c.tpsCost ? cell(c.tpsCost, true, 0) : '-',
        rangeText(c.avgMs),
        c.avgCost ? cell(c.avgCost, false, 0) : '-',
        ...(withP50 ? [`${fixed(c.p50Ms, 2)}${c.p50Cost !== null ? ` (${pct(c.p50Cost, 0)})` : ''}`] : []),
        rangeText(c.tailMs),
        c.tailCost ? cell(c.tailCost, false, 0) : '-',
        c.spread !== null ? `${fixed(c.spread, 1)}×` : 'not measured',
        c.lagAtStartMs !== null ? fixed(c.lagAtStartMs / 1000, 2) : 'not measured',
        c.lagDuringMs !== null
          ? `${fixed(c.lagDuringMs.mean / 1000, 2)} / ${fixed(c.lagDuringMs.max / 1000, 2)}`
          : 'not measured',
        staleText(c.staleReads) ?? 'not measured',
      ]),
      numeric: withP50 ? [1, 2, 4, 5, 6, 7, 9, 10, 11] : [1, 2, 4, 5, 6, 8, 9, 10],
      notes: [
        ...(withP50
          ? [
              'p50: the median of the step’s latency histogram (as in the Latency percentiles table); ' +
                'one run gives it no interval.',
            ]
          : []),
        'p99/p50: the step’s 99th percentile over its median (means over the repeats): how widely its times vary.',
        'Stale reads: each transaction writes a marker row and reads it back in the same session after commit ' +
          '(rw_consistency.lua); a read that does not see the write is stale.',
        'Reader lag at start: the first replica-lag datapoint from the step’s start on (the most over repeats and ' +
          'readers); a replica still applying the previous step’s writes makes the level look slower or staler ' +
          'than it is.',
        ...(f.consistency.some((c) => c.avgFromTps)
          ? [
              'avg ms: with N threads and no pause, each thread has one transaction in flight, so the average ' +
                'is N / TPS (Little’s law) and its interval is TPS’s, inverted; its ratio to EVENTUAL is the ' +
                'TPS ratio’s inverse, with the same verdict.',
            ]
          : []),
        ...(f.consistency.every((c) => c.staleReads === null)
          ? ["This run's rows carry no read-after-write counts, so stale reads are not measured."]
          : []),
      ],
    });
  const charts: ChartBlock[] = [];
  const bar = (e: Estimated, x: number): (readonly [number, number, number])[] =>
    e.interval !== null && e.value !== null ? [[x, Math.max(0, e.interval.low), e.interval.high] as const] : [];
  if (stock.length > 0) {
    // The control's steps are in the table: its TPS (every statement a write) would set the axis.
    const charted = stock.filter((p) => !p.control);
    const series: XYSeries[] = uniqueInOrder(charted.map((p) => p.workload)).flatMap((w) => {
      const of = charted.filter((p) => p.workload === w).sort((a, b) => a.threads - b.threads);
      return [
        {
          name: `${w} writer`,
          points: of.map((p) => [p.threads, p.writerTps.value] as const),
          intervals: of.flatMap((p) => bar(p.writerTps, p.threads)),
        },
        {
          name: `${w} reader`,
          points: of.map((p) => [p.threads, p.readerTps.value] as const),
          intervals: of.flatMap((p) => bar(p.readerTps, p.threads)),
        },
      ];
    });
    charts.push(
      lineChart('fwd-threads', `Writer vs reader${readerWrites(f)}: TPS by threads`, 'threads', 'TPS', series, {
        logX: true,
      }),
    );
  }
  if (shares.length > 0) {
    const series: XYSeries[] = f.readShares.map((v) => {
      const of = f.pairs
        .filter((p) => p.threads === v.threads && p.readShare !== null && p.ratio.estimate !== null)
        .sort((a, b) => a.readShare! - b.readShare!);
      return {
        name: `${v.threads} threads`,
        points: of.map((p) => [Math.round(p.readShare! * 100), p.ratio.estimate! * 100] as const),
        intervals: of
          .filter((p) => p.ratio.interval !== null)
          .map(
            (p) => [Math.round(p.readShare! * 100), p.ratio.interval!.low * 100, p.ratio.interval!.high * 100] as const,
          ),
      };
    });
    charts.push(
      lineChart(
        'fwd-ratio',
        'Reader/writer TPS by read share (100% = equal)',
        'reads, % of statements',
        'reader TPS / writer TPS, %',
        series,
        // A ratio's interval is symmetric on the log scale (context.ts ratioOf): so is the axis.
        { ratioY: true, hLines: [{ value: 100, label: 'reader = writer' }] },
      ),
    );
  }
  if (f.consistency.length > 0) {
    const rows: ForestRow[] = f.consistency.flatMap((c) =>
      [
        { label: `${c.level} avg`, e: c.avgMs },
        { label: `${c.level} p${f.latencyPercentile}`, e: c.tailMs },
      ]
        .filter((x) => x.e.value !== null)
        .map((x) => ({
          label: x.label,
          estimate: x.e.value!,
          low: x.e.interval ? Math.max(0, x.e.interval.low) : null,
          high: x.e.interval?.high ?? null,
        })),
    );
    const title = rows.every((r) => r.low !== null)
      ? 'Latency by consistency level, with 95% intervals'
      : 'Latency by consistency level (95% intervals where the table shows one)';
    charts.push(
      forestChart('fwd-consistency', title, rows, {
        unit: '',
        axisName: 'ms',
      }),
    );
  }
  return {
    ...base,
    findings: scaleOutLine,
    tables,
    // The rw and the read-share charts go with the Answer's tables (shown open); the rest with the evidence.
    charts: charts.filter((c) => !ANSWER_CHARTS.has(c.id)),
    answer: { lines, tables: answerTables, charts: charts.filter((c) => ANSWER_CHARTS.has(c.id)) },
  };
}
