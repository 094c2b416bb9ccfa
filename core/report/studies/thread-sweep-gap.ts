import { pct } from '../../format';
import type { Estimated } from '../findings';
import { valueText, type ParameterInEffect } from '../parameter-effect';
import type { RunOrder } from '../run-order';

interface GapSweep {
  readonly label: string;
  readonly unscored: readonly number[];
  readonly scores: readonly { readonly target: string; readonly score: number }[];
  readonly variants: readonly {
    readonly variant: string;
    readonly points: readonly { readonly threads: number; readonly tps: Estimated }[];
  }[];
}

/** A score gap whose TPS intervals are disjoint at every scored thread count: systematic, not noise. */
export interface SystematicGap {
  readonly sweep: string;
  readonly higher: string;
  readonly lower: string;
  readonly ratio: number;
  readonly threads: readonly number[];
  /** Recorded parameters whose values differ between the two ("name a vs b"). */
  readonly parameters: readonly string[];
  /** Each one's place in the run order (1 = first), when the variants ran one after another. */
  readonly order: { readonly higher: number; readonly lower: number } | null;
}

/** Whether a's TPS interval lies wholly above b's at every one of the thread counts. */
export function aboveEverywhere(s: GapSweep, a: string, b: string, threads: readonly number[]): boolean {
  const at = (v: string, t: number): Estimated | undefined =>
    s.variants.find((x) => x.variant === v)?.points.find((p) => p.threads === t)?.tps;
  return threads.every((t) => {
    const [x, y] = [at(a, t)?.interval, at(b, t)?.interval];
    return x != null && y != null && x.low > y.high;
  });
}

/** The widest score gap, over all sweeps, that holds at every scored thread count with disjoint intervals. */
export function systematicGap(
  sweeps: readonly GapSweep[],
  parameters: readonly ParameterInEffect[] | null,
  runOrder: RunOrder | null,
): SystematicGap | null {
  let out: SystematicGap | null = null;
  for (const s of sweeps) {
    const threads = [...new Set(s.variants.flatMap((v) => v.points.map((p) => p.threads)))]
      .filter((t) => !s.unscored.includes(t))
      .sort((a, b) => a - b);
    if (threads.length < 2) continue;
    for (const a of s.scores)
      for (const b of s.scores) {
        if (!(a.score > b.score && b.score > 0) || !aboveEverywhere(s, a.target, b.target, threads)) continue;
        const ratio = a.score / b.score;
        if (out !== null && ratio <= out.ratio) continue;
        out = { sweep: s.label, higher: a.target, lower: b.target, ratio, threads, parameters: [], order: null };
      }
  }
  if (out === null) return null;
  const value = (p: ParameterInEffect, v: string): string =>
    valueText(p.values.find((x) => x.variant === v)?.value ?? null, p.parameter);
  const g = out;
  const place = (v: string): number | undefined => runOrder?.windows.find((w) => w.variant === v)?.order;
  const [oh, ol] = [place(g.higher), place(g.lower)];
  return {
    ...g,
    parameters: (parameters ?? [])
      .filter((p) => p.effect === 'differs' && value(p, g.higher) !== value(p, g.lower))
      .map((p) => `${p.parameter} ${value(p, g.higher)} vs ${value(p, g.lower)}`),
    order:
      runOrder !== null && !runOrder.interleaved && oh !== undefined && ol !== undefined
        ? { higher: oh, lower: ol }
        : null,
  };
}

const ordinal = (n: number): string => `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;

/** The gap as a finding: systematic in this run, with the candidate causes the lake can name. */
export function systematicGapSentence(g: SystematicGap): string {
  const causes = [
    ...(g.parameters.length > 0 ? [`their recorded parameters (${g.parameters.join('; ')})`] : []),
    ...(g.order !== null
      ? [`run order and the host's load at the time (ran ${ordinal(g.order.higher)} vs ${ordinal(g.order.lower)})`]
      : []),
  ];
  return (
    `${g.higher}'s ${g.sweep} score is ${pct(g.ratio, 1)} of ${g.lower}'s, its TPS interval above ` +
    `${g.lower}'s at every scored thread count (${g.threads.join(', ')}): a systematic difference between ` +
    `these two in this run, not noise` +
    (causes.length > 0 ? `; candidate causes: ${causes.join(', ')}; one run cannot tell which.` : '.')
  );
}
