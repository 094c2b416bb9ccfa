/**
 * The lake's schema, once, for every reader and writer of the lake: the tables' columns and types
 * (DuckDB locally, core/lake/duckdb.ts; the Glue/Athena table definitions on AWS, lib/results-lake.ts),
 * the row types the writers build (LakeRow, named per table in core/lake/rows.ts), the columns of the
 * shared views the code reads (step_summary, from which the results table and the report take a
 * step's figures: StepSummaryRow), and the schema's version, which a lake records.
 *
 * A column is written here once: its name, its type (`?` when it may be null) and its doc comment,
 * which the row types carry (they are mapped from these objects). The views' SQL (core/lake/sql) is
 * checked against VIEW_COLUMNS by test/unit/lake-schema.test.ts, on DuckDB over real rows.
 *
 * `dt` is the partition column: it is in every row (LakeRow) but readers take it from the key
 * (`dt=YYYY-MM-DD`), as a string, like Athena partition projection does.
 */
import { AuroraBenchError } from '../errors';

export type ColumnType = 'string' | 'int' | 'bigint' | 'double' | 'boolean';

/** A column's type, with `?` when it may hold NULL. */
type ColumnSpec = ColumnType | `${ColumnType}?`;

type TsOf<T extends ColumnSpec> = T extends `${infer B extends ColumnType}?`
  ? TsOf<B> | null
  : T extends 'string'
    ? string
    : T extends 'boolean'
      ? boolean
      : number;

/** A row of columns: each column's TypeScript type (its doc comment comes along). */
type RowOf<C extends Readonly<Record<string, ColumnSpec>>> = { readonly [K in keyof C]: TsOf<C[K]> };

const RUNS = {
  run_id: 'string',
  spec_name: 'string',
  /** The spec as validated, JSON. */
  spec: 'string',
  spec_sha256: 'string',
  /** The plan (cells x steps) as JSON, minus script bodies. */
  plan: 'string',
  /**
   * Where the run ran (RunBackend); import: hand-run sysbench logs brought in by `aurora-bench import`
   * (core/cli/import-logs.ts); aws-rehearsal: `run --aws-rehearsal`, the AWS path against moto and
   * MariaDB/PostgreSQL stand-ins on this machine (set on the lake copy the rehearsal leaves,
   * core/rehearsal/lake-copy.ts), which an AWS experiment's history leaves out (core/regression/load.ts).
   */
  backend: 'string',
  region: 'string',
  engine_version: 'string',
  /** e.g. "10.11.19-MariaDB" locally; the Aurora version on AWS. */
  server_version: 'string?',
  sysbench_version: 'string?',
  tool_version: 'string',
  git_sha: 'string?',
  started_at: 'string',
  ended_at: 'string?',
  /** running | succeeded | failed */
  status: 'string',
  /** Why the run failed: failed cells and steps with their reasons. */
  error: 'string?',
  /** JSON array of {cell_id, status, error}. */
  cells: 'string',
  /** JSON array of plan notes (not applicable parameters etc.). */
  notes: 'string',
  /**
   * JSON object cell id -> {server version, effective values}: what each cell's writer ran with,
   * read at prepare (the server_config table has every row). Absent from runs written before.
   */
  server_config: 'string?',
} as const;

