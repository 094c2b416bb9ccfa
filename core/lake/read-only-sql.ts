/**
 * Which user SQL `results --sql` lets run, decided from DuckDB's own parse and never from the
 * leading keyword. DuckDB's json_serialize_sql serializes SELECT statements only and answers
 * "Only SELECT statements can be serialized to json!" for any other (COPY, EXPLAIN, PRAGMA, SET,
 * ATTACH, CALL, INSTALL, LOAD, CREATE ...), checked on DuckDB 1.5: a text it serializes holds
 * nothing but SELECT statements. WITH ... SELECT, VALUES, FROM ..., DESCRIBE, SHOW and SUMMARIZE
 * parse to SELECTs. EXPLAIN is refused whatever it explains: EXPLAIN ANALYZE runs the statement,
 * a COPY into the lake included, and DuckDB's parse does not let us look inside an EXPLAIN.
 * A SELECT cannot write a file; what it may read is DuckDB's allowed_directories (duckdb.ts).
 */
import { StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { AuroraBenchError } from '../errors';

class ReadOnlyQueryError extends AuroraBenchError {
  override readonly name = 'ReadOnlyQueryError';
}

const ALLOWED =
  'results --sql runs read-only queries over the lake (SELECT, WITH ... SELECT, VALUES, DESCRIBE, SHOW, SUMMARIZE)';
const EXPORT_HINT = 'to write a result to a file, use --export FILE';

/** The answer of json_serialize_sql: the statements, or why it would not serialize them. */
interface SerializedSql {
  readonly error: boolean;
  readonly statements?: readonly unknown[];
}

/** Refuses `sql` unless every statement in it is a SELECT, saying which kind of statement is refused. */
export async function refuseUnlessSelect(connection: DuckDBConnection, sql: string): Promise<void> {
  // A syntax error surfaces here, as DuckDB words it.
  const statements = await connection.extractStatements(sql);
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS tree', [sql]);
  const tree = JSON.parse(reader.getRowsJS()[0]?.[0] as string) as SerializedSql;
  const allSelects = !tree.error && tree.statements?.length === statements.count;
  for (let i = 0; i < statements.count; i++) {
    // Preparing binds and never executes. It names a refused statement's kind, and checks that a
    // SELECT stays one; a SELECT that does not bind (a file outside the lake) fails with DuckDB's words when run.
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
