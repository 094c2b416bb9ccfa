/**
 * The step tables on AWS, JSON Lines while a run is in progress and Parquet once it has ended, behind
 * one name: the statements the AWS side runs through Athena (the lake reader's views, the
 * compaction's UNLOAD and partition registration). Pure SQL text: the AWS backend runs it
 * (core/backends/aws/athena-compaction.ts), the CDK stack defines the tables it names
 * (lib/results-lake.ts), and the tests run the views and the UNLOAD's SELECT on DuckDB.
 *
 * Athena reads every file under a table's location with that table's SerDe ("Athena reads all data
 * stored in the Amazon S3 folder that you specify", Athena User Guide, "Specify a table location in
 * Amazon S3"), so the two formats cannot share a folder as the local lake's do (core/lake/compact.ts):
 *  - <table>_json: the JSON Lines the workflow writes (tables/<table>/dt=.../), dt projected;
 *  - <table>_parquet: compacted runs (compacted/<table>/dt=<dt>/run_id=<run>/), one registered
 *    partition (dt, run_id) per run. Registration is the commit: UNLOAD leaves its files behind when
 *    it fails ("Orphaned data not deleted", Athena User Guide, "UNLOAD"), and a partition Athena does
 *    not know of is never read;
 *  - the view <table>: the Parquet rows, and the JSON Lines rows of runs that have no registered
 *    partition yet, so a run is counted once whether its JSON Lines files are still there or not.
 *    Which runs are registered comes from the "<table>_parquet$partitions" metadata table
 *    (Athena User Guide, "List partitions for a specific table"), not from reading data.
 * The shared views (core/lake/sql) read <table> as they do locally.
 */
import { LAKE_COLUMNS, PARTITION_COLUMN } from './schema';
import { allViewSql } from './views';

/**
 * The tables the workflow writes one file per step of, which compaction turns into one set of Parquet files per run.
 */
export const STEP_TABLES = ['steps', 'intervals', 'server_metrics', 'metric_windows'] as const;
export type StepTable = (typeof STEP_TABLES)[number];

/** The Parquet tables' second partition key: the run. */
export const RUN_PARTITION_COLUMN = 'run_id';

/** The sort order of a compacted run's rows: a step's rows together, intervals in time order. */
export const COMPACTED_ORDER_BY: Readonly<Record<StepTable, string>> = {
  steps: 'cell_id, step_id',
  intervals: 'cell_id, step_id, client_id, t',
  server_metrics: 'cell_id, step_id, instance_id, metric, ts',
  metric_windows: 'cell_id, step_id, instance_id, metric',
};

export const jsonTableName = (table: StepTable): string => `${table}_json`;
export const parquetTableName = (table: StepTable): string => `${table}_parquet`;

/** The key prefix (under the lake prefix) of a table's compacted runs: the Parquet table's location. */
export const compactedTablePrefix = (table: StepTable): string => `compacted/${table}/`;

/** Where one run's Parquet files of a table go: the partition UNLOAD writes for (dt, run_id). */
export const compactedRunPrefix = (table: StepTable, dt: string, runId: string): string =>
  `${compactedTablePrefix(table)}${PARTITION_COLUMN}=${dt}/${RUN_PARTITION_COLUMN}=${runId}/`;

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const quoteText = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * A run id and date that go into S3 keys and partition values
 * as they are (Hive partition folders are not escaped here).
 */
export function checkCompactableRun(run: { readonly runId: string; readonly dt: string }): void {
  if (!/^[A-Za-z0-9._-]+$/.test(run.runId))
    throw new Error(
      `run id "${run.runId}" has characters outside A-Z a-z 0-9 . _ -: it cannot name a Parquet partition`,
    );
  if (!/^\d{4}-\d{2}-\d{2}$/.test(run.dt)) throw new Error(`run date "${run.dt}" is not YYYY-MM-DD`);
}

/**
 * The data columns of a Parquet table: the table's columns without run_id, which is a partition key there (a
 * partition column may not share a name with a data column: Athena User Guide, "ALTER TABLE ADD PARTITION").
 */
export function parquetDataColumns(table: StepTable): string[] {
  return Object.keys(LAKE_COLUMNS[table]).filter((c) => c !== RUN_PARTITION_COLUMN);
}

/**
 * The view that gives <table> over both formats (Athena; DuckDB runs it unchanged in the tests).
 * @internal exported for its tests (a test seam)
 */
