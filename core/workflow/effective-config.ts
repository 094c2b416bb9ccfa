/**
 * The configuration a cell really runs with, checked before anything is measured.
 * The writer's global variables at prepare are compared with the values the experiment asked for.
 *
 * - Requested values are the variant's parameters, instance ones over cluster ones as in Aurora.
 *   Where the backend translated them, its applied values count instead.
 *   Formula values are shown but not compared, since the instance's memory decides them.
 *   A parameter the server does not report as a variable is recorded with in_effect null.
 * - On AWS the parameter groups' apply status counts too. Anything but in-sync means other values may run.
 *   See botocore rds service-2.json, DBParameterGroupStatus.
 *   checkCellReady already waits for in-sync, so this is the backstop.
 * - A fixed list of performance variables is recorded whether or not the experiment set them.
 *   So `compare` can compare runs on them.
 * A requested value that is not in effect fails the cell with the names and both values.
 */
import type { CellResources } from '../backend';
import type { ServerConfigRow } from '../lake/rows';
import { writeForwardingParameters } from '../experiment/write-forwarding';
import type { CellPlan } from '../plan/types';
import type { ServerVariables } from '../sysbench/server-variables';

/** Variables that shape performance. */
const PERFORMANCE_VARIABLES = [
  'innodb_buffer_pool_size',
  'innodb_buffer_pool_instances',
  'innodb_flush_log_at_trx_commit',
  'innodb_flush_method',
  'innodb_doublewrite',
  'innodb_io_capacity',
  'innodb_io_capacity_max',
  'innodb_log_file_size',
  'innodb_log_buffer_size',
  'innodb_read_io_threads',
  'innodb_write_io_threads',
  'innodb_thread_concurrency',
  'innodb_adaptive_hash_index',
  'log_bin',
  'binlog_format',
  'sync_binlog',
  'thread_handling',
  'thread_pool_size',
  'max_connections',
  'table_open_cache',
  'max_prepared_stmt_count',
  'performance_schema',
  'query_cache_type',
  'transaction_isolation',
  'tx_isolation',
] as const;

/** PostgreSQL settings that shape performance. */
const POSTGRES_PERFORMANCE_SETTINGS = [
  'shared_buffers',
  'effective_cache_size',
  'work_mem',
  'maintenance_work_mem',
  'wal_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'checkpoint_completion_target',
  'synchronous_commit',
  'fsync',
  'full_page_writes',
  'wal_level',
  'random_page_cost',
  'effective_io_concurrency',
  'max_worker_processes',
  'max_parallel_workers',
  'max_parallel_workers_per_gather',
  'max_connections',
  'huge_pages',
  'jit',
  'default_transaction_isolation',
] as const;

/** The server's own version strings. Aurora MySQL has aurora_version, PostgreSQL server_version. */
const VERSION_VARIABLES = ['version', 'version_comment', 'aurora_version', 'server_version'] as const;

/** A PostgreSQL size unit in bytes, so "8kB" is 8192. */
function unitBytes(unit: string): number | undefined {
  const m = /^([0-9]+)?(B|kB|MB|GB|TB)$/.exec(unit);
  if (!m) return undefined;
  return Number(m[1] ?? 1) * 1024 ** ['B', 'kB', 'MB', 'GB', 'TB'].indexOf(m[2]!);
}

const TIME_MS: Readonly<Record<string, number>> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A PostgreSQL time value such as "30s", "5min" or "200ms", in ms. */
function timeMs(text: string): number | undefined {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s|min|h|d)\s*$/.exec(text);
  return m ? Number(m[1]) * TIME_MS[m[2]!]! : undefined;
}

export interface ApplyStatus {
  readonly instanceId: string;
  readonly kind: 'instance' | 'cluster';
  readonly group: string;
  readonly status: string;
}

export interface EffectiveConfiguration {
  readonly rows: ServerConfigRow[];
  /** Lines such as "innodb_io_capacity: asked 400, runs with 300". */
  readonly notInEffect: string[];
  /** The server version as reported, null when unread. */
  readonly serverVersion: string | null;
  /** Why the server's variables could not be read, or null. */
  readonly unread: string | null;
}

type Literal = string | number | boolean;

const isFormula = (v: Literal): boolean => typeof v === 'string' && /^\s*\{.*\}\s*$/.test(v);

/** Sizes as parameter groups write them, such as 512K, 64M or 12G. */
function sizeBytes(text: string): number | undefined {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTkmgt])(?:i?[Bb])?\s*$/.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * 1024 ** ('kmgt'.indexOf(m[2]!.toLowerCase()) + 1));
}

const TRUE = new Set(['1', 'on', 'true', 'yes']);
const FALSE = new Set(['0', 'off', 'false', 'no']);

/**
 * Whether the server's value is the requested one, as text, number, size or boolean.
 * @internal exported for its tests (a test seam)
 */
