/**
 * Runs a lake query on Athena, as DuckDB runs the report queries locally.
 * See the Athena API Reference for the states, the request token and the result pages.
 */
import { createHash } from 'node:crypto';
import {
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
  type AthenaClient,
  type ColumnInfo,
} from '@aws-sdk/client-athena';
import { call } from './aws-errors';
import { AuroraBenchError } from '../../errors';

export interface AthenaQuery {
  readonly sql: string;
  readonly database: string;
  readonly workGroup?: string;
  /** s3://bucket/prefix/ for results when the work group does not enforce its own. */
  readonly outputLocation?: string;
  /** Same token, same execution: pass one to make a retried call idempotent. */
  readonly requestToken?: string;
}

export interface AthenaResult {
  readonly queryExecutionId: string;
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly rows: readonly Record<string, string | null>[];
}

class AthenaQueryError extends AuroraBenchError {
  override readonly name = 'AthenaQueryError';
}

export interface AthenaRunOptions {
  readonly pollMs?: number;
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** @internal exported for its tests */
export function athenaRequestToken(...parts: string[]): string {
  // 64 hex characters. Athena takes 32 to 128.
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}

export async function runAthenaQuery(
  athena: AthenaClient,
  query: AthenaQuery,
  options: AthenaRunOptions = {},
): Promise<AthenaResult> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = options.now ?? (() => Date.now());
  const started = await call('Athena StartQueryExecution', () =>
    athena.send(
      new StartQueryExecutionCommand({
        QueryString: query.sql,
        QueryExecutionContext: { Database: query.database },
        ...(query.workGroup ? { WorkGroup: query.workGroup } : {}),
        ...(query.outputLocation ? { ResultConfiguration: { OutputLocation: query.outputLocation } } : {}),
        ...(query.requestToken ? { ClientRequestToken: query.requestToken } : {}),
      }),
    ),
  );
  const id = started.QueryExecutionId;
  if (!id) throw new AthenaQueryError('Athena StartQueryExecution returned no QueryExecutionId');

  const deadline = now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    const out = await call(`Athena GetQueryExecution ${id}`, () =>
      athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id })),
    );
    const state = out.QueryExecution?.Status?.State ?? 'UNKNOWN';
    if (state === 'SUCCEEDED') break;
    if (FINAL.has(state))
      throw new AthenaQueryError(
        `Athena query ${id} ${state}: ${out.QueryExecution?.Status?.StateChangeReason ?? 'no reason given'}`,
      );
    if (now() > deadline)
      throw new AthenaQueryError(
        `Athena query ${id} still ${state} after ${Math.round((options.timeoutMs ?? 300_000) / 1000)} s`,
      );
    await sleep(options.pollMs ?? 1000);
  }

  let columns: ColumnInfo[] = [];
  const rows: Record<string, string | null>[] = [];
  let token: string | undefined;
  let firstPage = true;
  do {
    const page = await call(`Athena GetQueryResults ${id}`, () =>
      athena.send(
        new GetQueryResultsCommand({ QueryExecutionId: id, MaxResults: 1000, ...(token ? { NextToken: token } : {}) }),
      ),
    );
    // For a SELECT, the first row of the first page holds the column labels.
    if (firstPage) columns = page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
    const names = columns.map((c, i) => c.Name ?? c.Label ?? `_col${i}`);
    let pageRows = page.ResultSet?.Rows ?? [];
    if (
      firstPage &&
      pageRows.length > 0 &&
      names.length > 0 &&
      pageRows[0]!.Data?.every((d, i) => d.VarCharValue === names[i])
    ) {
      pageRows = pageRows.slice(1);
    }
    for (const r of pageRows)
      rows.push(Object.fromEntries(names.map((n, i) => [n, r.Data?.[i]?.VarCharValue ?? null])));
    token = page.NextToken;
    firstPage = false;
  } while (token);
  return {
    queryExecutionId: id,
    columns: columns.map((c, i) => ({ name: c.Name ?? `_col${i}`, type: c.Type ?? 'varchar' })),
    rows,
  };
}
