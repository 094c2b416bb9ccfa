/**
 * The results lake through Athena, with the same tables and view SQL as the local DuckDB lake.
 * So `aurora-bench results --aws` prints what a local run prints.
 */
import type { AthenaClient } from '@aws-sdk/client-athena';
import { runAthenaQuery } from './athena';
import { athenaViewSql } from '../../lake/athena-storage';
import type { LakeRowObject, LakeValue } from '../../lake/duckdb';

export interface AthenaLakeOptions {
  readonly client: AthenaClient;
  readonly workGroup: string;
  readonly database: string;
  /** Poll interval while a query runs. */
  readonly pollMs?: number;
  /**
   * The lake's objects, whose schema version is checked before the first query.
   * A lake a newer aurora-bench wrote is refused, naming its version record.
   */
  readonly store?: { assertReadable(): Promise<void> };
}

/** Athena returns every value as a string, so convert by the column's declared type. */
function convertValue(raw: string | null | undefined, type: string): LakeValue {
  if (raw === undefined || raw === null) return null;
  switch (type.toLowerCase()) {
    case 'tinyint':
    case 'smallint':
    case 'integer':
    case 'bigint':
    case 'double':
    case 'real':
    case 'float':
    case 'decimal':
      return Number(raw);
    case 'boolean':
      return raw === 'true';
    default:
      return raw;
  }
}

export class AthenaLake {
  readonly lakeDir: string;
  private viewsReady = false;

  constructor(private readonly options: AthenaLakeOptions) {
    this.lakeDir = `athena://${options.workGroup}/${options.database}`;
  }

  private run(sql: string) {
    return runAthenaQuery(
      this.options.client,
      { sql, database: this.options.database, workGroup: this.options.workGroup },
      { pollMs: this.options.pollMs ?? 500 },
    );
  }

  /**
   * CREATE OR REPLACE VIEW is idempotent and cheap, so the views are made before the first query.
   * The step tables' views over JSON Lines and Parquet come first, then the shared views that read them.
   */
  async ensureViews(): Promise<void> {
    if (this.viewsReady) return;
    await this.options.store?.assertReadable();
    for (const view of athenaViewSql()) await this.run(view.sql);
    this.viewsReady = true;
  }

  async queryWithColumns(sql: string): Promise<{ columns: string[]; rows: LakeRowObject[] }> {
    await this.ensureViews();
    const result = await this.run(sql);
    return {
      columns: result.columns.map((c) => c.name),
      rows: result.rows.map((r) =>
        Object.fromEntries(result.columns.map((c) => [c.name, convertValue(r[c.name], c.type)])),
      ),
    };
  }

  async query<T = LakeRowObject>(sql: string): Promise<T[]> {
    return (await this.queryWithColumns(sql)).rows as T[];
  }
}
