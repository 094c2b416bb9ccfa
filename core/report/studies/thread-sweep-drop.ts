/**
 * S2's scores with thread counts left out of every variant's score: what one point weighs. The run's
 * noise yardstick and a thread pool's deficit can rest on the same single point, and the 1,024-thread
 * steps (not a steady state) are a fifth of every local score; the report shows the scores without them.
 */
import type { Estimated } from '../findings';
import { overallScores, sweepScores, type TargetScore } from '../score';

interface DropSweep {
  readonly label: string;
  readonly queriesPerTransaction: number;
  readonly unscored: readonly number[];
  readonly variants: readonly {
    readonly variant: string;
    readonly points: readonly { readonly threads: number; readonly tps: Estimated; readonly leftOut: boolean }[];
  }[];
}

/**
 * A sweep's scores over its points but those left out (client-bound) and the thread counts in `drop`
 * (the unscored ones, and any left out on purpose): mean committed QPS + mean TPS, the best 100.
 */
export function sweepScoresOf(s: DropSweep, drop: readonly number[]): TargetScore[] {
  return sweepScores(
    new Map(
      s.variants.map((v) => [
        v.variant,
        v.points
          .filter((p) => !p.leftOut && !drop.includes(p.threads))
          .map((p) => ({
            threads: p.threads,
            tps: p.tps.value,
            qps: p.tps.value === null ? null : p.tps.value * s.queriesPerTransaction,
          })),
      ]),
    ),
  );
}

/** The sweeps with `threads` also left out of `label`'s scores (every sweep when label is null). */
export function sweepsWithout<S extends DropSweep & { readonly scores: readonly TargetScore[] }>(
  sweeps: readonly S[],
  label: string | null,
  threads: number,
): S[] {
  return sweeps.map((s) => {
    if (label !== null && s.label !== label) return s;
    const unscored = [...s.unscored, threads];
    return { ...s, unscored, scores: sweepScoresOf(s, unscored) };
  });
}

/** The overall score per variant (the mean of its workload scores), best first. */
export const overallOf = (
  sweeps: readonly { readonly label: string; readonly scores: readonly TargetScore[] }[],
): { variant: string; score: number }[] =>
  overallScores(new Map(sweeps.map((s) => [s.label, s.scores]))).map((o) => ({ variant: o.target, score: o.score }));
