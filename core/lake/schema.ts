/**
 * The lake's schema, once, for every reader and writer of the lake: the tables' columns and types
 * (DuckDB locally, core/lake/duckdb.ts; the Glue/Athena table definitions on AWS, lib/results-lake.ts),
 * the columns of the shared views the code reads (step_summary, from which the results table and the
 * report take a step's figures: StepSummaryRow), and the schema's version, which a lake records.
 *
 * The row types a writer builds (rows.ts) are bound to the columns here by the `satisfies` clauses:
 * a column list that drifts from its row type does not compile. The views' SQL (core/lake/sql) is
 * checked against VIEW_COLUMNS by test/unit/lake-schema.test.ts, on DuckDB over real rows.
 *
 * `dt` is the partition column: it is in every row (rows.ts) but readers take it from the key
 * (`dt=YYYY-MM-DD`), as a string, like Athena partition projection does.
 */
import { AuroraBenchError } from '../errors';
import type {
  IntervalRow,
  LakeTable,
  MetricWindowRow,
  RunRow,
  ServerConfigRow,
  ServerMetricRow,
  StepRow,
  VerdictsRow,
} from './rows';

export type ColumnType = 'string' | 'int' | 'bigint' | 'double' | 'boolean';

type Columns<Row> = { readonly [K in Exclude<keyof Row, 'dt'>]-?: ColumnType };

const RUNS = {
  run_id: 'string',
  spec_name: 'string',
  spec: 'string',
  spec_sha256: 'string',
  plan: 'string',
  backend: 'string',
  region: 'string',
  engine_version: 'string',
  server_version: 'string',
  sysbench_version: 'string',
  tool_version: 'string',
  git_sha: 'string',
  started_at: 'string',
  ended_at: 'string',
  status: 'string',
  error: 'string',
  cells: 'string',
  notes: 'string',
  server_config: 'string',
} as const satisfies Columns<RunRow>;

const STEPS = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  repeat: 'int',
  instance_class: 'string',
  az: 'string',
  step_id: 'string',
  step_index: 'int',
  workload: 'string',
  test: 'string',
  threads: 'int',
  rate: 'bigint',
  target: 'string',
  endpoint_instance: 'string',
  client_id: 'string',
  client_index: 'int',
  started_at: 'string',
  ended_at: 'string',
  status: 'string',
  error: 'string',
  tps: 'double',
  qps: 'double',
  events: 'bigint',
  total_time_s: 'double',
  reads: 'bigint',
  writes: 'bigint',
  other: 'bigint',
  errors: 'bigint',
  reconnects: 'bigint',
  lat_min_ms: 'double',
  lat_avg_ms: 'double',
  lat_max_ms: 'double',
  lat_pct: 'int',
  lat_pct_ms: 'double',
  lat_p50_ms: 'double',
  lat_p90_ms: 'double',
  lat_p95_ms: 'double',
  lat_p99_ms: 'double',
  lat_p999_ms: 'double',
  interval_count: 'int',
  client_cpu_avg_pct: 'double',
  client_cpu_max_pct: 'double',
  client_saturated: 'boolean',
  read_back_checks: 'bigint',
  stale_reads: 'bigint',
} as const satisfies Columns<StepRow>;

/** What a step's rows are keyed by, first in the tables of per-step measurements. */
const STEP_KEY = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  step_id: 'string',
} as const;

/** A server metric of one instance in one step: server_metrics' rows and metric_windows' windows. */
const INSTANCE_METRIC_KEY = {
  ...STEP_KEY,
  instance_id: 'string',
  role: 'string',
  metric: 'string',
} as const;

const INTERVALS = {
  ...STEP_KEY,
  client_id: 'string',
  t: 'double',
  threads: 'int',
  tps: 'double',
  qps: 'double',
  reads_per_s: 'double',
  writes_per_s: 'double',
  other_per_s: 'double',
  lat_pct_ms: 'double',
  errors_per_s: 'double',
  reconnects_per_s: 'double',
  queue_length: 'double',
  concurrency: 'double',
} as const satisfies Columns<IntervalRow>;

const SERVER_METRICS = {
  ...INSTANCE_METRIC_KEY,
  ts: 'string',
  value: 'double',
  unit: 'string',
  source: 'string',
} as const satisfies Columns<ServerMetricRow>;

const METRIC_WINDOWS = {
  ...INSTANCE_METRIC_KEY,
  source: 'string',
  window_start: 'string',
  window_end: 'string',
  period_s: 'int',
  expected: 'int',
  received: 'int',
  complete: 'boolean',
  collected_at: 'string',
} as const satisfies Columns<MetricWindowRow>;

const VERDICTS = {
  run_id: 'string',
  experiment: 'string',
  variant: 'string',
  workload: 'string',
  threads: 'int',
  rate: 'bigint',
  target: 'string',
  measurement_hash: 'string',
  metric: 'string',
  metric_label: 'string',
  verdict: 'string',
  value: 'double',
  baseline_mean: 'double',
  baseline_runs: 'int',
  ratio: 'double',
  interval_low: 'double',
  interval_high: 'double',
  since_run_id: 'string',
  reason: 'string',
  computed_at: 'string',
} as const satisfies Columns<VerdictsRow>;

const SERVER_CONFIG = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  instance_id: 'string',
  kind: 'string',
  name: 'string',
  value: 'string',
  requested: 'string',
  in_effect: 'boolean',
} as const satisfies Columns<ServerConfigRow>;

