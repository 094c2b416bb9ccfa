/** A price table that cannot be read or has no prices for a region (a module without zod, for the Lambdas). */
import { AuroraBenchError } from '../errors';

export class PriceTableError extends AuroraBenchError {
  override readonly name = 'PriceTableError';
}
