import { AuroraBenchError } from '../../../errors';

/** Replication broke, so the cell cannot become ready. A thread stopped with an error, or a server died. */
export class LocalReplicationError extends AuroraBenchError {
  override readonly name = 'LocalReplicationError';
}