const STEPS = {
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
  /** Offered rate per client (0 = unlimited). */
  rate: 'bigint',
  target: 'string',
  endpoint_instance: 'string',
  client_id: 'string',
  client_index: 'int',
  started_at: 'string',
  ended_at: 'string',
  /**
   * ok | overloaded | failed. overloaded: a rate step whose offered rate sysbench could not keep
   * up with (its event queue filled, core/lake/step-rows.ts EVENT_QUEUE_FULL); tps/qps are the
   * achieved rates of the intervals before it stopped, lat_pct_ms the worst interval's.
   */
  status: 'string',
  error: 'string?',
  tps: 'double?',
  qps: 'double?',
  events: 'bigint?',
  total_time_s: 'double?',
  reads: 'bigint?',
  writes: 'bigint?',
  other: 'bigint?',
  errors: 'bigint?',
  reconnects: 'bigint?',
  lat_min_ms: 'double?',
  lat_avg_ms: 'double?',
  lat_max_ms: 'double?',
  lat_pct: 'int',
  lat_pct_ms: 'double?',
  /** The latency distribution from the step's histogram (LatencySummary.percentiles); null without one. */
  lat_p50_ms: 'double?',
  lat_p90_ms: 'double?',
  lat_p95_ms: 'double?',
  lat_p99_ms: 'double?',
  lat_p999_ms: 'double?',
  interval_count: 'int',
  /**
   * The client's CPU busy %: on AWS the client instance's CPU; locally (servers on the same machine)
   * sysbench's own CPU as a share of the cores its threads can use.
   */
  client_cpu_avg_pct: 'double?',
  client_cpu_max_pct: 'double?',
  /** true when the client itself was CPU-bound during the step (its numbers say more about it than the server). */
  client_saturated: 'boolean',
  /**
   * Read-after-write checks a workload made (rw_consistency.lua),
   * and how many did not see the write; null when not measured.
   */
  read_back_checks: 'bigint?',
  stale_reads: 'bigint?',
} as const;

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
  /** DB instance id, or the client id for client-side metrics. */
  instance_id: 'string',
  /** writer | reader | client */
  role: 'string',
  /** CloudWatch AWS/RDS metric name where one exists (CPUUtilization, SelectThroughput, ...). */
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
  queue_length: 'double?',
  concurrency: 'double?',
} as const;

const SERVER_METRICS = {
  ...INSTANCE_METRIC_KEY,
  ts: 'string',
  value: 'double',
  unit: 'string',
  /** A MetricSource. */
  source: 'string',
} as const;

/**
 * How complete the server metrics of one step are, per instance and metric: CloudWatch publishes a
 * minute's datapoint a minute or more after it ends, so a window collected too early misses its
 * last minutes. An average over an incomplete window covers only the datapoints received; readers
 * (the report) flag it rather than take it as the whole step's.
 */
const METRIC_WINDOWS = {
  ...INSTANCE_METRIC_KEY,
  /** A MetricSource. */
  source: 'string',
  /** The window the datapoints were asked for (on AWS whole minutes: start inclusive, end exclusive). */
  window_start: 'string',
  window_end: 'string',
  /** Seconds per datapoint (CloudWatch 60, PI its period; locally the sampler's interval). */
  period_s: 'int',
  expected: 'int',
  received: 'int',
  /** received >= expected. */
  complete: 'boolean',
  collected_at: 'string',
} as const;

/**
 * One verdict of a run: a step (by what it ran) and metric of the run judged against the last stable
 * segment of its experiment's history (core/regression/history.ts, latestVerdict). Written once per
 * run after it finished (the ComputeVerdicts Task), so the lake keeps every night's verdicts.
 */
const VERDICTS = {
  run_id: 'string',
  /** The experiment's name (runs.spec_name). */
  experiment: 'string',
  variant: 'string',
  workload: 'string',
  threads: 'int',
  rate: 'bigint',
  target: 'string',
  /** Short hash of the step's measurement definition: a new hash starts a new series. */
  measurement_hash: 'string',
  /** tps | qps | latency | errors */
  metric: 'string',
  /** "TPS", "p95 latency", ... */
  metric_label: 'string',
  /** improved | regressed | within-noise | unknown | not-judged */
  verdict: 'string',
  value: 'double?',
  baseline_mean: 'double?',
  baseline_runs: 'int',
  /** value / baseline_mean. */
  ratio: 'double?',
  /** The prediction interval of the baseline the value was judged against. */
  interval_low: 'double?',
  interval_high: 'double?',
  /** The change point after the baseline, when the run is in a segment too young to judge against. */
  since_run_id: 'string?',
  reason: 'string',
  computed_at: 'string',
} as const;

