/**
 * Which user SQL `results --sql` may run, decided from DuckDB's own parse, never the leading keyword.
 * DuckDB's json_serialize_sql serializes SELECT statements only, checked on DuckDB 1.5.
 * So a text it serializes holds nothing but SELECTs.
 * EXPLAIN is refused, since EXPLAIN ANALYZE runs its statement and the parse hides what it explains.
 * A SELECT cannot write a file. What it may read is limited by allowed_directories.
 */
import { StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { AuroraBenchError } from '../errors';

class ReadOnlyQueryError extends AuroraBenchError {
  override readonly name = 'ReadOnlyQueryError';
}

const ALLOWED =
  'results --sql runs read-only queries over the lake (SELECT, WITH ... SELECT, VALUES, DESCRIBE, SHOW, SUMMARIZE)';
const EXPORT_HINT = 'to write a result to a file, use --export FILE';

/** The answer of json_serialize_sql, with the statements or why they would not serialize. */
interface SerializedSql {
  readonly error: boolean;
  readonly statements?: readonly unknown[];
}

/** Refuses `sql` unless every statement is a SELECT, naming the kind refused. */
export async function refuseUnlessSelect(connection: DuckDBConnection, sql: string): Promise<void> {
  // A syntax error surfaces here, as DuckDB words it.
  const statements = await connection.extractStatements(sql);
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS tree', [sql]);
  const tree = JSON.parse(reader.getRowsJS()[0]?.[0] as string) as SerializedSql;
  const allSelects = !tree.error && tree.statements?.length === statements.count;
  for (let i = 0; i < statements.count; i++) {
    // Preparing binds and never executes. It names a refused statement's kind and checks that a SELECT stays one.
    // A SELECT that does not bind fails with DuckDB's words when run.
    const type = await statements
      .prepare(i)
      .then((p) => p.statementType)
      .catch(() => undefined);
    if (type !== undefined && type !== StatementType.SELECT) refuse(kindOf(type));
  }
  if (!allSelects) refuse('a statement DuckDB does not parse as a SELECT');
}

function refuse(kind: string): never {
  const why = kind.startsWith('an EXPLAIN') ? ' (EXPLAIN ANALYZE runs the statement it explains)' : '';
  throw new ReadOnlyQueryError(`${ALLOWED}: ${kind} is refused${why}; ${EXPORT_HINT}`);
}

function kindOf(type: StatementType): string {
  const name = StatementType[type];
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name} statement`;
}