/** Data columns per table, in a stable order (the partition column `dt` is not among them). */
export const LAKE_COLUMNS: { readonly [T in LakeTable]: Readonly<Record<string, ColumnType>> } = {
  runs: RUNS,
  steps: STEPS,
  intervals: INTERVALS,
  server_metrics: SERVER_METRICS,
  metric_windows: METRIC_WINDOWS,
  verdicts: VERDICTS,
  server_config: SERVER_CONFIG,
};

/** The partition column every table has, a string `YYYY-MM-DD` taken from the key. */
export const PARTITION_COLUMN = 'dt';

export const DUCKDB_TYPES: Readonly<Record<ColumnType, string>> = {
  string: 'VARCHAR',
  int: 'INTEGER',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
};

/** Glue/Athena (Hive DDL) column types, for the AWS table definitions. */
export const GLUE_TYPES: Readonly<Record<ColumnType, string>> = {
  string: 'string',
  int: 'int',
  bigint: 'bigint',
  double: 'double',
  boolean: 'boolean',
};

/**
 * The version of the lake's layout and columns that this code writes. A local lake records the
 * version that last wrote it in LAKE_VERSION_KEY; a lake without that file was written before
 * versions were recorded (version 1). A reader never needs a migration: every view reads older files
 * as they are (read_json's union_by_name fills a column a file lacks with NULL); a writer brings the
 * lake up to this version first (core/backends/local/local-lake.ts), and a change of columns that
 * needs files rewritten adds that step there.
 *
 * 1: the tables and views as of aurora-bench 0.x before versions were recorded.
 * 2: the version is recorded; the columns are those of version 1 (nothing to rewrite).
 */
export const LAKE_SCHEMA_VERSION = 2;

/** The key of the lake's version record: `{"schemaVersion": N, "writtenBy": "<tool version>"}`. */
export const LAKE_VERSION_KEY = 'lake.json';

export interface LakeVersionRecord {
  readonly schemaVersion: number;
  readonly writtenBy?: string;
}

/** A lake of a schema version this code cannot read or write right. */
export class LakeVersionError extends AuroraBenchError {
  override readonly name = 'LakeVersionError';
}

/** The version a lake's version record gives; a record that does not read is an error naming the file. */
export function lakeVersionOf(text: string, file: string): number {
  let version: unknown;
  try {
    version = (JSON.parse(text) as Partial<LakeVersionRecord>).schemaVersion;
  } catch (e) {
    throw new LakeVersionError(
      `${file} is not JSON (${(e as Error).message}): it records the lake's schema version, ` +
        `{"schemaVersion": ${LAKE_SCHEMA_VERSION}}`,
      { source: file },
    );
  }
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new LakeVersionError(
      `${file}: schemaVersion must be a whole number from 1 (it is ${JSON.stringify(version)})`,
      { source: file, jsonPath: '$.schemaVersion' },
    );
  }
  return version;
}

/** A view column's type: a ColumnType, with `?` when the view can return NULL there. */
type ViewColumnType = ColumnType | `${ColumnType}?`;

type TsOf<T extends ViewColumnType> = T extends `${infer B extends ColumnType}?`
  ? TsOf<B> | null
  : T extends 'string'
    ? string
    : T extends 'boolean'
      ? boolean
      : number;

/** A view's row type, from its columns. */
type ViewRow<C extends Readonly<Record<string, ViewColumnType>>> = { readonly [K in keyof C]: TsOf<C[K]> };

/** step_summary (core/lake/sql/step_summary.sql): a step of a cell, summed over its clients. */
const STEP_SUMMARY = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  repeat: 'int',
  instance_class: 'string',
  az: 'string?',
  step_id: 'string',
  step_index: 'int',
  workload: 'string',
  test: 'string',
  threads: 'int',
  rate: 'bigint',
  offered_tps: 'double',
  target: 'string',
  clients: 'bigint',
  ok_clients: 'bigint',
  status: 'string',
  error: 'string?',
  started_at: 'string',
  ended_at: 'string',
  tps: 'double?',
  qps: 'double?',
  events: 'bigint?',
  reads: 'bigint?',
  writes: 'bigint?',
  other: 'bigint?',
  errors: 'bigint',
  reconnects: 'bigint',
  errors_per_s: 'double?',
  lat_min_ms: 'double?',
  lat_avg_ms: 'double?',
  lat_pct: 'int',
  lat_pct_ms: 'double?',
  lat_p50_ms: 'double?',
  lat_p90_ms: 'double?',
  lat_p95_ms: 'double?',
  lat_p99_ms: 'double?',
  lat_p999_ms: 'double?',
  lat_max_ms: 'double?',
  total_time_s: 'double?',
  interval_count: 'bigint',
  client_cpu_avg_pct: 'double?',
  client_cpu_max_pct: 'double?',
  saturated_clients: 'bigint',
  read_back_checks: 'bigint?',
  stale_reads: 'bigint?',
  dt: 'string',
} as const satisfies Readonly<Record<string, ViewColumnType>>;

/** interval_totals (core/lake/sql/interval_totals.sql): one reporting interval of a step, summed over its clients. */
const INTERVAL_TOTALS = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  step_id: 'string',
  t: 'double',
  clients: 'bigint',
  tps: 'double',
  qps: 'double',
  lat_pct_ms: 'double',
  errors_per_s: 'double',
  reconnects_per_s: 'double',
  dt: 'string',
} as const satisfies Readonly<Record<string, ViewColumnType>>;

/**
 * The columns of the views the code reads rows of, by view (test/unit/lake-schema.test.ts checks each
 * view's SQL against them).
 * @internal exported for its tests (a test seam)
 */
export const VIEW_COLUMNS = { step_summary: STEP_SUMMARY, interval_totals: INTERVAL_TOTALS } as const;

/** One row of step_summary. */
export type StepSummaryRow = ViewRow<typeof STEP_SUMMARY>;
