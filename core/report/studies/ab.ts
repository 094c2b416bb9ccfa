/**
 * S1, variants compared (A/B): per AZ and step, each variant's TPS, QPS and tail latency with their
 * intervals; each later variant over the AZ's first (the baseline) with a ratio interval (Welch over
 * the repeats, or a duet's time-paired rounds); the same class across AZs (the spread S1's author
 * found up to 10%); and how many repeats a side a difference of the size seen would need.
 */
import { ratioChart, type ForestRow } from '../charts';
import {
  analyzeConfounders,
  analyzePairOrder,
  analyzeRepeatOrder,
  confoundersSentence,
  confoundersTable,
  orderBiasText,
  pairOrderCaveat,
  ROTATION_HEAD,
  rotationOrderText,
  pairOrderCell,
  repeatOrderTable,
  type Confounders,
  type PairOrder,
  type RepeatOrder,
} from './ab-confounders';
import {
  analyzeLocalCaveats,
  caveatsTable,
  parameterSentence,
  scopeSentence,
  type LocalCaveats,
} from '../local-caveats';
import { ratioVerdict, repeatsToResolve, studentTQuantile, type Sample } from '../stats';
import { analyzePrice } from './price';
import type { ReportSection, TableBlock } from '../model';
import { pairByTime, pairedRatioCi, roundsToResolve, type PairedRatio } from '../duet-pairs';
import { stepKey } from '../load';
import type { StepResult } from '../../lake/results';
import { pct } from '../../format';
import {
  rangeText,
  ratioFinding,
  ratioText,
  verdictText,
  whole,
  WITHIN_RUN_NOTE,
  type Estimated,
  type RatioFinding,
  ratioCell,
} from '../findings';
import {
  clientBoundFinding,
  clientBoundMark,
  comparableKey,
  estimate,
  inSweep,
  isNetworkStudy,
  noiseText,
  ratioOf,
  runOrder,
  sourceLabel,
  stepLabel,
  uniqueInOrder,
  type Context,
  type Estimate,
  type StepGroup,
} from '../context';

interface AbRow {
  readonly step: string;
  readonly variant: string;
  readonly instanceClass: string;
  readonly tps: Estimated;
  readonly qps: Estimated;
  readonly latency: Estimated;
  /** Run-to-run and within-run coefficients of variation of TPS, in words. */
  readonly noise: string;
  readonly from: string;
  readonly clientBound: string;
  /** "r6g-a's repeats 8,982 and 21,517 QPS": a repeat far from its siblings (farRepeats), else null. */
  readonly far: string | null;
  /** The repeats' QPS CV and count (run to run); null without two repeats. */
  readonly qpsRuns: { readonly cv: number; readonly n: number } | null;
}

interface AbRatio {
  readonly step: string;
  readonly variant: string;
  readonly baseline: string;
  readonly tps: RatioFinding;
  readonly qps: RatioFinding;
  readonly latency: RatioFinding;
  /** Repeats a side (or duet rounds) a difference of this size needs; null when resolved or unknowable. */
  readonly toResolve: string | null;
  /** Repeats on the smaller side (or duet rounds) behind the interval; null without run-to-run samples. */
  readonly runs: number | null;
  readonly from: string;
}

interface AbAz {
  readonly az: string | null;
  readonly baseline: string;
  readonly rows: readonly AbRow[];
  readonly ratios: readonly AbRatio[];
}

interface AzSpread {
  readonly instanceClass: string;
  readonly step: string;
  /** e.g. "b/a" */
  readonly azs: string;
  readonly qps: RatioFinding;
}

export interface AbFindings {
  readonly kind: 'ab';
  readonly order: string;
  readonly orderSentence: string;
  readonly latencyPercentile: number;
  readonly azs: readonly AbAz[];
  readonly azSpread: readonly AzSpread[];
  readonly clientBound: string | null;
  readonly confounders: Confounders | null;
  readonly caveats: LocalCaveats;
  readonly repeatOrder: RepeatOrder;
  /** Per compared pair, whether its cells ran in the same order in every round. */
  readonly pairOrder: readonly PairOrder[];
  /** The price section weighs these ratios against their price ratio (and its chart is the Answer's). */
  readonly priced: boolean;
  /** The experiment runs a round's cells at once but this run ran them one at a time (--scale small). */
  readonly ranOneAtATime: boolean;
  /** The experiment's engine where its description says it differs from the original study's; else null. */
  readonly engineChange: string | null;
  /** The run-to-run QPS noise pooled over the compared steps, and what it lets a planned run resolve; or null. */
  readonly pooled: PooledNoise | null;
  /** The same at the design's fewest rounds (repeats.min, when it is below the most); else null. */
  readonly pooledFewest: PooledNoise | null;
}

interface PooledNoise {
  /** sqrt of the (n - 1)-weighted mean of each step's squared run-to-run CV of QPS. */
  readonly cv: number;
  readonly steps: number;
  /** Repeats a side the figure is for: the experiment's most rounds, at least 3. */
  readonly repeats: number;
  /** The smallest ratio away from 100% that `repeats` a side find 80% of the time at 95% confidence. */
  readonly resolves: number;
}

/**
 * One planning figure from the noise of every compared step at once (a few repeats a step make each
 * step's own CV, and so its repeats-to-resolve, too rough to plan by): the pooled CV, and the
 * difference n repeats a side resolve at it, on the log scale as repeatsToResolve:
 * (t(0.975, 2n - 2) + t(0.8, 2n - 2)) * cv * sqrt(2 / n).
 * @internal exported for its tests (a test seam)
 */
export function pooledNoise(samples: readonly Sample[], repeats: number): PooledNoise | null {
  const used = samples.filter((s) => s.n >= 2 && s.mean > 0 && Number.isFinite(s.sd));
  const df = used.reduce((a, s) => a + s.n - 1, 0);
  if (used.length === 0 || df === 0) return null;
  const cv = Math.sqrt(used.reduce((a, s) => a + (s.n - 1) * (s.sd / s.mean) ** 2, 0) / df);
  const n = Math.max(2, repeats);
  return { cv, steps: used.length, repeats: n, resolves: resolvesAt(cv, n) };
}

