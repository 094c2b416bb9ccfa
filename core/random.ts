/**
 * A small seeded generator for the permutation tests and the plan's randomized order.
 * The same seed gives the same p-values and order on every machine.
 *
 * It is xoshiro128** 1.1, with 128 bits of state and period 2^128 - 1. It passes BigCrush.
 * See Blackman and Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 2021.
 * SplitMix32 fills the state from the seed, as the authors recommend, since all zeros is a fixed point.
 */

export class SeededRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    let x = seed >>> 0;
    const splitMix32 = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = splitMix32();
    this.s1 = splitMix32();
    this.s2 = splitMix32();
    this.s3 = splitMix32();
  }

  /** The next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /**
   * A uniform integer in [0, bound) by multiply-shift.
   * Its bias is far below anything a permutation test resolves.
   */
  below(bound: number): number {
    return Math.floor((this.nextUint32() / 4294967296) * bound);
  }

  /** Fisher–Yates shuffle of a[from, to) in place. See Knuth, TAOCP vol. 2, Algorithm P. */
  shuffle(a: Int32Array | number[], from = 0, to = a.length): void {
    for (let i = to - 1; i > from; i--) {
      const j = from + this.below(i - from + 1);
      const t = a[i]!;
      a[i] = a[j]!;
      a[j] = t;
    }
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** A 32-bit FNV-1a seed from a text, so each series gets its own reproducible permutations. */
export function seedFromText(text: string, base = 0): number {
  let h = (0x811c9dc5 ^ base) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
