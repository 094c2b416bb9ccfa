/**
 * A finished run's step tables compacted to Parquet, locally with DuckDB.
 * One JSON Lines file per step suits a run in progress.
 * Later queries would open thousands of files and parse every byte.
 * So once the run has ended, each table becomes one zstd Parquet file ordered by cell and step.
 * The views read both kinds with the same columns, so a query cannot tell them apart.
 * The runs and verdicts tables stay JSON Lines, one small file per run.
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
 * Compacts the run's step files of every step table.
 * A table whose run already has a Parquet file gets the new rows added to it.
 * Safe to run again. The new file is renamed into place before the old ones are removed.
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
 * A run's rows of one step table as Athena compacted them, written as this lake's own compaction writes them.
 * Athena's files leave out the partition columns, so they are added back here.
 * The AWS rehearsal's lake copy then reads them as a local run's.
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