/** The gap n repeats a side resolve at a CV (80% of the time at 95% confidence), on the log scale. */
function resolvesAt(cv: number, n: number): number {
  const t = studentTQuantile(0.975, 2 * n - 2) + studentTQuantile(0.8, 2 * n - 2);
  return Math.exp(t * cv * Math.sqrt(2 / n)) - 1;
}

/**
 * The fewest repeats a side that resolve `gap` at a CV, or null past 100 (a count no one would run).
 * @internal exported for its tests (a test seam)
 */
export function repeatsForGap(cv: number, gap: number): number | null {
  for (let n = 2; n <= 100; n++) if (resolvesAt(cv, n) <= gap) return n;
  return null;
}

/**
 * The design's rounds where --scale small cut them (its plan note "repeats: ... 2-3 rounds -> 2-2 rounds"):
 * the Answer plans the AWS run, so it states the design's rounds, as the banner does.
 */
function designRepeats(notes: string): number | { min: number; max: number } | null {
  const m = /scaled for a local rehearsal: (\d+)(?:-(\d+))? (?:rounds|repeats) ->/.exec(notes);
  if (m === null) return null;
  return m[2] !== undefined ? { min: Number(m[1]), max: Number(m[2]) } : Number(m[1]);
}

/** What the design's most rounds cannot resolve, plainly: any smaller gap, and what a 5% one would take. */
function smallerGapText(p: PooledNoise): string {
  const five = repeatsForGap(p.cv, 0.05);
  return (
    `a smaller gap, such as 5%, it cannot tell from none` +
    (five !== null ? ` (that takes about ${five} repeats a side at this noise).` : '.')
  );
}

/** The pooled noise at the design's most rounds and, where it stops earlier, at its fewest. */
function designNoise(samples: readonly Sample[], repeats: unknown, notes: string) {
  const r = (designRepeats(notes) ?? repeats) as number | { min?: number; max?: number } | undefined;
  const most = typeof r === 'number' ? r : (r?.max ?? 3);
  const fewest = typeof r === 'number' ? r : (r?.min ?? most);
  return {
    pooled: pooledNoise(samples, most),
    pooledFewest: fewest < most ? pooledNoise(samples, fewest) : null,
  };
}

/**
 * "Aurora MySQL 3.10.4 (MySQL 8.0.42 compatible), not the study's Aurora MySQL 2.10.0 (MySQL 5.7
 * compatible)": from the experiment's description ("Deviation from the original engine: the study
 * ran X ... Engine: Y"), so the Answer says what the Appendix alone said.
 */
function engineChange(description: string): string | null {
  const was = /Deviation from the original engine: the study ran ([^,;]+?\))/.exec(description)?.[1];
  const now = /\bEngine: ([^,;]+?\))/.exec(description)?.[1];
  return was !== undefined && now !== undefined ? `${now}, not the study's ${was}` : null;
}

/** Whether steps of two different cells ran at the same time, from the lake's step start and end times. */
function cellsOverlapped(steps: readonly StepResult[]): boolean {
  const spans = steps
    .map((s) => ({ cell: s.cell_id, start: Date.parse(s.started_at), end: Date.parse(s.ended_at) }))
    .filter((x) => Number.isFinite(x.start) && Number.isFinite(x.end))
    .sort((a, b) => a.start - b.start);
  return spans.some((a, i) => spans.slice(i + 1).some((b) => b.cell !== a.cell && b.start < a.end));
}

/** How this run's cells really ran: at once or one after another, as its step times show. */
function howCellsRan(ctx: Context): string {
  const lanes = ctx.data.plan?.maxConcurrency ?? ctx.data.spec?.maxConcurrency ?? 1;
  if (cellsOverlapped(ctx.data.steps))
    return (
      `The variants of a round ran at the same time in this run (maxConcurrency ${lanes}: steps of different ` +
      `cells overlapped in time), started in a rotating order`
    );
  // --scale small sets maxConcurrency 1 (core/experiment/scale.ts): the experiment's own setting does not apply.
  const why = /-small$/.test(ctx.data.run.spec_name)
    ? `; --scale small runs one cell at a time (maxConcurrency 1), whatever the experiment's own setting`
    : '';
  return (
    `Each round ran the variants one after another in this run (no two cells' steps overlapped in time${why}), ` +
    `rotating who goes first`
  );
}

/** What the order means for the ratios, in a sentence. */
function orderSentence(ctx: Context): string {
  const { order, seed } = runOrder(ctx);
  switch (order) {
    case 'duet':
      return (
        'Order: duet. The variants of each round ran at the same time, every step started on all of them ' +
        'together, so the ratios come from time-paired intervals (per round: the variant over the baseline in ' +
        'the same seconds) and noise both saw cancels out (duet benchmarking: Bulej et al., ICPE 2020).'
      );
    case 'randomized':
      return (
        `Order: randomized (seed ${seed ?? 'not recorded'}). Each round ran the variants one after ` +
        `another in a shuffled order (randomized multiple interleaved trials: Abedi and Brecht, ICPE 2017); the ` +
        `ratios compare the variants' repeats (Welch).`
      );
    case 'sequential':
      return (
        'Order: sequential. All repeats of a variant ran before the next variant: drift over the run ' +
        "falls on one variant; the ratios compare the variants' repeats (Welch)."
      );
    default:
      return `Order: interleaved. ${howCellsRan(ctx)}; the ratios compare the variants' repeats (Welch).`;
  }
}

/** The report interval of a step (seconds), from the plan; 1 when the plan does not say. */
function reportIntervalOf(ctx: Context, cellId: string, stepId: string): number {
  return (
    ctx.data.plan?.cells.find((c) => c.cellId === cellId)?.steps.find((s) => s.stepId === stepId)?.reportIntervalS ?? 1
  );
}

