/**
 * The cluster parameters a variant's `writeForwarding` block stands for.
 * The AWS backend writes them into the cluster parameter group.
 * The spec check looks them up in the catalogue like any parameter the spec sets.
 * See Aurora User Guide, "Configuration parameters for write forwarding".
 * Version 2 calls the last two aurora_fwd_master_*.
 */
import type { EngineKind } from '../aurora/engines';
import type { WriteForwarding } from './schema';

/**
 * Aurora PostgreSQL's name for the level, a cluster parameter.
 * See Aurora User Guide, "Configuring Aurora PostgreSQL for local write forwarding".
 * The block's other fields are Aurora MySQL parameters, so engine-checks.ts refuses them here.
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
