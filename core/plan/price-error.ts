/** A price table that cannot be read or lacks a region. This module has no zod, for the Lambdas. */
import { AuroraBenchError } from '../errors';

export class PriceTableError extends AuroraBenchError {
  override readonly name = 'PriceTableError';
}