/** A duet's ratio of `g` over `base` from their time-paired intervals, round by round (core/report/duet-pairs.ts). */
function duetRatio(ctx: Context, g: StepGroup, base: StepGroup, field: 'tps' | 'qps' | 'lat_pct_ms'): PairedRatio {
  const series = (r: StepResult, stepId: string) => ({
    startedAt: r.started_at,
    points: (ctx.data.intervals.get(stepKey(r.cell_id, stepId)) ?? []).map((i) => ({ t: i.t, value: i[field] })),
  });
  const rounds = g.ok.flatMap((row) => {
    const other = base.ok.find((b) => b.repeat === row.repeat);
    return other === undefined
      ? []
      : [pairByTime(series(row, g.stepId), series(other, base.stepId), reportIntervalOf(ctx, row.cell_id, g.stepId))];
  });
  return pairedRatioCi(rounds);
}

/** A duet ratio as a finding: rounds see run-to-run noise; one round's batches only within-run noise. */
const pairedFinding = (p: PairedRatio): RatioFinding =>
  ratioFinding(p, p.source === 'rounds' ? 'run-to-run' : p.source === 'interval batches' ? 'within-run' : 'none');

/**
 * "18 repeats" / null: repeats per side a ratio needs to be
 * resolved (stats.repeatsToResolve), from run-to-run samples only.
 */
function powerText(a: Estimate, b: Estimate): string {
  if (a.source !== 'repeats' || b.source !== 'repeats' || a.sample === null || b.sample === null)
    return 'needs 2+ repeats to tell';
  const n = repeatsToResolve(a.sample, b.sample);
  if (n === null) return a.value === b.value ? 'no difference' : '> 1,000 repeats';
  return `${n} repeats`;
}

/** "6 rounds": rounds a duet needs to resolve its ratio (duet-pairs.roundsToResolve). */
function roundsText(r: PairedRatio): string {
  if (r.rounds < 2) return 'needs 2+ rounds to tell';
  const n = roundsToResolve(r.roundLogRatios);
  return n === null ? (r.roundLogRatios.every((x) => x === 0) ? 'no difference' : '> 1,000 rounds') : `${n} rounds`;
}

/** A repeat more than this factor above or below the median of its siblings is flagged where its ratio is quoted. */
const FAR_FACTOR = 1.5;

/** The rule behind the mark, said once under the Answer's ratio table. */
const FAR_NOTE =
  `†: a repeat more than ${FAR_FACTOR}× above or below the median of the same variant's other repeats of the ` +
  'step (with 2 repeats: the two more than that apart). One run then drives the ratio and the repeats to resolve ' +
  'it: read them with the per-repeat table.';

/**
 * "r6g-a's repeats 8,982 and 21,517 QPS" when a repeat of the step lies past FAR_FACTOR from the median
 * of the others; null otherwise. Two repeats cannot say which one is off, so both are named.
 */
