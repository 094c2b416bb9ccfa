/**
 * The two statements the AWS code sends Athena that Trino does not have, as Trino statements with the
 * same effect (the texts come from core/lake/athena-storage.ts; their Athena text is checked with the
 * Athena dialect by test/cdk/athena-sql.test.ts):
 *  - UNLOAD (SELECT ... ) TO '<table location>' WITH (format = 'PARQUET', compression = 'ZSTD',
 *    partitioned_by = ARRAY['dt', 'run_id']) writes the SELECT's rows as Parquet files under
 *    <location>dt=<dt>/run_id=<run>/ and registers nothing (Athena User Guide, "UNLOAD"). Trino: a
 *    table created over exactly that folder (CREATE TABLE ... WITH (external_location) AS SELECT
 *    the data columns), ZSTD by the catalog's compression_codec, then dropped: an external table's
 *    files stay when it is dropped (Trino documentation, "Hive connector", external_location).
 *  - ALTER TABLE <t> ADD IF NOT EXISTS PARTITION (dt = ..., run_id = ...) LOCATION '...' (Athena User
 *    Guide, "ALTER TABLE ADD PARTITION"): Trino's system.register_partition procedure (Hive connector,
 *    "Procedures"), after a look at "<t>$partitions" for the IF NOT EXISTS.
 */
import type { TrinoResult } from './trino-client';

/** A statement, or one decided by the previous statement's result (undefined: skipped). */
export type TrinoStep = string | ((previous: TrinoResult | undefined) => string | undefined);

export interface AthenaTranslation {
  readonly statements: readonly TrinoStep[];
  readonly compressionCodec?: string;
  /** What was translated to what, for the rehearsal's output. */
  readonly says: string;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function unload(sql: string): AthenaTranslation | undefined {
  const m =
    /^UNLOAD \((SELECT (.+?) FROM (\w+) WHERE dt = '([^']+)' AND "run_id" = '([^']+)'.*)\)\nTO '(s3:\/\/[^']+\/)'\nWITH \((.*)\)$/s.exec(
      sql,
    );
  if (!m) return undefined;
  const [, select, columnList, table, dt, runId, location, withText] = m as unknown as string[];
  const compression = /compression = '(\w+)'/.exec(withText!)?.[1];
  const partitionedBy = /partitioned_by = ARRAY\[([^\]]*)\]/.exec(withText!)?.[1];
  if (!/format = 'PARQUET'/.test(withText!) || partitionedBy?.replace(/\s/g, '') !== "'dt','run_id'")
    throw new Error(`the rehearsal's Athena cannot translate this UNLOAD (its WITH): ${sql.split('\n')[0]}`);
  const dataColumns = columnList!
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '"dt"' && c !== '"run_id"');
  const folder = `${location}dt=${dt}/run_id=${runId}/`;
  const staging = `${table}_unload_${runId!.replace(/\W/g, '_')}`.toLowerCase();
  return {
    statements: [
      `DROP TABLE IF EXISTS "${staging}"`,
      `CREATE TABLE "${staging}" WITH (format = 'PARQUET', external_location = ${quote(folder)}) AS ` +
        `SELECT ${dataColumns.join(', ')} FROM (${select})`,
      `DROP TABLE "${staging}"`,
    ],
    ...(compression ? { compressionCodec: compression } : {}),
    says: `UNLOAD ... TO ${location} (partition dt=${dt}/run_id=${runId}) ran as CREATE TABLE ... WITH (external_location = ${folder}) AS SELECT, then DROP TABLE`,
  };
}

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
    says: `ALTER TABLE ${table} ADD IF NOT EXISTS PARTITION (dt=${dt}, run_id=${runId}) ran as CALL system.register_partition`,
  };
}

/** The translation of an Athena statement Trino lacks; undefined for every other statement (it runs as sent). */
export function translateAthenaStatement(sql: string, o: { readonly schema: string }): AthenaTranslation | undefined {
  if (/^\s*UNLOAD\b/i.test(sql)) {
    const t = unload(sql);
    if (!t) throw new Error(`the rehearsal's Athena cannot translate this UNLOAD: ${sql.split('\n')[0]}`);
    return t;
  }
  if (/^\s*ALTER TABLE\b.*\bADD\b.*\bPARTITION\b/is.test(sql)) {
    const t = addPartition(sql, o.schema);
    if (!t) throw new Error(`the rehearsal's Athena cannot translate this ALTER TABLE: ${sql.slice(0, 200)}`);
    return t;
  }
  return undefined;
}
