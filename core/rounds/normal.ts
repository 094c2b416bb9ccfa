import type { SeededRandom } from '../random';

/** A standard normal draw from the seeded generator, after Box and Muller 1958. */
export function normalDraw(rng: SeededRandom): number {
  const u = (rng.nextUint32() + 1) / 4294967297;
  const v = rng.nextUint32() / 4294967296;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