function farRepeats(variant: string, g: StepGroup): string | null {
  const runs = g.ok
    .flatMap((r) => (r.qps !== null && r.qps > 0 ? [{ repeat: r.repeat, qps: r.qps }] : []))
    .sort((a, b) => a.repeat - b.repeat);
  if (runs.length < 2) return null;
  const median = (xs: readonly number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const far = runs.some((r) => {
    const others = median(runs.filter((x) => x !== r).map((x) => x.qps));
    return others > 0 && (r.qps / others > FAR_FACTOR || others / r.qps > FAR_FACTOR);
  });
  if (!far) return null;
  const values = runs.map((r) => whole(r.qps));
  const list = values.length === 2 ? values.join(' and ') : `${values.slice(0, -1).join(', ')} and ${values.at(-1)}`;
  return `${variant}'s repeats ${list} QPS`;
}

/** ", r6g-a's repeats 8,982 and 21,517 QPS far apart †" for a ratio either of whose sides has one. */
function farText(az: AbAz, r: AbRatio): string {
  const far = az.rows
    .filter((x) => x.step === r.step && (x.variant === r.variant || x.variant === r.baseline))
    .flatMap((x) => (x.far !== null ? [x.far] : []));
  return far.length > 0 ? `, ${far.join(' and ')} far apart †` : '';
}

export function analyzeAb(ctx: Context): AbFindings | null {
  if (ctx.variants.length < 2 || isNetworkStudy(ctx)) return null;
  const duet = runOrder(ctx).order === 'duet';
  const azs: AbAz[] = [];
  for (const az of uniqueInOrder(ctx.variants.map((v) => v.az))) {
    const variants = ctx.variants.filter((v) => v.az === az);
    if (variants.length < 2) continue;
    const baseline = variants[0]!;
    const groups = ctx.groups.filter((g) => variants.some((v) => v.name === g.variant) && !inSweep(ctx, g));
    const rows: AbRow[] = [];
    const ratios: AbRatio[] = [];
    for (const key of uniqueInOrder(groups.map(comparableKey))) {
      const byVariant = new Map(groups.filter((g) => comparableKey(g) === key).map((g) => [g.variant, g]));
      const base = byVariant.get(baseline.name);
      for (const v of variants) {
        const g = byVariant.get(v.name);
        if (g === undefined) continue;
        const e = { tps: estimate(ctx, g, 'tps'), qps: estimate(ctx, g, 'qps'), lat: estimate(ctx, g, 'lat_pct_ms') };
        rows.push({
          step: stepLabel(g),
          variant: v.name,
          instanceClass: v.instanceClass,
          tps: e.tps,
          qps: e.qps,
          latency: e.lat,
          noise: noiseText(ctx, g),
          from: sourceLabel(g, e.tps),
          clientBound: clientBoundMark(ctx, g),
          far: farRepeats(v.name, g),
          qpsRuns:
            e.qps.source === 'repeats' && e.qps.sample !== null && e.qps.sample.n >= 2 && e.qps.sample.mean > 0
              ? { cv: e.qps.sample.sd / e.qps.sample.mean, n: e.qps.sample.n }
              : null,
        });
        if (base === undefined || v.name === baseline.name) continue;
        const b = {
          tps: estimate(ctx, base, 'tps'),
          qps: estimate(ctx, base, 'qps'),
          lat: estimate(ctx, base, 'lat_pct_ms'),
        };
        if (duet) {
          const p = {
            tps: duetRatio(ctx, g, base, 'tps'),
            qps: duetRatio(ctx, g, base, 'qps'),
            lat: duetRatio(ctx, g, base, 'lat_pct_ms'),
          };
          const from =
            p.qps.source === 'none'
              ? p.qps.pairs === 0
                ? 'no time-paired intervals'
                : `time-paired: ${p.qps.pairs} intervals, too few for an interval`
              : `time-paired: ${p.qps.pairs} intervals, ${p.qps.rounds} round` +
                (p.qps.rounds === 1 ? ', interval batches' : 's');
          const resolved = ratioVerdict(p.qps) === 'higher' || ratioVerdict(p.qps) === 'lower';
          ratios.push({
            step: stepLabel(g),
            variant: v.name,
            baseline: baseline.name,
            tps: pairedFinding(p.tps),
            qps: pairedFinding(p.qps),
            latency: pairedFinding(p.lat),
            toResolve: resolved ? null : roundsText(p.qps),
            runs: p.qps.source === 'rounds' ? p.qps.rounds : null,
            from,
          });
        } else {
          const qps = ratioOf(e.qps, b.qps);
          const from =
            e.qps.source === 'repeats' && b.qps.source === 'repeats'
              ? `Welch: ${e.qps.sample?.n ?? 0} + ${b.qps.sample?.n ?? 0} repeats`
              : `Welch: ${e.qps.source === 'intervals' ? 'interval batches' : e.qps.source}`;
          const resolved = qps.direction === 'higher' || qps.direction === 'lower';
          ratios.push({
            step: stepLabel(g),
            variant: v.name,
            baseline: baseline.name,
            tps: ratioOf(e.tps, b.tps),
            qps,
            latency: ratioOf(e.lat, b.lat),
            toResolve: resolved && qps.interval?.covers === 'run-to-run' ? null : powerText(e.qps, b.qps),
            runs:
              e.qps.source === 'repeats' && b.qps.source === 'repeats'
                ? Math.min(e.qps.sample?.n ?? 0, b.qps.sample?.n ?? 0)
                : null,
            from,
          });
        }
      }
    }
    if (rows.length > 0) azs.push({ az, baseline: baseline.name, rows, ratios });
  }
  // The same class across AZs (S1: AZ A and AZ C disagreed by up to 10%).
  const azSpread: AzSpread[] = [];
  for (const cls of uniqueInOrder(ctx.variants.map((v) => v.instanceClass))) {
    const vs = ctx.variants.filter((v) => v.instanceClass === cls && v.az !== null);
    if (vs.length < 2) continue;
    const [first, ...rest] = vs;
    for (const other of rest) {
      for (const g of ctx.groups.filter((x) => x.variant === other.name && !inSweep(ctx, x))) {
        const base = ctx.groups.find((x) => x.variant === first!.name && comparableKey(x) === comparableKey(g));
        if (!base) continue;
        azSpread.push({
          instanceClass: cls,
          step: stepLabel(g),
          azs: `${other.az}/${first!.az}`,
          qps: ratioOf(estimate(ctx, g, 'qps'), estimate(ctx, base, 'qps')),
        });
      }
    }
  }
  if (azs.length === 0 && azSpread.length === 0) return null;
  const compared = ctx.groups.filter((g) => !inSweep(ctx, g));
  return {
    caveats: analyzeLocalCaveats(ctx),
    repeatOrder: analyzeRepeatOrder(
      ctx,
      compared,
      azs.flatMap((az) =>
        az.ratios.map((r) => ({ variant: r.variant, baseline: r.baseline, estimate: r.qps.estimate })),
      ),
    ),
    pairOrder: analyzePairOrder(
      ctx,
      uniqueInOrder(azs.flatMap((az) => az.ratios.map((r) => `${r.variant}\u0000${r.baseline}`))).map((k) => {
        const [variant, baseline] = k.split('\u0000') as [string, string];
        return { az: ctx.variants.find((v) => v.name === variant)?.az ?? null, variant, baseline };
      }),
    ),
    priced: (analyzePrice(ctx)?.ratios.length ?? 0) > 0,
    // --scale small stores maxConcurrency 1 (core/experiment/scale.ts), so the design's "at once" is read
    // from the experiment's text.
    engineChange: engineChange(ctx.data.spec?.description ?? ''),
    ...designNoise(
      ctx.groups
        .filter((g) => !inSweep(ctx, g) && azs.some((az) => az.rows.some((r) => r.step === stepLabel(g))))
        .map((g) => estimate(ctx, g, 'qps'))
        .filter((e) => e.source === 'repeats' && e.sample !== null)
        .map((e) => e.sample!),
      ctx.data.spec?.repeats,
      ctx.data.run.notes,
    ),
    ranOneAtATime:
      /-small$/.test(ctx.data.run.spec_name) &&
      /\bat once\b/.test(ctx.data.spec?.description ?? '') &&
      !cellsOverlapped(ctx.data.steps),
    kind: 'ab',
    order: runOrder(ctx).order,
    orderSentence: orderSentence(ctx),
    latencyPercentile: ctx.groups[0]?.latPct ?? 95,
    azs,
    azSpread,
    clientBound: clientBoundFinding(ctx, ctx.groups),
    confounders: analyzeConfounders(
      ctx,
      ctx.groups.filter((g) => !inSweep(ctx, g)),
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** What the width column's unit and its cap mean, said under each table that shows it. */
const WIDTH_NOTE =
  "QPS CI width: the 95% interval's high end minus its low end, in percentage points (pts) of the baseline; " +
  'from the unrounded ends, so a low end printed "<10%" still gives the width; "> N pts" where the high end lies ' +
  'past the printed range (>1,000%), so only that lower bound is known.';

/**
 * The interval's width in points; past the printed high end (">1,000%") only a bound of it.
 * @internal exported for its tests (a test seam)
 */
export const widthText = (r: RatioFinding): string => {
  if (r.interval === null) return '-';
  // Past the printed high end (>1,000%) the width is known only to exceed 1,000% minus the low end.
  if (r.interval.high > 10)
    return `> ${Math.floor((10 - Math.max(r.interval.low, 0)) * 100 + 1e-9).toLocaleString('en-US')} pts`;
  return `${((r.interval.high - r.interval.low) * 100).toFixed(1)} pts`;
};

/** Per AZ and step, the ratio with its verdict: the evidence's sentences. */
function abStepSentences(f: AbFindings): string[] {
  return f.azs.flatMap((az) =>
    az.ratios.map((r) => {
      const where = az.az !== null ? ` in AZ ${az.az}` : '';
      return (
        `${r.step}${where}: ${r.variant}/${r.baseline} QPS ${ratioText(r.qps)},` +
        ` ${verdictText(r.qps, true)}; p${f.latencyPercentile} ${ratioText(r.latency)},` +
        ` ${verdictText(r.latency, false)}${farText(az, r)}.`
      );
    }),
  );
}

/**
 * What the comparisons within the noise would need: "2 repeats cannot resolve this; about 22 would
 * (read-only t32), more than 1,000 (write-only t64)".
 */
function unresolvedText(open: readonly AbRatio[], duet: boolean, same: boolean, all: boolean): string {
  if (open.length === 0) return '';
  // One server twice has no true difference: a "size to resolve" would be its noise, not a plan.
  if (same) return all ? ', as expected of one server twice' : '';
  const unit = duet ? 'rounds' : 'repeats';
  const runs = Math.min(...open.map((r) => r.runs ?? 0));
  const needs = open.map((r) => {
    const n = /^(\d+) (repeats|rounds)$/.exec(r.toResolve ?? '')?.[1];
    const what =
      n !== undefined
        ? `about ${n}`
        : r.toResolve === '> 1,000 repeats' || r.toResolve === '> 1,000 rounds'
          ? 'more than 1,000'
          : null;
    return what === null ? null : `${what} ${duet ? '' : 'a side '}(${r.step})`;
  });
  const known = needs.filter((x): x is string => x !== null);
  return (
    `: ${runs} ${unit} cannot resolve ${open.length === 1 ? 'this' : 'these'}` +
    (known.length > 0 ? `; resolving ${open.length === 1 ? 'it' : 'them'} would take ${known.join(', ')}` : '')
  );
}

/** Locally the same server twice (A/A): no true difference for more repeats to resolve. */
function identical(f: AbFindings, variant: string, baseline: string): boolean {
  return f.caveats.local && f.caveats.sameServer.some((g) => g.includes(variant) && g.includes(baseline));
}

/**
 * The answer's opening sentences, in S1's shape: per AZ, each step's QPS of the variant and of the
 * baseline with their ratio, and how many of those ratios are beyond the run-to-run noise; then the
 * same class across AZs.
 */
function abSentences(f: AbFindings): string[] {
  const out: string[] = [];
  const p = `p${f.latencyPercentile}`;
  const listed = uniqueInOrder(f.azs.flatMap((az) => az.rows.map((r) => r.variant)));
  const rotation =
    f.order === 'interleaved'
      ? rotationOrderText(
          f.pairOrder,
          listed.length,
          f.pairOrder.every((o) => listed.indexOf(o.variant) === listed.indexOf(o.baseline) + 1),
        )
      : null;
  for (const az of f.azs) {
    for (const variant of uniqueInOrder(az.ratios.map((r) => r.variant))) {
      const ratios = az.ratios.filter((r) => r.variant === variant);
      const parts = ratios.map((r) => {
        const row = az.rows.find((x) => x.step === r.step && x.variant === r.variant);
        const base = az.rows.find((x) => x.step === r.step && x.variant === r.baseline);
        // An interval only where it resolves the difference: an unresolved one says what would resolve it instead.
        const resolved =
          r.qps.interval?.covers === 'run-to-run' && (r.qps.direction === 'higher' || r.qps.direction === 'lower');
        // The author's table beside each QPS pair: the two classes' latency at the study's percentile.
        const latency =
          row?.latency.value != null && base?.latency.value != null
            ? `, ${p} ${valueText(row.latency)} vs ${valueText(base.latency)} ms`
            : '';
        return (
          `${r.step} ${whole(row?.qps.value ?? null)} vs ${whole(base?.qps.value ?? null)} ` +
          `(${resolved ? ratioText(r.qps) : pct(r.qps.estimate, 1)}${latency}${farText(az, r)})`
        );
      });
      const judged = ratios.filter((r) => r.qps.interval?.covers === 'run-to-run');
      const beyond = judged.filter((r) => r.qps.direction === 'higher' || r.qps.direction === 'lower');
      const open = judged.filter((r) => !beyond.includes(r));
      const slower = judged.filter(
        (r) =>
          r.latency.interval?.covers === 'run-to-run' &&
          (r.latency.direction === 'higher' || r.latency.direction === 'lower'),
      );
      const verdict =
        judged.length === 0
          ? 'the run-to-run noise is not measured (one repeat)'
          : (beyond.length === 0
              ? `none beyond the run-to-run noise in QPS${slower.length === 0 ? ` or ${p}` : ''}`
              : `beyond the run-to-run noise: ` +
                beyond.map((r) => `${r.step} (${verdictText(r.qps, true)})`).join(', ') +
                (open.length > 0 ? '; the rest within it' : '')) +
            unresolvedText(open, f.order === 'duet', identical(f, variant, az.baseline), beyond.length === 0) +
            (identical(f, variant, az.baseline) && beyond.length > 0
              ? '; one server twice here, so what is beyond the noise is this machine (chance or the run order), ' +
                'not the class'
              : '');
      const latencyVerdict =
        slower.length > 0
          ? ` ${p} beyond the noise: ` +
            slower.map((r) => `${r.step} ${ratioText(r.latency)} (${verdictText(r.latency, false)})`).join(', ') +
            '.'
          : '';
      const order = f.pairOrder.find((o) => o.variant === variant && o.baseline === az.baseline);
      // An interleaved run's order is the rotation's, said once after the pairs (rotationOrderText).
      const caveat = order !== undefined && rotation === null ? pairOrderCaveat(order, f.order) : null;
      out.push(
        `${az.az !== null ? `AZ ${az.az}, ` : ''}${variant} vs ${az.baseline} (QPS, ${p}): ${parts.join(', ')}, ` +
          `${verdict}.${latencyVerdict}` +
          (caveat !== null ? ` ${caveat[0]!.toUpperCase()}${caveat.slice(1)}.` : ''),
      );
    }
  }
  // Its own line: it covers every AZ's pair, not the last AZ's (the Answer puts it with the other confounders).
  if (rotation !== null && out.length > 0) out.push(rotation);
  if (f.azSpread.length > 0) {
    const shown = f.azSpread.filter((s) => s.qps.estimate !== null);
    const beyond = f.azSpread.filter(
      (s) => s.qps.interval?.covers === 'run-to-run' && (s.qps.direction === 'higher' || s.qps.direction === 'lower'),
    );
    if (shown.length > 0) {
      // Both ends: an AZ can be ahead at one step and behind at another.
      const values = shown.map((s) => s.qps.estimate!);
      const [lo, hi] = [Math.min(...values), Math.max(...values)];
      const [near, far] = shown[0]!.azs.split('/') as [string, string];
      out.push(
        `The same class in AZ ${near} differs from AZ ${far} by ` +
          (shown.length === 1 ? signed(lo) : `${signed(lo)} to ${signed(hi)}`) +
          ` in QPS across the steps; ${beyond.length} of ${f.azSpread.length} such differences ` +
          (beyond.length === 1 ? 'is' : 'are') +
          ` beyond the run-to-run noise` +
          // Locally every server is on 127.0.0.1: an AZ label names a slot in the run's order, not a zone.
          (f.caveats.local
            ? ' (locally an AZ is only a label: every server ran on this machine, at another time)'
            : '') +
          '.',
      );
    }
  }
  const judged = f.azs.flatMap((az) => az.ratios).filter((r) => r.qps.interval?.covers === 'run-to-run');
  if (judged.length + f.azSpread.length > 1)
    out.push(
      'Each comparison at the 95% level calls identical servers different one time in twenty, so among this ' +
        'many a single "beyond the noise" is weak evidence unless it repeats in other steps or runs.',
    );
  return out;
}

/** An estimate without its interval, at the table's rounding: "29.20", "142". */
const valueText = (e: Estimated): string => rangeText({ value: e.value, interval: null });

/** A ratio as a signed change: 0.875 -> "-12.5%", 1.306 -> "+30.6%". */
function signed(ratio: number): string {
  const change = (ratio - 1) * 100;
  return `${change >= 0 ? '+' : '-'}${Math.abs(change).toFixed(1)}%`;
}

/** The instance classes of the compared variants (or of their baselines), e.g. "db.r6g.2xlarge". */
function classesOf(f: AbFindings, side: 'variant' | 'baseline'): string {
  const names = f.azs.flatMap((az) => az.ratios.map((r) => r[side]));
  const classes = f.azs.flatMap((az) => az.rows.filter((r) => names.includes(r.variant)).map((r) => r.instanceClass));
  return uniqueInOrder(classes).join(', ');
}

export function abSection(f: AbFindings): ReportSection {
  const pctName = `p${f.latencyPercentile} ms`;
  const tables: TableBlock[] = [];
  const anyWithinRun = f.azs.some((az) =>
    az.rows.some((r) => [r.tps, r.qps, r.latency].some((e) => e.interval?.covers === 'within-run')),
  );
  const mark = (e: Estimated): string => rangeText(e);
  // Both repeats' percentile in one histogram bucket: an interval of no width, explained once per table.
  const flat = (e: Estimated): boolean =>
    e.interval !== null &&
    rangeText({ value: e.interval.low, interval: null }) === rangeText({ value: e.interval.high, interval: null });
  const latencyCell = (e: Estimated): string => `${rangeText(e)}${flat(e) ? ' §' : ''}`;
  const flatNote = (rows: readonly AbRow[]): string[] =>
    rows.some((r) => flat(r.latency))
      ? [
          `§: the repeats' p${f.latencyPercentile} fell in the same latency bucket (sysbench's histogram buckets ` +
            `are about 1.8% apart), so the interval has no width: no difference at the histogram's resolution, ` +
            `not a noise-free figure.`,
        ]
      : [];
  // A few repeats that happened to agree: an interval far narrower than this machine's pooled noise gives.
  // Two decimals: at one, a CV near 0.05% reads 0.1% here and 0.0% in the TPS CV column.
  const lucky = (r: AbRow): boolean =>
    f.pooled !== null && r.qpsRuns !== null && r.qpsRuns.n <= 3 && r.qpsRuns.cv < f.pooled.cv / 4;
  const luckyNote = (rows: readonly AbRow[]): string[] => {
    const these = rows.filter(lucky);
    if (these.length === 0 || f.pooled === null) return [];
    const n = Math.max(...these.map((r) => r.qpsRuns!.n));
    return [
      `‡: ${n} repeats that happened to agree (QPS run CV ` +
        `${uniqueInOrder(these.map((r) => pct(r.qpsRuns!.cv, 2))).join(', ')} against this machine's pooled ` +
        `${pct(f.pooled.cv, 1)}): with ${n - 1} degree${n === 2 ? '' : 's'} of freedom a narrow interval is luck, ` +
        `not precision.`,
    ];
  };
  for (const az of f.azs) {
    const rows: string[][] = [];
    const emphasis: number[] = [];
    for (const r of az.rows) {
      rows.push([
        r.step + r.clientBound,
        r.variant,
        r.instanceClass,
        mark(r.tps),
        mark(r.qps),
        latencyCell(r.latency),
        r.noise,
        r.from,
      ]);
      const ratio = az.ratios.find((x) => x.step === r.step && x.variant === r.variant);
      if (ratio === undefined) continue;
      emphasis.push(rows.length);
      rows.push([
        '',
        `${ratio.variant}/${ratio.baseline}`,
        '',
        ratioCell(ratio.tps, true),
        ratioCell(ratio.qps, true),
        ratioCell(ratio.latency, false),
        `QPS CI width ${widthText(ratio.qps)}`,
        ratio.from,
      ]);
    }
    tables.push({
      title: az.az !== null ? `AZ ${az.az}` : 'All variants',
      head: [
        'step',
        'variant',
        f.caveats.local ? 'class (emulated)' : 'class',
        'TPS (95% CI)',
        'QPS (95% CI)',
        `${pctName} (95% CI)`,
        'TPS CV (runs: repeat to repeat; within: inside a run)',
        'from',
      ],
      rows,
      numeric: [3, 4, 5],
      emphasis,
      notes: [
        f.orderSentence,
        'TPS CV (standard deviation over the mean): "runs" across the repeats, each a fresh server; "within" ' +
          'across one run’s per-interval TPS (batch means, up to 10), averaged over the repeats.',
        ...flatNote(az.rows),
        WIDTH_NOTE,
        `Ratios are each variant over ${az.baseline}, with a 95% interval on the log scale; "within noise": ` +
          `the interval includes 100%.`,
        ...(anyWithinRun ? [WITHIN_RUN_NOTE] : []),
      ],
    });
  }
  if (f.azSpread.length > 0)
    tables.push({
      title: 'Same class, different AZ (QPS)',
      head: [f.caveats.local ? 'class (emulated)' : 'class', 'step', 'AZ ratio', 'QPS ratio (95% CI)'],
      rows: f.azSpread.map((s) => [s.instanceClass, s.step, s.azs, ratioCell(s.qps, true)]),
      numeric: [3],
    });
  const forest: ForestRow[] = f.azs.flatMap((az) =>
    az.ratios
      .filter((r) => r.qps.estimate !== null)
      .map((r) => ({
        label: `${az.az !== null ? `AZ ${az.az} ` : ''}${r.step}: ${r.variant}/${r.baseline}`,
        estimate: r.qps.estimate!,
        low: r.qps.interval?.low ?? null,
        high: r.qps.interval?.high ?? null,
      })),
  );
  const duet = f.order === 'duet';
  // The run-order column where some pair ran one after the other in 2+ rounds (not at once, as a duet runs).
  const ordered = f.pairOrder.some((o) => o.rounds >= 2);
  // Locally one server on both sides of every pair: no repeat count follows from an observed size that is noise.
  const allSame = f.azs.every((az) => az.ratios.every((r) => identical(f, r.variant, r.baseline)));
  const answerRows = f.azs.flatMap((az) =>
    az.ratios.map((r) => [
      az.az ?? '-',
      r.step,
      `${r.variant}/${r.baseline}`,
      ratioCell(r.qps, true),
      ratioCell(r.tps, true),
      ratioCell(r.latency, false),
      widthText(r.qps),
      ...(allSame
        ? []
        : [
            (identical(f, r.variant, r.baseline) ? '- (same server)' : (r.toResolve ?? 'resolved')) +
              (farText(az, r) !== '' ? ' †' : ''),
          ]),
      ...(ordered
        ? [pairOrderCell(f.pairOrder.find((o) => o.variant === r.variant && o.baseline === r.baseline))]
        : []),
    ]),
  );
  // The author's table: per AZ, each class's absolute QPS, TPS and pNN with their intervals.
  const absolute: TableBlock = {
    title: `Per AZ: QPS, TPS and p${f.latencyPercentile} per class (95% intervals)`,
    head: ['AZ', 'step', 'variant', f.caveats.local ? 'class (emulated)' : 'class', 'QPS', 'TPS', pctName],
    rows: f.azs.flatMap((az) =>
      az.rows.map((r) => [
        az.az ?? '-',
        r.step,
        r.variant,
        r.instanceClass,
        `${rangeText(r.qps)}${lucky(r) ? ' ‡' : ''}`,
        `${rangeText(r.tps)}${lucky(r) ? ' ‡' : ''}`,
        latencyCell(r.latency),
      ]),
    ),
    numeric: [4, 5, 6],
    notes: [
      `Intervals: ` +
        (f.azs.some((az) => az.rows.some((r) => r.qps.interval?.covers === 'run-to-run'))
          ? 'run to run, over the repeats (each a fresh server)'
          : 'none from repeats') +
        `; a range cut at 0 where the interval would go below it.`,
      ...flatNote(f.azs.flatMap((az) => az.rows)),
      ...luckyNote(f.azs.flatMap((az) => az.rows)),
      ...(anyWithinRun ? [WITHIN_RUN_NOTE] : []),
    ],
  };
  const findings = abStepSentences(f);
  if (f.clientBound !== null) findings.push(f.clientBound);
  const variants = f.azs.flatMap((az) => uniqueInOrder(az.rows.map((r) => r.variant)));
  const sameServer = f.caveats.sameServer.some((g) => variants.every((v) => g.includes(v)));
  const scope = scopeSentence(
    f.caveats,
    variants,
    `whether ${classesOf(f, 'variant')} is faster per dollar than ${classesOf(f, 'baseline')} on AWS`,
  );
  // The same class across AZs goes with its table in the evidence: the Answer keeps at most five sentences.
  const all = abSentences(f);
  const spread = all.filter((l) => l.startsWith('The same class in AZ '));
  // The one-in-twenty caution reads a "beyond the noise"; with none in the Answer it goes with the evidence.
  const anyBeyond = f.azs.some((az) =>
    az.ratios.some(
      (r) => r.qps.interval?.covers === 'run-to-run' && (r.qps.direction === 'higher' || r.qps.direction === 'lower'),
    ),
  );
  if (!anyBeyond) spread.push(...all.filter((l) => l.startsWith('Each comparison at the 95% level')));
  findings.push(...spread);
  // The engine the AWS run would use, where it is not the study's: in the Answer, not only the Appendix.
  const engine =
    f.engineChange !== null
      ? `On AWS the engine is ${f.engineChange}: the AWS run answers the question on that engine, and a major ` +
        'version can change how the classes compare.'
      : null;
  // One server twice: its noise is the finding, as one pooled figure to plan by, at the design's rounds.
  const resolved = (p: PooledNoise): string => `${p.repeats} repeats a side resolve about ${pct(p.resolves, 0)}`;
  const noise =
    sameServer && f.pooled !== null
      ? `This machine's run-to-run QPS noise (not AWS's), pooled over ${f.pooled.steps} variant steps: CV ` +
        `${pct(f.pooled.cv, 1)}; the design runs ` +
        (f.pooledFewest !== null ? `${f.pooledFewest.repeats} to ${f.pooled.repeats}` : `${f.pooled.repeats}`) +
        ` rounds, and at that noise ` +
        (f.pooledFewest !== null ? `${resolved(f.pooledFewest)}, ${resolved(f.pooled)}` : resolved(f.pooled)) +
        ` (80% of the time, at 95% confidence): ` +
        (f.pooled.resolves > 0.05 ? smallerGapText(f.pooled) : 'it tells a gap that size or larger from none.')
      : null;
  // The Answer keeps at most five lines: the engine and the noise go with the scope.
  const extraLead = [engine, noise].filter((x): x is string => x !== null).join(' ');
  const lead = scope !== null ? `${scope}${extraLead !== '' ? ` ${extraLead}` : ''}` : extraLead || null;
  const rotation = all.find((l) => l.startsWith(ROTATION_HEAD)) ?? null;
  const opening = [...(lead !== null ? [lead] : []), ...all.filter((l) => !spread.includes(l) && l !== rotation)];
  if (f.clientBound !== null) opening.push(f.clientBound);
  // On different servers a difference that goes one way at every step is what a real one looks like;
  // on one server (locally, an A/A test) it can only be the order or drift.
  const bias = sameServer ? orderBiasText(f.repeatOrder) : null;
  const extra = [
    ...(bias !== null ? [bias] : []),
    ...(f.ranOneAtATime
      ? [
          "--scale small ran one cell at a time, not a round's clusters at once as the experiment and the " +
            'original study do',
        ]
      : []),
  ];
  const besides =
    f.confounders !== null
      ? confoundersSentence(f.confounders, extra)
      : extra.length > 0
        ? `Besides the classes: ${extra.join('; ')}.`
        : null;
  // The rotation's order is one more thing besides the classes, for every AZ at once: with them, not in an AZ's line.
  const withOrder = [besides, rotation].filter((x): x is string => x !== null).join(' ');
  if (withOrder !== '') opening.push(withOrder);
  const params = parameterSentence(f.caveats);
  if (params !== null) opening.push(params);
  if (f.confounders !== null && besides !== null) tables.push(confoundersTable(f.confounders));
  if (f.repeatOrder.rows.length > 0) tables.push(repeatOrderTable(f.repeatOrder));
  const caveats = params !== null ? caveatsTable({ ...f.caveats, minHitRatioPct: null, longSteps: [] }) : null;
  return {
    id: 'ab',
    title: 'Variants compared (A/B)',
    question: 'Is one variant faster than another, beyond the run-to-run noise?',
    findings,
    tables,
    // The Answer's chart is the price section's (the TPS ratios against the price ratio) when prices apply.
    charts:
      forest.length > 0 && !f.priced
        ? [ratioChart('ab-ratio', 'QPS ratio to the baseline, with 95% intervals (dashed: 100%)', forest)]
        : [],
    answer: {
      lines: opening,
      tables: [
        absolute,
        ...(caveats !== null ? [caveats] : []),
        ...(answerRows.length > 0
          ? [
              {
                title: 'Per AZ: each variant over the baseline, with 95% intervals',
                head: [
                  'AZ',
                  'step',
                  'ratio',
                  'QPS',
                  'TPS',
                  `p${f.latencyPercentile} (lower is better)`,
                  'QPS 95% CI width',
                  ...(allSame ? [] : [duet ? 'rounds to resolve QPS' : 'repeats a side to resolve QPS']),
                  ...(ordered ? ['run order, every round'] : []),
                ],
                rows: answerRows,
                numeric: [3, 4, 5, 6],
                notes: [
                  f.orderSentence,
                  duet
                    ? 'Interval: a paired t interval on the log scale over the rounds, each round the ratio of ' +
                      "the variants' time-paired intervals (one round: batch means of its pairs, within-run " +
                      'noise only); "within noise": it includes 100%.'
                    : 'Ratio: of the means over the repeats (each a fresh server); its interval: Welch on the log ' +
                      'of that ratio (delta method), so it is lopsided around the ratio; "within noise": it ' +
                      'includes 100%. ' +
                      (allSame
                        ? 'No repeats-to-resolve column: locally both sides of each pair are one server, whose ' +
                          'true difference is 0, so an observed difference is noise and no repeat count follows ' +
                          'from it.'
                        : 'Repeats to resolve: per side, for a difference of the observed size to be found 80% ' +
                          'of the time at 95% confidence, given the run-to-run spread measured' +
                          (f.azs.some((az) => az.ratios.some((r) => identical(f, r.variant, r.baseline)))
                            ? '; "- (same server)": locally both sides are one server, whose true difference ' +
                              'is 0, so no repeat count follows from the observed size.'
                            : '.')),
                  WIDTH_NOTE,
                  ...(f.azs.some((az) => az.ratios.some((r) => farText(az, r) !== '')) ? [FAR_NOTE] : []),
                  ...(ordered
                    ? [
                        'Run order: which of the pair ran second in every round ("right after": with no other ' +
                          'cell between); "changed": the order differed between rounds; "-": they ran at once or ' +
                          'once only.',
                      ]
                    : []),
                ],
              },
            ]
          : []),
      ],
      charts: [],
    },
  };
}
