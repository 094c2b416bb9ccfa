/**
 * A finished run's step tables compacted to Parquet, locally with DuckDB: the workflow writes one
 * JSON Lines file per step and table (tables/<table>/dt=<dt>/<run>__<cell>__<step>.jsonl), which
 * suits a run in progress but makes every later query open thousands of files and parse every
 * byte. Once the run has ended they become one Parquet file per table
 * (tables/<table>/dt=<dt>/<run>.parquet, zstd), ordered by cell, step (and interval), and the JSON
 * Lines files are removed. The lake views read both kinds (core/lake/duckdb.ts tableViewSql), with
 * the same columns and types, so a query cannot tell them apart; a one-run query reads only the
 * row groups whose run_id statistics match, and only the columns it names.
 * The runs and verdicts tables stay JSON Lines: one small file per run. On AWS the same tables are
 * compacted by Athena into their own Parquet tables (core/lake/athena-storage.ts).
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { LAKE_COLUMNS } from './schema';
import { jsonLinesReader, lakeTableFiles } from './duckdb';
import { COMPACTED_ORDER_BY, STEP_TABLES, type StepTable } from './athena-storage';
import { lakeKeys } from './rows';

interface TableCompaction {
  readonly table: StepTable;
  readonly jsonFiles: number;
  readonly jsonBytes: number;
  readonly parquetBytes: number;
  readonly rows: number;
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * Compacts the run's step files of every step table; a table whose run already has a Parquet file
 * gets the new JSON Lines rows added to it. Safe to run again; a crash leaves either the JSON Lines
 * files or the Parquet file in use (the new file is renamed into place before they are removed).
 */
export async function compactRun(
  lakeDir: string,
  run: { readonly runId: string; readonly dt: string },
): Promise<TableCompaction[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const done: TableCompaction[] = [];
  try {
    for (const table of STEP_TABLES) {
      const prefix = basename(lakeKeys.runTablePrefix(table, run.dt, run.runId));
      const partition = join(lakeDir, 'tables', table, `dt=${run.dt}`);
      const json = lakeTableFiles(lakeDir, table).filter(
        (f) => f.startsWith(partition + '/') && basename(f).startsWith(prefix) && !f.endsWith('.parquet'),
      );
      if (json.length === 0) continue;
      const target = join(lakeDir, lakeKeys.compacted(table, run.dt, run.runId));
      const tmp = join(partition, `.${basename(target)}.tmp`);
      const columns = Object.keys(LAKE_COLUMNS[table])
        .map((c) => `"${c}"`)
        .join(', ');
      const sources = [`SELECT ${columns} FROM ${jsonLinesReader(table, json, { hivePartitioning: false })}`];
      if (existsSync(target))
        sources.push(`SELECT ${columns} FROM read_parquet(${sqlString(target)}, hive_partitioning = false)`);
      await connection.run(
        `COPY (SELECT * FROM (${sources.join(' UNION ALL ')}) ORDER BY ${COMPACTED_ORDER_BY[table]}) ` +
          `TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      const rows = Number(
        (
          await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlString(tmp)})`)
        ).getRowObjectsJS()[0]!['n'],
      );
      const jsonBytes = json.reduce((a, f) => a + statSync(f).size, 0);
      renameSync(tmp, target);
      for (const f of json) rmSync(f, { force: true });
      done.push({ table, jsonFiles: json.length, jsonBytes, parquetBytes: statSync(target).size, rows });
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return done;
}

/**
 * A run's rows of one step table as Athena compacted them (UNLOAD with partitioned_by dt and run_id:
 * the Parquet files leave out the partition columns, core/lake/athena-storage.ts unloadSql) written
 * into this lake as its own compaction writes them (tables/<table>/dt=<dt>/<run>.parquet, every
 * column, run_id included): the AWS rehearsal's copy of its lake reads them as a local run's.
 */
export async function importAthenaCompactedRun(
  lakeDir: string,
  table: StepTable,
  run: { readonly runId: string; readonly dt: string },
  parquetFiles: readonly string[],
): Promise<void> {
  if (parquetFiles.length === 0) return;
  const target = join(lakeDir, lakeKeys.compacted(table, run.dt, run.runId));
  mkdirSync(dirname(target), { recursive: true });
  const tmp = join(dirname(target), `.${basename(target)}.tmp`);
  const columns = Object.keys(LAKE_COLUMNS[table])
    .map((c) => (c === 'run_id' ? `${sqlString(run.runId)} AS "run_id"` : `"${c}"`))
    .join(', ');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const files = `[${parquetFiles.map(sqlString).join(', ')}]`;
    await connection.run(
      `COPY (SELECT ${columns} FROM read_parquet(${files}, hive_partitioning = false) ORDER ` +
        `BY ${COMPACTED_ORDER_BY[table]}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd)`,
    );
    renameSync(tmp, target);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