/**
 * One value of the configuration a cell's writer really ran with, read from the server after prepare
 * (core/workflow/effective-config.ts).
 */
const SERVER_CONFIG = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  instance_id: 'string',
  /**
   * version (server version strings) | requested (a parameter the spec set)
   * | performance (the fixed list) | apply-status (AWS parameter groups)
   */
  kind: 'string',
  /** Variable name; for apply-status the parameter group's name. */
  name: 'string',
  /** As the server (or DescribeDBInstances/DescribeDBClusters) reports it; null when it does not. */
  value: 'string?',
  /** What the experiment asked for; null for values it did not set. */
  requested: 'string?',
  /** Whether the requested value is what runs; null when nothing was requested or it cannot be told. */
  in_effect: 'boolean?',
} as const;

/** Every table's columns, in a stable order (the partition column `dt` is not among them). */
const TABLES = {
  runs: RUNS,
  steps: STEPS,
  intervals: INTERVALS,
  server_metrics: SERVER_METRICS,
  metric_windows: METRIC_WINDOWS,
  verdicts: VERDICTS,
  server_config: SERVER_CONFIG,
} as const satisfies Readonly<Record<string, Readonly<Record<string, ColumnSpec>>>>;

export type LakeTable = keyof typeof TABLES;
export const LAKE_TABLES = Object.keys(TABLES) as readonly LakeTable[];

/** Where a run ran (runs.backend). */
type RunBackend = 'local' | 'aws' | 'import' | 'aws-rehearsal';

/**
 * Where a server metric came from; runner: measured by the
 * client runner itself (client CPU), the same on both backends.
 */
export type MetricSource = 'cloudwatch' | 'pi' | 'local' | 'runner';

/**
 * What a table's row says more narrowly than its column types can: a string column's values, and a
 * column that rows written before it existed lack.
 */
interface Refinements {
  readonly runs: { readonly backend: RunBackend; readonly server_config?: string | null };
  readonly server_metrics: { readonly source: MetricSource };
  readonly metric_windows: { readonly source: MetricSource };
}

type Refined<Row, R> = Omit<Row, keyof R> & R;

/** One row of a lake table, as its writers build it: its columns (refined), and its partition `dt`. */
export type LakeRow<T extends LakeTable> = (T extends keyof Refinements
  ? Refined<RowOf<(typeof TABLES)[T]>, Refinements[T]>
  : RowOf<(typeof TABLES)[T]>) & {
  readonly dt: string;
};

const baseType = (spec: ColumnSpec): ColumnType => spec.replace(/\?$/, '') as ColumnType;
const baseTypes = (columns: Readonly<Record<string, ColumnSpec>>): Readonly<Record<string, ColumnType>> =>
  Object.fromEntries(Object.entries(columns).map(([c, spec]) => [c, baseType(spec)]));

/** Data columns per table with their types, in a stable order (the partition column `dt` is not among them). */
export const LAKE_COLUMNS = Object.fromEntries(
  Object.entries(TABLES).map(([t, columns]) => [t, baseTypes(columns)]),
) as {
  readonly [T in LakeTable]: Readonly<Record<string, ColumnType>>;
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

/** step_summary (generated from core/lake/step-summary.ts): a step of a cell, summed over its clients. */
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
} as const satisfies Readonly<Record<string, ColumnSpec>>;

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
} as const satisfies Readonly<Record<string, ColumnSpec>>;

/**
 * The columns of the views the code reads rows of, by view (test/unit/lake-schema.test.ts checks each
 * view's SQL against them).
 */
export const VIEW_COLUMNS = { step_summary: STEP_SUMMARY, interval_totals: INTERVAL_TOTALS } as const;

/** One row of step_summary. */
export type StepSummaryRow = RowOf<typeof STEP_SUMMARY>;
