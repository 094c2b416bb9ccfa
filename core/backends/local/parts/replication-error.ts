import { AuroraBenchError } from '../../../errors';

/** Replication broke (an IO or SQL thread stopped with an error, a server died): the cell cannot become ready. */
export class LocalReplicationError extends AuroraBenchError {
  override readonly name = 'LocalReplicationError';
}
