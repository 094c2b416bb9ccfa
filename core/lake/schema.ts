/**
 * The lake's schema, written once for every reader and writer.
 * Each column has a name, a type and a doc comment, which the row types carry.
 * test/unit/lake-schema.test.ts checks the views' SQL against VIEW_COLUMNS on DuckDB.
 * `dt` is the partition column. Readers take it from the key as a string, like Athena partition projection does.
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

/** A row of columns. Each column's TypeScript type keeps its doc comment. */
type RowOf<C extends Readonly<Record<string, ColumnSpec>>> = { readonly [K in keyof C]: TsOf<C[K]> };

const RUNS = {
  run_id: 'string',
  spec_name: 'string',
  /** The spec as validated, JSON. */
  spec: 'string',
  spec_sha256: 'string',
  /** The plan as JSON, minus script bodies. */
  plan: 'string',
  /**
   * Where the run ran.
   * import marks hand-run sysbench logs brought in by `aurora-bench import`.
   * aws-rehearsal marks the AWS path against local stand-ins, which an AWS history leaves out.
   */
  backend: 'string',
  region: 'string',
  engine_version: 'string',
  /** The server version locally, the Aurora version on AWS. */
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
  /** JSON array of cell ids with their status and error. */
  cells: 'string',
  /** JSON array of plan notes, such as parameters that do not apply. */
  notes: 'string',
  /**
   * JSON object from cell id to the server version and effective values its writer ran with.
   * The server_config table has every row. Runs written before it lack it.
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
  /** Offered rate per client, 0 for unlimited. */
  rate: 'bigint',
  target: 'string',
  endpoint_instance: 'string',
  client_id: 'string',
  client_index: 'int',
  started_at: 'string',
  ended_at: 'string',
  /**
   * ok | overloaded | failed.
   * overloaded is a rate step whose offered rate sysbench could not keep up with.
   * Its tps and qps are the rates achieved before it stopped, and lat_pct_ms is the worst interval's.
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
  /** The latency distribution from the step's histogram. Null without one. */
  lat_p50_ms: 'double?',
  lat_p90_ms: 'double?',
  lat_p95_ms: 'double?',
  lat_p99_ms: 'double?',
  lat_p999_ms: 'double?',
  interval_count: 'int',
  /**
   * The client's CPU busy %. On AWS that is the client instance's CPU.
   * Locally it is sysbench's own CPU, as a share of the cores its threads can use.
   */
  client_cpu_avg_pct: 'double?',
  client_cpu_max_pct: 'double?',
  /** true when the client itself was CPU-bound. Its numbers then say more about it than the server. */
  client_saturated: 'boolean',
  /** Read-after-write checks a workload made, and how many missed the write. Null when not measured. */
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

/** A server metric of one instance in one step. */
const INSTANCE_METRIC_KEY = {
  ...STEP_KEY,
  /** DB instance id, or the client id for client-side metrics. */
  instance_id: 'string',
  /** writer | reader | client */
  role: 'string',
  /** CloudWatch AWS/RDS metric name where one exists. */
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
 * How complete a step's server metrics are, per instance and metric.
 * CloudWatch publishes a minute's datapoint a minute or more after it ends.
 * So a window collected too early misses its last minutes.
 * The report flags such an average rather than take it as the whole step's.
 */
const METRIC_WINDOWS = {
  ...INSTANCE_METRIC_KEY,
  /** A MetricSource. */
  source: 'string',
  /** The window the datapoints were asked for. On AWS these are whole minutes, end exclusive. */
  window_start: 'string',
  window_end: 'string',
  /** Seconds per datapoint. CloudWatch uses 60, PI its period and the local sampler its interval. */
  period_s: 'int',
  expected: 'int',
  received: 'int',
  /** received >= expected. */
  complete: 'boolean',
  collected_at: 'string',
} as const;

/**
 * One verdict of a run, for one step and metric, against the last stable segment of its history.
 * The ComputeVerdicts Task writes it once per finished run, so the lake keeps every night's verdicts.
 */
const VERDICTS = {
  run_id: 'string',
  /** The experiment's name, as in runs.spec_name. */
  experiment: 'string',
  variant: 'string',
  workload: 'string',
  threads: 'int',
  rate: 'bigint',
  target: 'string',
  /** Short hash of the step's measurement definition. A new hash starts a new series. */
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
  /** The change point after the baseline, when the run's segment is too young to judge against. */
  since_run_id: 'string?',
  reason: 'string',
  computed_at: 'string',
} as const;

/** One value of the configuration a cell's writer really ran with, read after prepare. */
const SERVER_CONFIG = {
  run_id: 'string',
  cell_id: 'string',
  variant: 'string',
  instance_id: 'string',
  /** version | requested | performance | apply-status */
  kind: 'string',
  /** Variable name, or the parameter group's name for apply-status. */
  name: 'string',
  /** As the server or the RDS API reports it. Null when it does not. */
  value: 'string?',
  /** What the experiment asked for. Null for values it did not set. */
  requested: 'string?',
  /** Whether the requested value is what runs. Null when nothing was requested or it cannot be told. */
  in_effect: 'boolean?',
} as const;

/** Every table's columns, in a stable order, without the partition column `dt`. */
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

/** Where a run ran. */
type RunBackend = 'local' | 'aws' | 'import' | 'aws-rehearsal';

/** Where a server metric came from. runner means the client runner measured it, on either backend. */
export type MetricSource = 'cloudwatch' | 'pi' | 'local' | 'runner';

/**
 * What a row says more narrowly than its column types can.
 * That is a string column's values, and the columns that older rows lack.
 */
interface Refinements {
  readonly runs: { readonly backend: RunBackend; readonly server_config?: string | null };
  readonly server_metrics: { readonly source: MetricSource };
  readonly metric_windows: { readonly source: MetricSource };
}

type Refined<Row, R> = Omit<Row, keyof R> & R;

/** One row of a lake table as its writers build it, with its partition `dt`. */
export type LakeRow<T extends LakeTable> = (T extends keyof Refinements
  ? Refined<RowOf<(typeof TABLES)[T]>, Refinements[T]>
  : RowOf<(typeof TABLES)[T]>) & {
  readonly dt: string;
};

const baseType = (spec: ColumnSpec): ColumnType => spec.replace(/\?$/, '') as ColumnType;
const baseTypes = (columns: Readonly<Record<string, ColumnSpec>>): Readonly<Record<string, ColumnType>> =>
  Object.fromEntries(Object.entries(columns).map(([c, spec]) => [c, baseType(spec)]));

/** Data columns per table with their types, in a stable order, without `dt`. */
export const LAKE_COLUMNS = Object.fromEntries(
  Object.entries(TABLES).map(([t, columns]) => [t, baseTypes(columns)]),
) as {
  readonly [T in LakeTable]: Readonly<Record<string, ColumnType>>;
};

/** The partition column every table has, a `YYYY-MM-DD` string taken from the key. */
export const PARTITION_COLUMN = 'dt';

export const DUCKDB_TYPES: Readonly<Record<ColumnType, string>> = {
  string: 'VARCHAR',
  int: 'INTEGER',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
};

/** Glue and Athena column types in Hive DDL, for the AWS table definitions. */
export const GLUE_TYPES: Readonly<Record<ColumnType, string>> = {
  string: 'string',
  int: 'int',
  bigint: 'bigint',
  double: 'double',
  boolean: 'boolean',
};

/**
 * The version of the lake's layout and columns that this code writes.
 * A local lake records the last writer's version in LAKE_VERSION_KEY. Without that file it is version 1.
 * A reader never needs a migration. read_json's union_by_name fills a missing column with NULL.
 * A writer brings the lake up to this version first, so a column change that rewrites files goes there.
 *
 * 1 is the layout before versions were recorded.
 * 2 records the version. Its columns are version 1's, so nothing is rewritten.
 */
export const LAKE_SCHEMA_VERSION = 2;

/** The key of the lake's version record. */
export const LAKE_VERSION_KEY = 'lake.json';

export interface LakeVersionRecord {
  readonly schemaVersion: number;
  readonly writtenBy?: string;
}

/** A lake of a schema version this code cannot read or write right. */
export class LakeVersionError extends AuroraBenchError {
  override readonly name = 'LakeVersionError';
}

/** The version a lake's version record gives. An unreadable record is an error naming the file. */
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

/** step_summary, generated from core/lake/step-summary.ts. A step of a cell, summed over its clients. */
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

/** interval_totals. One reporting interval of a step, summed over its clients. */
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

/** The columns of the views the code reads, by view. The schema test checks each view's SQL against them. */
export const VIEW_COLUMNS = { step_summary: STEP_SUMMARY, interval_totals: INTERVAL_TOTALS } as const;

/** One row of step_summary. */
export type StepSummaryRow = RowOf<typeof STEP_SUMMARY>;
