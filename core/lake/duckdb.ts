/**
 * The local results lake through DuckDB (in memory): the four lake tables as views over the JSON
 * Lines files under <lake>/tables/<table>/dt=YYYY-MM-DD/, then the shared views of core/lake/sql.
 * What Athena is on AWS, this is locally, with the same SQL.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DUCKDB_TYPES, LAKE_COLUMNS, PARTITION_COLUMN } from './columns';
import { LAKE_TABLES, type LakeTable } from './rows';
import { allViewSql } from './views';
import { AuroraBenchError } from '../errors';

export type LakeValue = string | number | boolean | null | LakeValue[] | { [key: string]: LakeValue };
export type LakeRowObject = Record<string, LakeValue>;

/** The data files of one table: tables/<table>/dt=*\/*.jsonl (gzip too), sorted for stable order. */
export function lakeTableFiles(lakeDir: string, table: LakeTable): string[] {
  const tableDir = join(lakeDir, 'tables', table);
  if (!existsSync(tableDir)) return [];
  const files: string[] = [];
  for (const part of readdirSync(tableDir, { withFileTypes: true })) {
    if (!part.isDirectory() || !/^dt=\d{4}-\d{2}-\d{2}$/.test(part.name)) continue;
    for (const f of readdirSync(join(tableDir, part.name), { withFileTypes: true })) {
      if (f.isFile() && /\.jsonl(\.gz)?$/.test(f.name)) files.push(join(tableDir, part.name, f.name));
    }
  }
  return files.sort();
}

const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** The statement that makes one lake table a view (an empty, typed one when it has no file yet). */
export function tableViewSql(table: LakeTable, files: readonly string[]): string {
  const columns = Object.entries(LAKE_COLUMNS[table]);
  if (files.length === 0) {
    const select = [...columns.map(([c, t]) => `CAST(NULL AS ${DUCKDB_TYPES[t]}) AS ${ident(c)}`), `CAST(NULL AS VARCHAR) AS ${PARTITION_COLUMN}`];
    return `CREATE OR REPLACE VIEW ${table} AS SELECT ${select.join(', ')} WHERE false`;
  }
  const columnSpec = `{${columns.map(([c, t]) => `${sqlString(c)}: ${sqlString(DUCKDB_TYPES[t])}`).join(', ')}}`;
  // dt comes from the key (hive partition), as a string like Athena's partition projection gives it;
  // the copy inside each row is not read, so a row can never disagree with its partition.
  const reader =
    `read_json([${files.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${columnSpec}, ` +
    `hive_partitioning = true, hive_types = {'${PARTITION_COLUMN}': 'VARCHAR'}, union_by_name = true)`;
  return `CREATE OR REPLACE VIEW ${table} AS SELECT ${columns.map(([c]) => ident(c)).join(', ')}, ${PARTITION_COLUMN} FROM ${reader}`;
}

function toPlain(value: unknown): LakeValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toPlain);
  if (typeof value === 'object') {
    const out: Record<string, LakeValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toPlain(v);
    return out;
  }
  return String(value);
}

/** What the results and report code needs from a lake: DuckDB locally, Athena on AWS. */
export interface LakeReader {
  /** Where the lake is, for messages. */
  readonly lakeDir: string;
  query<T extends object = LakeRowObject>(sql: string): Promise<T[]>;
}

export class LakeQueryError extends AuroraBenchError {
  override readonly name = 'LakeQueryError';
}

/** An open lake: `query` returns plain row objects (BIGINT/HUGEINT/DECIMAL as numbers). */
export class LocalLake implements LakeReader {
  private constructor(
    readonly lakeDir: string,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(lakeDir: string): Promise<LocalLake> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const lake = new LocalLake(lakeDir, instance, connection);
    try {
      for (const table of LAKE_TABLES) await connection.run(tableViewSql(table, lakeTableFiles(lakeDir, table)));
      for (const view of allViewSql()) await connection.run(view.sql);
    } catch (e) {
      lake.close();
      throw new LakeQueryError(`cannot open the results lake at ${lakeDir}: ${(e as Error).message}`);
    }
    return lake;
  }

  async query<T extends object = LakeRowObject>(sql: string): Promise<T[]> {
    let rows: Record<string, unknown>[];
    try {
      const reader = await this.connection.runAndReadAll(sql);
      rows = reader.getRowObjectsJS();
    } catch (e) {
      throw new LakeQueryError(`query failed: ${(e as Error).message}\n  SQL: ${sql.trim().split('\n').join('\n       ')}`);
    }
    return rows.map((r) => toPlain(r) as T);
  }

  /** Column names of a query's result, in order (for tables of an arbitrary --sql). */
  async queryWithColumns(sql: string): Promise<{ columns: string[]; rows: LakeRowObject[] }> {
    let reader;
    try {
      reader = await this.connection.runAndReadAll(sql);
    } catch (e) {
      throw new LakeQueryError(`query failed: ${(e as Error).message}`);
    }
    return { columns: reader.columnNames(), rows: (reader.getRowObjectsJS() as Record<string, unknown>[]).map((r) => toPlain(r) as LakeRowObject) };
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** Open the lake, run `fn`, always close. */
export async function withLake<T>(lakeDir: string, fn: (lake: LocalLake) => Promise<T>): Promise<T> {
  const lake = await LocalLake.open(lakeDir);
  try {
    return await fn(lake);
  } finally {
    lake.close();
  }
}
