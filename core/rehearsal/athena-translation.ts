/**
 * An Athena statement the AWS code sends that Trino does not have, as Trino statements with the same
 * effect (the text comes from core/lake/athena-storage.ts; its Athena text is checked with the
 * Athena dialect by test/cdk/athena-sql.test.ts; UNLOAD, the other one, runs on DuckDB:
 * unload-on-duckdb.ts):
 *  - ALTER TABLE <t> ADD IF NOT EXISTS PARTITION (dt = ..., run_id = ...) LOCATION '...' (Athena User
 *    Guide, "ALTER TABLE ADD PARTITION"): Trino's system.register_partition procedure (Hive connector,
 *    "Procedures"), after a look at "<t>$partitions" for the IF NOT EXISTS.
 */
import type { TrinoResult } from './trino-client';

/** A statement, or one decided by the previous statement's result (undefined: skipped). */
type TrinoStep = string | ((previous: TrinoResult | undefined) => string | undefined);

export interface AthenaTranslation {
  readonly statements: readonly TrinoStep[];
  /** What was translated to what, for the rehearsal's output. */
  readonly says: string;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function addPartition(sql: string, schema: string): AthenaTranslation | undefined {
  const m =
    /^ALTER TABLE (\w+) ADD IF NOT EXISTS PARTITION \(dt = '([^']+)', run_id = '([^']+)'\) LOCATION '([^']+)'$/.exec(
      sql,
    );
  if (!m) return undefined;
  const [, table, dt, runId, location] = m as unknown as string[];
  return {
    statements: [
      `SELECT count(*) FROM "${table}$partitions" WHERE dt = ${quote(dt!)} AND run_id = ${quote(runId!)}`,
      (previous) =>
        Number(previous?.rows[0]?.[0] ?? 0) > 0
          ? undefined
          : `CALL system.register_partition(${quote(schema)}, ${quote(table!)}, ARRAY['dt', 'run_id'], ` +
            `ARRAY[${quote(dt!)}, ${quote(runId!)}], ${quote(location!)})`,
    ],
    says:
      `ALTER TABLE ${table} ADD IF NOT EXISTS PARTITION (dt=${dt}, run_id=${runId}) ran as ` +
      'CALL system.register_partition',
  };
}

/** The translation of an Athena statement Trino lacks; undefined for every other statement (it runs as sent). */
export function translateAthenaStatement(sql: string, o: { readonly schema: string }): AthenaTranslation | undefined {
  if (/^\s*ALTER TABLE\b.*\bADD\b.*\bPARTITION\b/is.test(sql)) {
    const t = addPartition(sql, o.schema);
    if (!t) throw new Error(`the rehearsal's Athena cannot translate this ALTER TABLE: ${sql.slice(0, 200)}`);
    return t;
  }
  return undefined;
}
