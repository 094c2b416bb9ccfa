/**
 * Synthetic performance series with known change points, for the detector's tests and its bench:
 * throughput-like values (a level around 1000 with a few percent of noise) whose level or spread
 * changes at known indexes, with outliers where asked. Deterministic for a seed.
 */
import { SeededRandom } from '../core/random';

export interface SeriesSegment {
  /** Values in the segment. */
  readonly length: number;
  readonly mean: number;
  /** Standard deviation of the noise. */
  readonly sd: number;
}

export interface SyntheticSeries {
  readonly name: string;
  readonly values: number[];
  /** Index of the first value of every segment after the first (where the change is). */
  readonly changePoints: number[];
}

/** Standard normal deviates (Box–Muller) from the seeded generator. */
export class NormalSource {
  private readonly rng: SeededRandom;
  private spare: number | null = null;
  constructor(seed: number) {
    this.rng = new SeededRandom(seed);
  }
  uniform(): number {
    return (this.rng.nextUint32() + 0.5) / 4294967296;
  }
  next(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(this.uniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }
}

export function segmentedSeries(
  name: string,
  segments: readonly SeriesSegment[],
  seed: number,
  outliers: readonly { index: number; sds: number }[] = [],
): SyntheticSeries {
  const normal = new NormalSource(seed);
  const values: number[] = [];
  const changePoints: number[] = [];
  for (const s of segments) {
    if (values.length > 0) changePoints.push(values.length);
    for (let i = 0; i < s.length; i++) values.push(s.mean + s.sd * normal.next());
  }
  for (const o of outliers) {
    const s = segments[0]!;
    values[o.index] = values[o.index]! + o.sds * s.sd;
  }
  return { name, values, changePoints };
}

/** The kinds of series the detector is tested and benchmarked on; `cv` is the noise as a share of the level. */
export function seriesOfKind(
  kind: 'none' | 'step-down' | 'step-up' | 'down-up' | 'variance' | 'outliers',
  length: number,
  seed: number,
  cv = 0.02,
  shift = 0.1,
): SyntheticSeries {
  const level = 1000;
  const sd = level * cv;
  const at = (share: number) => Math.round(length * share);
  switch (kind) {
    case 'none':
      return segmentedSeries('no change', [{ length, mean: level, sd }], seed);
    case 'step-down':
      return segmentedSeries(
        `step down ${shift * 100}%`,
        [
          { length: at(0.6), mean: level, sd },
          { length: length - at(0.6), mean: level * (1 - shift), sd },
        ],
        seed,
      );
    case 'step-up':
      return segmentedSeries(
        `step up ${shift * 100}%`,
        [
          { length: at(0.4), mean: level, sd },
          { length: length - at(0.4), mean: level * (1 + shift), sd },
        ],
        seed,
      );
    case 'down-up':
      return segmentedSeries(
        `down ${shift * 100}% then back`,
        [
          { length: at(0.4), mean: level, sd },
          { length: at(0.7) - at(0.4), mean: level * (1 - shift), sd },
          { length: length - at(0.7), mean: level, sd },
        ],
        seed,
      );
    case 'variance':
      return segmentedSeries(
        'spread x5',
        [
          { length: at(0.5), mean: level, sd },
          { length: length - at(0.5), mean: level, sd: sd * 5 },
        ],
        seed,
      );
    case 'outliers': {
      // Single runs far off (a noisy neighbour, a stuck client), nowhere near the ends.
      const idx = [at(0.25), at(0.5), at(0.8)];
      return segmentedSeries(
        'no change, 3 outliers of 6 sd',
        [{ length, mean: level, sd }],
        seed,
        idx.map((index, i) => ({ index, sds: i % 2 === 0 ? 6 : -6 })),
      );
    }
  }
}