export function storageViewSql(table: StepTable): string {
  const select = [...Object.keys(LAKE_COLUMNS[table]), PARTITION_COLUMN].map(quoteIdent).join(', ');
  const partitions = quoteIdent(`${parquetTableName(table)}$partitions`);
  return [
    `CREATE OR REPLACE VIEW ${table} AS`,
    `SELECT ${select} FROM ${parquetTableName(table)}`,
    'UNION ALL',
    `SELECT ${select} FROM ${jsonTableName(table)} WHERE ${quoteIdent(RUN_PARTITION_COLUMN)} NOT IN ` +
      `(SELECT ${quoteIdent(RUN_PARTITION_COLUMN)} FROM ${partitions})`,
  ].join('\n');
}

/**
 * Every view Athena needs, in creation order: the step tables'
 * views over both formats, then the shared views that read them.
 */
export function athenaViewSql(sharedViewDir?: string): { name: string; sql: string }[] {
  return [...STEP_TABLES.map((name) => ({ name, sql: storageViewSql(name) })), ...allViewSql(sharedViewDir)];
}

/**
 * The SELECT an UNLOAD of one run's rows runs: the Parquet table's data columns, then the partition
 * columns last in partitioned_by's order ("make sure that the names of the partitioned columns are
 * last in your list of columns", Athena User Guide, "UNLOAD"), sorted so a step's rows sit together.
 * @internal exported for its tests (a test seam)
 */
export function unloadSelectSql(table: StepTable, run: { readonly runId: string; readonly dt: string }): string {
  checkCompactableRun(run);
  const columns = [...parquetDataColumns(table), PARTITION_COLUMN, RUN_PARTITION_COLUMN].map(quoteIdent).join(', ');
  return (
    `SELECT ${columns} FROM ${jsonTableName(table)} WHERE ${PARTITION_COLUMN} = ${quoteText(run.dt)} ` +
    `AND ${quoteIdent(RUN_PARTITION_COLUMN)} = ${quoteText(run.runId)} ORDER BY ${COMPACTED_ORDER_BY[table]}`
  );
}

/**
 * One run's rows of a table unloaded to Parquet under the table's compacted location. With
 * partitioned_by the TO location need not be empty (it must be without: "The TO destination must
 * specify a location in Amazon S3 that has no data", except "when UNLOAD writes to partitions"),
 * and the files land in <location>dt=<dt>/run_id=<run>/, one partition (at most 100 allowed).
 * Formats and compression: Athena User Guide, "UNLOAD" (format = 'PARQUET') and "Use ZSTD
 * compression levels" (Athena engine version 3 writes ZSTD Parquet; UNLOAD takes compression = 'ZSTD').
 */
export function unloadSql(
  table: StepTable,
  run: { readonly runId: string; readonly dt: string },
  tableLocationUri: string,
): string {
  if (!/^s3:\/\/[^/]+\/(.+\/)?$/.test(tableLocationUri))
    throw new Error(`UNLOAD location "${tableLocationUri}" must be s3://bucket/prefix/ with a trailing slash`);
  return [
    `UNLOAD (${unloadSelectSql(table, run)})`,
    `TO ${quoteText(tableLocationUri)}`,
    `WITH (format = 'PARQUET', compression = 'ZSTD', partitioned_by = ARRAY['${PARTITION_COLUMN}', ` +
      `'${RUN_PARTITION_COLUMN}'])`,
  ].join('\n');
}

/**
 * The commit of a compacted run: its partition made known to the
 * Parquet table (Athena User Guide, "ALTER TABLE ADD PARTITION").
 */
export function addRunPartitionSql(
  table: StepTable,
  run: { readonly runId: string; readonly dt: string },
  runLocationUri: string,
): string {
  checkCompactableRun(run);
  return (
    `ALTER TABLE ${parquetTableName(table)} ADD IF NOT EXISTS PARTITION (${PARTITION_COLUMN} ` +
    `= ${quoteText(run.dt)}, ${RUN_PARTITION_COLUMN} = ${quoteText(run.runId)}) ` +
    `LOCATION ${quoteText(runLocationUri)}`
  );
}

/** How many registered partitions the run has in the Parquet table (0 or 1): metadata only, no data scanned. */
export function runPartitionCountSql(table: StepTable, run: { readonly runId: string; readonly dt: string }): string {
  checkCompactableRun(run);
  return (
    `SELECT count(*) AS partitions FROM ${quoteIdent(`${parquetTableName(table)}$partitions`)} ` +
    `WHERE ${PARTITION_COLUMN} = ${quoteText(run.dt)} AND ${quoteIdent(RUN_PARTITION_COLUMN)} ` +
    `= ${quoteText(run.runId)}`
  );
}
