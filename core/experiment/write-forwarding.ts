/**
 * The cluster parameters a variant's `writeForwarding` block stands for. The AWS backend writes them
 * into the cluster parameter group, and the spec check looks them up in the parameter catalogue
 * like any parameter the spec sets itself.
 *
 * Aurora User Guide, "Configuration parameters for write forwarding": aurora_replica_read_consistency,
 * aurora_fwd_writer_max_connections_pct and aurora_fwd_writer_idle_timeout are cluster parameters
 * (Aurora MySQL version 3 names; version 2 calls the last two aurora_fwd_master_*).
 */
import type { WriteForwarding } from './schema';

export function writeForwardingParameters(wf: WriteForwarding | undefined): Record<string, string> {
  if (!wf?.enabled) return {};
  return {
    aurora_replica_read_consistency: wf.consistency,
    ...(wf.maxConnectionsPct !== undefined ? { aurora_fwd_writer_max_connections_pct: String(wf.maxConnectionsPct) } : {}),
    ...(wf.idleTimeoutS !== undefined ? { aurora_fwd_writer_idle_timeout: String(wf.idleTimeoutS) } : {}),
  };
}
