/**
 * The step tables on AWS behind one name, JSON Lines during a run and Parquet after it.
 * This is SQL text only. The AWS backend runs it and the tests run it on DuckDB.
 *
 * Athena reads every file under a table's location with that table's SerDe.
 * See Athena User Guide, "Specify a table location in Amazon S3".
 * So the two formats cannot share a folder, as the local lake's do.
 * <table>_json holds the JSON Lines the workflow writes.
 * <table>_parquet holds compacted runs, one registered partition per run.
 * Registration is the commit. A failed UNLOAD leaves orphaned files, per Athena User Guide, "UNLOAD".
 * A partition Athena does not know of is never read.
 * The view <table> unions the Parquet rows with the JSON rows of unregistered runs, so each run counts once.
 * Registered runs come from the "$partitions" metadata table, without reading data.
 * See Athena User Guide, "List partitions for a specific table".
 */
import { LAKE_COLUMNS, PARTITION_COLUMN } from './schema';
import { allViewSql } from './views';

/** The tables written one file per step, which compaction turns into Parquet per run. */
export const STEP_TABLES = ['steps', 'intervals', 'server_metrics', 'metric_windows'] as const;
export type StepTable = (typeof STEP_TABLES)[number];

/** The Parquet tables' second partition key, the run. */
export const RUN_PARTITION_COLUMN = 'run_id';

/** The sort order of a compacted run's rows. A step's rows sit together, intervals in time order. */
export const COMPACTED_ORDER_BY: Readonly<Record<StepTable, string>> = {
  steps: 'cell_id, step_id',
  intervals: 'cell_id, step_id, client_id, t',
  server_metrics: 'cell_id, step_id, instance_id, metric, ts',
  metric_windows: 'cell_id, step_id, instance_id, metric',
};

export const jsonTableName = (table: StepTable): string => `${table}_json`;
export const parquetTableName = (table: StepTable): string => `${table}_parquet`;

/** The key prefix of a table's compacted runs, which is the Parquet table's location. */
export const compactedTablePrefix = (table: StepTable): string => `compacted/${table}/`;

/** Where one run's Parquet files of a table go, the partition UNLOAD writes. */
export const compactedRunPrefix = (table: StepTable, dt: string, runId: string): string =>
  `${compactedTablePrefix(table)}${PARTITION_COLUMN}=${dt}/${RUN_PARTITION_COLUMN}=${runId}/`;

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const quoteText = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * A run id and date that go into S3 keys and partition values as they are.
 * Hive partition folders are not escaped here.
 */
export function checkCompactableRun(run: { readonly runId: string; readonly dt: string }): void {
  if (!/^[A-Za-z0-9._-]+$/.test(run.runId))
    throw new Error(
      `run id "${run.runId}" has characters outside A-Z a-z 0-9 . _ -: it cannot name a Parquet partition`,
    );
  if (!/^\d{4}-\d{2}-\d{2}$/.test(run.dt)) throw new Error(`run date "${run.dt}" is not YYYY-MM-DD`);
}

/**
 * The data columns of a Parquet table, without run_id, which is a partition key there.
 * A partition column may not share a data column's name. See Athena User Guide, "ALTER TABLE ADD PARTITION".
 */
export function parquetDataColumns(table: StepTable): string[] {
  return Object.keys(LAKE_COLUMNS[table]).filter((c) => c !== RUN_PARTITION_COLUMN);
}

/**
 * The view that gives <table> over both formats. DuckDB runs it unchanged in the tests.
 * @internal Exported for its tests.
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

/** Every view Athena needs, in creation order. */
export function athenaViewSql(sharedViewDir?: string): { name: string; sql: string }[] {
  return [...STEP_TABLES.map((name) => ({ name, sql: storageViewSql(name) })), ...allViewSql(sharedViewDir)];
}

/**
 * The SELECT an UNLOAD of one run's rows runs, sorted so a step's rows sit together.
 * The partition columns come last, in partitioned_by's order. See Athena User Guide, "UNLOAD".
 * @internal Exported for its tests.
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
 * One run's rows of a table unloaded to Parquet under the table's compacted location.
 * With partitioned_by the TO location need not be empty. See Athena User Guide, "UNLOAD".
 * The files land in one partition folder per run.
 * Athena engine 3 writes ZSTD Parquet. See Athena User Guide, "Use ZSTD compression levels".
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
 * The commit of a compacted run, its partition registered with the Parquet table.
 * See Athena User Guide, "ALTER TABLE ADD PARTITION".
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

/** How many registered partitions the run has in the Parquet table, 0 or 1. No data is scanned. */
export function runPartitionCountSql(table: StepTable, run: { readonly runId: string; readonly dt: string }): string {
  checkCompactableRun(run);
  return (
    `SELECT count(*) AS partitions FROM ${quoteIdent(`${parquetTableName(table)}$partitions`)} ` +
    `WHERE ${PARTITION_COLUMN} = ${quoteText(run.dt)} AND ${quoteIdent(RUN_PARTITION_COLUMN)} ` +
    `= ${quoteText(run.runId)}`
  );
}