export function sameSetting(requested: Literal, actual: string, unit?: string): boolean {
  const asked = String(requested).trim();
  // PostgreSQL reports the setting in its base unit.
  // So a requested "64MB" or "30s" is compared in bytes or ms.
  if (unit !== undefined && asked !== '' && !Number.isFinite(Number(asked)) && Number.isFinite(Number(actual))) {
    const bytes = unitBytes(unit);
    const askedBytes = sizeBytes(asked);
    if (bytes !== undefined && askedBytes !== undefined) return askedBytes === Number(actual) * bytes;
    const unitMs = TIME_MS[unit];
    const askedMs = timeMs(asked);
    if (unitMs !== undefined && askedMs !== undefined) return askedMs === Number(actual) * unitMs;
  }
  const a = asked.toLowerCase();
  const b = actual.trim().toLowerCase();
  if (a === b) return true;
  const na = sizeBytes(asked) ?? (asked !== '' && Number.isFinite(Number(asked)) ? Number(asked) : undefined);
  const nb = b !== '' && Number.isFinite(Number(b)) ? Number(b) : undefined;
  if (na !== undefined && nb !== undefined) return na === nb;
  if ((TRUE.has(a) && TRUE.has(b)) || (FALSE.has(a) && FALSE.has(b))) return true;
  return false;
}

/** What the cell asked the writer to run with. The backend's applied values win when it recorded them. */
export function requestedParameters(
  cell: Pick<CellPlan, 'variant'>,
  resources: Pick<CellResources, 'backendState'>,
): Record<string, Literal> {
  const recorded = resources.backendState['requestedParameters'];
  if (recorded !== undefined) return JSON.parse(recorded) as Record<string, Literal>;
  const out: Record<string, Literal> = {};
  for (const [k, v] of Object.entries(cell.variant.clusterParameters)) out[k.toLowerCase()] = v;
  // Without aurora_replica_read_consistency in effect, Aurora does not forward writes.
  // See Aurora User Guide, "Read consistency for write forwarding".
  for (const [k, v] of Object.entries(
    writeForwardingParameters(cell.variant.writeForwarding, cell.variant.engine?.kind ?? 'aurora-mysql'),
  ))
    out[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(cell.variant.instanceParameters)) out[k.toLowerCase()] = v;
  return out;
}

export function applyStatuses(resources: Pick<CellResources, 'backendState'>): ApplyStatus[] {
  const recorded = resources.backendState['parameterApplyStatus'];
  return recorded === undefined ? [] : (JSON.parse(recorded) as ApplyStatus[]);
}

export function effectiveConfiguration(input: {
  readonly base: Pick<ServerConfigRow, 'run_id' | 'cell_id' | 'variant' | 'dt'>;
  readonly instanceId: string;
  readonly server: ServerVariables;
  readonly requested: Readonly<Record<string, Literal>>;
  readonly applyStatus: readonly ApplyStatus[];
}): EffectiveConfiguration {
  const { base, instanceId, server, requested } = input;
  const rows: ServerConfigRow[] = [];
  const notInEffect: string[] = [];
  const row = (
    kind: string,
    name: string,
    value: string | null,
    asked: string | null,
    inEffect: boolean | null,
  ): ServerConfigRow => ({
    ...base,
    instance_id: instanceId,
    kind,
    name,
    value,
    requested: asked,
    in_effect: inEffect,
  });
  for (const name of VERSION_VARIABLES) {
    const v = server.variables.get(name);
    if (v !== undefined) rows.push(row('version', name, v, null, null));
  }
  const unread = server.error;
  for (const [name, asked] of Object.entries(requested)) {
    const actual = server.variables.get(name.toLowerCase());
    if (unread !== null || actual === undefined || isFormula(asked)) {
      rows.push(row('requested', name, actual ?? null, String(asked), null));
      continue;
    }
    const inEffect = sameSetting(asked, actual, server.units?.get(name.toLowerCase()));
    rows.push(row('requested', name, actual, String(asked), inEffect));
    if (!inEffect) notInEffect.push(`${name}: asked ${String(asked)}, ${instanceId} runs with ${actual}`);
  }
  for (const name of server.units !== undefined || server.variables.has('server_version')
    ? POSTGRES_PERFORMANCE_SETTINGS
    : PERFORMANCE_VARIABLES) {
    if (name in requested) continue;
    const v = server.variables.get(name);
    if (v !== undefined) rows.push(row('performance', name, v, null, null));
  }
  for (const s of input.applyStatus) {
    const inSync = s.status === 'in-sync';
    rows.push({
      ...base,
      instance_id: s.instanceId,
      kind: 'apply-status',
      name: `${s.kind}:${s.group}`,
      value: s.status,
      requested: 'in-sync',
      in_effect: inSync,
    });
    if (!inSync)
      notInEffect.push(
        `${s.instanceId}: ${s.kind} parameter group ${s.group} is ${s.status} (its values are not all in effect)`,
      );
  }
  const version = server.variables.get('version');
  const aurora = server.variables.get('aurora_version');
  const postgres = server.variables.get('server_version');
  const serverVersion =
    aurora !== undefined
      ? `${version ?? '?'} (Aurora MySQL ${aurora})`
      : (version ?? (postgres !== undefined ? `PostgreSQL ${postgres}` : null));
  return { rows, notInEffect, serverVersion, unread };
}
