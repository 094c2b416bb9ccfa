/**
 * What aurora-bench knows offline about the parameters of engines other than Aurora MySQL.
 * These are the rules AWS documents by name. A parameter they do not name is not refused here.
 * The AWS preflight checks every one against the family's engine defaults, and RDS decides.
 *
 * Sources.
 * See RDS User Guide, "Parameters for MariaDB", for the unavailable and MariaDB-only parameters.
 * Its ranges are MariaDB's own.
 * See MariaDB Server documentation, "Thread Pool System and Status Variables", for thread_handling.
 * Aurora-only parameters exist in Aurora families only. An RDS DB instance's family has none.
 * See Aurora User Guide, "Aurora MySQL configuration parameters" and "Amazon Aurora PostgreSQL parameters".
 */
import type { EngineKind } from './engines';

const MARIADB_UNAVAILABLE: ReadonlySet<string> = new Set([
  'bind_address',
  'binlog_error_action',
  'binlog_gtid_simple_recovery',
  'binlog_max_flush_queue_time',
  'binlog_order_commits',
  'binlog_rows_query_log_events',
  'binlogging_impossible_mode',
  'block_encryption_mode',
  'core_file',
  'default_tmp_storage_engine',
  'div_precision_increment',
  'end_markers_in_json',
  'enforce_gtid_consistency',
  'eq_range_index_dive_limit',
  'gtid_executed',
  'gtid-mode',
  'gtid_next',
  'gtid_owned',
  'gtid_purged',
  'log_bin_basename',
  'log_bin_index',
  'log_bin_use_v1_row_events',
  'log_slow_admin_statements',
  'log_slow_slave_statements',
  'log_throttle_queries_not_using_indexes',
  'master-info-repository',
  'optimizer_trace',
  'optimizer_trace_features',
  'optimizer_trace_limit',
  'optimizer_trace_max_mem_size',
  'optimizer_trace_offset',
  'relay_log_info_repository',
  'rpl_stop_slave_timeout',
  'slave_parallel_workers',
  'slave_pending_jobs_size_max',
  'slave_rows_search_algorithms',
  'storage_engine',
  'table_open_cache_instances',
  'timed_mutexes',
  'transaction_allow_batching',
  'validate-password',
  'validate_password_dictionary_file',
  'validate_password_length',
  'validate_password_mixed_case_count',
  'validate_password_number_count',
  'validate_password_policy',
  'validate_password_special_char_count',
]);

/** The thread pool of RDS for MariaDB. */
const MARIADB_THREAD_POOL = [
  'thread_handling',
  'thread_pool_idle_timeout',
  'thread_pool_max_threads',
  'thread_pool_min_threads',
  'thread_pool_oversubscribe',
  'thread_pool_size',
  'thread_pool_stall_limit',
] as const;

/** Parameters the RDS User Guide lists as MariaDB-only that a benchmark would set. */
const MARIADB_ONLY: ReadonlySet<string> = new Set([
  ...MARIADB_THREAD_POOL,
  'binlog_annotate_row_events',
  'binlog_commit_wait_count',
  'binlog_commit_wait_usec',
  'deadlock_search_depth_long',
  'deadlock_search_depth_short',
  'deadlock_timeout_long',
  'deadlock_timeout_short',
  'extra_max_connections',
  'extra_port',
  'gtid_domain_id',
  'gtid_strict_mode',
  'histogram_size',
  'histogram_type',
  'innodb_adaptive_hash_index_partitions',
  'join_buffer_space_limit',
  'join_cache_level',
  'key_cache_segments',
  'max_statement_time',
  'progress_report_time',
  'query_cache_strip_comments',
  'slave_domain_parallel_threads',
  'slave_parallel_max_queued',
  'slave_parallel_mode',
  'slave_parallel_threads',
  'use_stat_tables',
  'userstat',
]);
const MARIADB_ONLY_PREFIXES = ['aria_', 'innodb_defragment', 'feedback'];

/** thread_handling's values. RDS takes MariaDB's ranges. */
const THREAD_HANDLING_VALUES = ['one-thread-per-connection', 'no-threads', 'pool-of-threads'];

export interface RdsParameterProblem {
  readonly name: string;
  readonly reason: string;
}

function isMariadbOnly(name: string): boolean {
  return MARIADB_ONLY.has(name) || MARIADB_ONLY_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * Why the engine's parameter group would refuse `name`, or undefined when nothing documented refuses it.
 * Only for the engines this module covers.
 */
export function rdsParameterProblem(kind: EngineKind, name: string, value: string): string | undefined {
  const label =
    kind === 'rds-mariadb'
      ? 'RDS for MariaDB'
      : kind === 'rds-mysql'
        ? 'RDS for MySQL'
        : kind === 'rds-postgresql'
          ? 'RDS for PostgreSQL'
          : 'Aurora PostgreSQL';
  if (kind === 'rds-mysql' || kind === 'rds-mariadb') {
    if (/^aurora_/.test(name))
      return `${name} is an Aurora MySQL parameter; ${label} has no Aurora parameters: remove it`;
  }
  if (kind === 'rds-mariadb') {
    if (MARIADB_UNAVAILABLE.has(name))
      return (
        `${name} is a MySQL parameter that RDS for MariaDB's parameter groups do not have (RDS User ` +
        `Guide, "Parameters for MariaDB"): remove it`
      );
    if (name === 'thread_handling' && !THREAD_HANDLING_VALUES.includes(value))
      return `thread_handling takes ${THREAD_HANDLING_VALUES.join(', ')}, got "${value}"`;
  }
  if (kind === 'rds-mysql' && isMariadbOnly(name)) {
    return `${name} is a MariaDB-only parameter (RDS User Guide, "Parameters for MariaDB")${
      (MARIADB_THREAD_POOL as readonly string[]).includes(name)
        ? ': the thread pool is a parameter on RDS for MariaDB, not RDS for MySQL'
        : ''
    }: remove it, or run the variant on rds-mariadb`;
  }
  if (kind === 'rds-postgresql' && /^(apg_|apg\.|aurora_)/.test(name))
    return `${name} is an Aurora PostgreSQL parameter; RDS for PostgreSQL has no Aurora parameters: remove it`;
  return undefined;
}

/** Every problem of a parameter group's values for the engine. */
export function rdsParameterProblems(
  kind: EngineKind,
  params: Readonly<Record<string, string>>,
): RdsParameterProblem[] {
  const problems: RdsParameterProblem[] = [];
  for (const [name, value] of Object.entries(params)) {
    const reason = rdsParameterProblem(kind, name, value);
    if (reason !== undefined) problems.push({ name, reason });
  }
  return problems;
}

/** The engine of a parameter group family this module covers. */
export function engineOfFamily(family: string): EngineKind | undefined {
  if (/^aurora-postgresql\d/.test(family)) return 'aurora-postgresql';
  if (/^aurora-mysql/.test(family)) return 'aurora-mysql';
  if (/^mariadb\d/.test(family)) return 'rds-mariadb';
  if (/^mysql\d/.test(family)) return 'rds-mysql';
  if (/^postgres\d/.test(family)) return 'rds-postgresql';
  return undefined;
}
