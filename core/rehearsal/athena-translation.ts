/**
 * Athena statements the AWS code sends that Trino lacks, as Trino statements with the same effect.
 * test/cdk/athena-sql.test.ts checks their Athena text with the Athena dialect.
 *  - ALTER TABLE ADD PARTITION becomes Trino's system.register_partition procedure.
 *    See Athena User Guide, "ALTER TABLE ADD PARTITION", and the Hive connector's "Procedures".
 *    A look at "<t>$partitions" first gives the IF NOT EXISTS.
 *  - UNLOAD becomes a Parquet CREATE TABLE AS at the partition's path, then DROP TABLE.
 *    See Athena User Guide, "UNLOAD", and the Hive connector's "Table properties".
 *    DROP TABLE leaves an external table's files, so nothing stays registered, as after UNLOAD.
 *    See the Hive connector's "DROP TABLE".
 *    ZSTD is the catalog's hive.compression-codec.
 */
import { randomBytes } from 'node:crypto';
import type { TrinoResult } from './trino-client';

/** A statement, or one decided by the previous statement's result. Undefined means skipped. */
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

const UNLOAD = new RegExp(
  /^UNLOAD \(SELECT (.+) FROM (\w+) (WHERE dt = '([^']+)' AND "run_id" = '([^']+)' ORDER BY [^)]+)\)\n/.source +
    /TO '(s3:\/\/[^']+\/)'\n/.source,
  's',
);
const UNLOAD_WITH = /\nWITH \(format = 'PARQUET', compression = 'ZSTD', partitioned_by = ARRAY\['dt', 'run_id'\]\)$/;

function unload(sql: string): AthenaTranslation | undefined {
  const m = UNLOAD.exec(sql);
  if (!m || !UNLOAD_WITH.test(sql)) return undefined;
  const [, columns, from, where, dt, runId, location] = m as unknown as string[];
  // The partition columns come last. Their values are the path's, not the files'.
  const data = columns!.split(', ');
  if (data.slice(-2).join(', ') !== '"dt", "run_id"') return undefined;
  const partition = `${location}dt=${dt}/run_id=${runId}/`;
  const scratch = `"rehearsal_unload_${randomBytes(6).toString('hex')}"`;
  return {
    statements: [
      `CREATE TABLE ${scratch} WITH (format = 'PARQUET', external_location = ${quote(partition)}) AS ` +
        `SELECT ${data.slice(0, -2).join(', ')} FROM ${from} ${where}`,
      `DROP TABLE ${scratch}`,
    ],
    says:
      `UNLOAD of ${from} (dt=${dt}, run_id=${runId}) ran as CREATE TABLE ... WITH (format = 'PARQUET', ` +
      `external_location = '${partition}') AS SELECT ..., then DROP TABLE (the files stay)`,
  };
}

/** The translation of an Athena statement Trino lacks. Other statements run as sent. */
export function translateAthenaStatement(sql: string, o: { readonly schema: string }): AthenaTranslation | undefined {
  if (/^\s*ALTER TABLE\b.*\bADD\b.*\bPARTITION\b/is.test(sql)) {
    const t = addPartition(sql, o.schema);
    if (!t) throw new Error(`the rehearsal's Athena cannot translate this ALTER TABLE: ${sql.slice(0, 200)}`);
    return t;
  }
  if (/^\s*UNLOAD\b/i.test(sql)) {
    const t = unload(sql);
    if (!t) throw new Error(`the rehearsal's Athena cannot translate this UNLOAD: ${sql.slice(0, 200)}`);
    return t;
  }
  return undefined;
}
