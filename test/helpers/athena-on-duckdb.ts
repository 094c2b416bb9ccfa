/**
 * The rehearsal's former Athena, DuckDB in Athena's place, kept only for the two moto test files not
 * yet moved to the real engine (lake-version-on-moto, workflow-on-moto); the rehearsal and the other
 * files answer Athena on Trino (core/rehearsal/athena-on-trino.ts).
 *
 * moto's Athena runs no SQL (each StartQueryExecution
 * takes the next result set queued through /moto-api/static/athena/query-results, or none). This
 * emulation answers every query the AWS code sends, before moto sees it, with what Athena would
 * answer: the same SQL run by DuckDB over a copy of the S3 lake's tables/ (the key layout and the
 * view SQL are the same, core/lake), queued in moto; the query then goes on to moto, which returns
 * it through GetQueryExecution and GetQueryResults as Athena does (every value a string, with the
 * column types; AthenaLake converts them back).
 *
 * DDL (the lake reader's CREATE OR REPLACE VIEW) answers no rows: the DuckDB copy has the views
 * already. The copy is refreshed before each query from the objects whose ETag changed.
 *
 * FinishRun's compaction (core/backends/aws/athena-compaction.ts, core/lake/athena-storage.ts) is
 * answered as Athena would: UNLOAD runs its own SELECT on DuckDB over the run's JSON Lines objects
 * and puts the hive-partitioned Parquet files DuckDB writes (dt=<dt>/run_id=<run>/) under its TO
 * location in S3; ALTER TABLE ... ADD PARTITION registers the partition here, and the
 * "<table>_parquet$partitions" count answers from those registrations. The lake copy that queries
 * read is refreshed before each UNLOAD and keeps the JSON Lines rows the compaction then deletes from
 * S3 (it reads no Parquet), so every later answer counts a compacted run once, from those rows.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AthenaClient } from '@aws-sdk/client-athena';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { withLake, type LakeRowObject } from '../../core/lake/duckdb';
import { interceptClient } from '../../core/rehearsal/sdk-intercept';
import { unloadOnDuckDb } from './unload-on-duckdb';

export interface AthenaEmulationOptions {
  /** A client on moto that the emulation does not intercept. */
  readonly s3: S3Client;
  readonly bucket: string;
  /** The lake's key prefix in the bucket ('' or ending in '/'). */
  readonly lakePrefix: string;
  readonly motoEndpoint: string;
  readonly region: string;
  /** Where the lake copy goes. */
  readonly dir: string;
}

/** One moto-api result set: the header row first, as Athena returns a SELECT's first page. */
interface MotoResultSet {
  readonly column_info: readonly { Name: string; Type: string; Label: string }[];
  readonly rows: readonly { Data: readonly { VarCharValue?: string }[] }[];
}

function athenaType(rows: readonly LakeRowObject[], column: string): string {
  const value = rows.map((r) => r[column]).find((v) => v !== null && v !== undefined);
  if (typeof value === 'number') return 'double';
  if (typeof value === 'boolean') return 'boolean';
  return 'varchar';
}

/** A value as Athena returns it: a string, JSON for arrays and rows; no value for NULL (or a column the row lacks). */
const text = (v: LakeRowObject[string] | undefined): string | undefined =>
  v === null || v === undefined ? undefined : typeof v === 'object' ? JSON.stringify(v) : String(v);

function resultSet(rows: readonly LakeRowObject[]): MotoResultSet {
  const columns = rows.length > 0 ? Object.keys(rows[0]!) : [];
  return {
    column_info: columns.map((name) => ({ Name: name, Type: athenaType(rows, name), Label: name })),
    rows:
      rows.length === 0
        ? []
        : [
            { Data: columns.map((c) => ({ VarCharValue: c })) },
            ...rows.map((r) => ({ Data: columns.map((c) => ({ VarCharValue: text(r[c]) })) })),
          ],
  };
}

export class AthenaEmulation {
  private readonly etags = new Map<string, string>();
  /** Every query answered, in order (tests look at them). */
  readonly queries: string[] = [];
  /** Partitions registered by ALTER TABLE <table>_parquet ADD PARTITION: "<table>|<dt>|<run>". */
  private readonly partitions = new Set<string>();

  constructor(private readonly options: AthenaEmulationOptions) {}

  install(athena: AthenaClient): void {
    interceptClient(athena, 'auroraBenchRehearsalAthena', async (command, input, forward) => {
      if (command !== 'StartQueryExecution') return forward();
      const query = input['QueryString'];
      const sql = typeof query === 'string' ? query : '';
      this.queries.push(sql);
      await this.queue(await this.result(sql));
      return forward();
    });
  }

  private async result(sql: string): Promise<MotoResultSet> {
    const partition =
      /^ALTER TABLE (\w+)_parquet ADD IF NOT EXISTS PARTITION \(dt = '([^']+)', run_id = '([^']+)'\)/.exec(sql);
    if (partition) this.partitions.add(partition.slice(1, 4).join('|'));
    if (/^\s*(CREATE|DROP|ALTER)\b/i.test(sql)) return resultSet([]);
    const registered = /FROM "(\w+)_parquet\$partitions" WHERE dt = '([^']+)' AND "run_id" = '([^']+)'/.exec(sql);
    if (registered) return resultSet([{ partitions: this.partitions.has(registered.slice(1, 4).join('|')) ? 1 : 0 }]);
    if (/^UNLOAD \(/.test(sql)) {
      await this.unload(sql);
      return resultSet([]);
    }
    return resultSet(await this.answer(sql));
  }

  /**
   * UNLOAD (SELECT ... FROM <table>_json WHERE dt = ... ) TO 's3://bucket/key/': the
   * SELECT on DuckDB over the partition's JSON Lines objects, the files into S3.
   */
  private async unload(sql: string): Promise<void> {
    // The copy takes the run's JSON Lines rows before the compaction deletes them from S3 (see the header).
    await this.refresh();
    const { s3, bucket, lakePrefix } = this.options;
    await unloadOnDuckDb(sql, { s3, bucket, lakePrefix });
  }

  /** The lake's tables/ copied (what changed since the last copy), then the query on DuckDB. */
  private async answer(sql: string): Promise<LakeRowObject[]> {
    await this.refresh();
    return withLake(this.options.dir, (lake) => lake.query(sql));
  }

  /** The lake's tables/ copied: what changed since the last copy; a key deleted from S3 stays in the copy. */
  private async refresh(): Promise<void> {
    const { s3, bucket, lakePrefix, dir } = this.options;
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: `${lakePrefix}tables/`,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const o of page.Contents ?? []) {
        if (!o.Key || this.etags.get(o.Key) === o.ETag) continue;
        const body = await (
          await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }))
        ).Body!.transformToByteArray();
        const file = join(dir, o.Key.slice(lakePrefix.length));
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, body);
        this.etags.set(o.Key, o.ETag ?? '');
      }
      token = page.NextContinuationToken;
    } while (token);
    mkdirSync(dir, { recursive: true });
  }

  private async queue(result: MotoResultSet): Promise<void> {
    const res = await fetch(`${this.options.motoEndpoint}/moto-api/static/athena/query-results`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ region: this.options.region, results: [result] }),
    });
    if (res.status !== 201) throw new Error(`moto-api athena query-results: ${res.status} ${await res.text()}`);
  }
}
