/**
 * The cluster parameters a variant's `writeForwarding` block stands for. The AWS backend writes them
 * into the cluster parameter group, and the spec check looks them up in the parameter catalogue
 * like any parameter the spec sets itself.
 *
 * Aurora User Guide, "Configuration parameters for write forwarding": aurora_replica_read_consistency,
 * aurora_fwd_writer_max_connections_pct and aurora_fwd_writer_idle_timeout are cluster parameters
 * (Aurora MySQL version 3 names; version 2 calls the last two aurora_fwd_master_*).
 */
import type { EngineKind } from '../aurora/engines';
import type { WriteForwarding } from './schema';

/**
 * Aurora PostgreSQL names the level apg_write_forward.consistency_mode, a DB cluster (and DB)
 * parameter taking SESSION, EVENTUAL, GLOBAL or OFF (Aurora User Guide, "Configuring Aurora
 * PostgreSQL for local write forwarding", aurora-postgresql-write-forwarding-configuring.md); the
 * block's other fields stand for Aurora MySQL parameters and are refused for it
 * (core/experiment/engine-checks.ts).
 */
export function writeForwardingParameters(
  wf: WriteForwarding | undefined,
  engine: EngineKind = 'aurora-mysql',
): Record<string, string> {
  if (!wf?.enabled) return {};
  if (engine === 'aurora-postgresql') return { 'apg_write_forward.consistency_mode': wf.consistency };
  if (engine !== 'aurora-mysql') return {};
  return {
    aurora_replica_read_consistency: wf.consistency,
    ...(wf.maxConnectionsPct !== undefined
      ? { aurora_fwd_writer_max_connections_pct: String(wf.maxConnectionsPct) }
      : {}),
    ...(wf.idleTimeoutS !== undefined ? { aurora_fwd_writer_idle_timeout: String(wf.idleTimeoutS) } : {}),
  };
}
