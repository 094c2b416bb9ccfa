/**
 * The results lake through Athena: the same tables and the same view SQL as the local DuckDB
 * lake (core/lake/sql), so `aurora-bench results --aws` prints what a local run prints.
 */
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  type ColumnInfo,
  type Row,
} from '@aws-sdk/client-athena';
import { allViewSql } from './views';
import type { LakeRowObject, LakeValue } from './duckdb';

export class AthenaQueryError extends Error {
  override readonly name = 'AthenaQueryError';
}

export interface AthenaLakeOptions {
  readonly client: AthenaClient;
  readonly workGroup: string;
  readonly database: string;
  /** Poll interval while a query runs. */
  readonly pollMs?: number;
}

/** Athena returns every value as a string: convert by the column's declared type. */
export function convertValue(raw: string | undefined, column: ColumnInfo): LakeValue {
  if (raw === undefined) return null;
  switch ((column.Type ?? 'varchar').toLowerCase()) {
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

  private async execute(sql: string): Promise<{ columns: ColumnInfo[]; rows: Row[] }> {
    const { client, workGroup, database } = this.options;
    const started = await client.send(new StartQueryExecutionCommand({ QueryString: sql, WorkGroup: workGroup, QueryExecutionContext: { Database: database } }));
    const id = started.QueryExecutionId!;
    for (;;) {
      const state = await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      const status = state.QueryExecution?.Status;
      if (status?.State === 'SUCCEEDED') break;
      if (status?.State === 'FAILED' || status?.State === 'CANCELLED') {
        throw new AthenaQueryError(`Athena query ${id} ${status.State}: ${status.StateChangeReason ?? 'no reason given'}\n${sql}`);
      }
      await new Promise((r) => setTimeout(r, this.options.pollMs ?? 500));
    }
    const rows: Row[] = [];
    let columns: ColumnInfo[] = [];
    let nextToken: string | undefined;
    do {
      const page = await client.send(new GetQueryResultsCommand({ QueryExecutionId: id, ...(nextToken ? { NextToken: nextToken } : {}) }));
      columns = page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? columns;
      rows.push(...(page.ResultSet?.Rows ?? []));
      nextToken = page.NextToken;
    } while (nextToken);
    return { columns, rows };
  }

  /** CREATE OR REPLACE VIEW is idempotent and cheap: run the shared views before the first query. */
  async ensureViews(): Promise<void> {
    if (this.viewsReady) return;
    for (const view of allViewSql()) await this.execute(view.sql);
    this.viewsReady = true;
  }

  async queryWithColumns(sql: string): Promise<{ columns: string[]; rows: LakeRowObject[] }> {
    await this.ensureViews();
    const { columns, rows } = await this.execute(sql);
    const names = columns.map((c) => c.Name ?? '');
    // For a SELECT, Athena's first row repeats the column names.
    const body = rows.length > 0 && rows[0]!.Data?.every((d, i) => d.VarCharValue === names[i]) ? rows.slice(1) : rows;
    return {
      columns: names,
      rows: body.map((r) => Object.fromEntries(columns.map((c, i) => [c.Name ?? String(i), convertValue(r.Data?.[i]?.VarCharValue, c)]))),
    };
  }

  async query<T = LakeRowObject>(sql: string): Promise<T[]> {
    return (await this.queryWithColumns(sql)).rows as T[];
  }
}
