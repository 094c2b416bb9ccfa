/**
 * Athena's UNLOAD on DuckDB for the moto tests still answered by DuckDB (athena-on-duckdb.ts): its
 * SELECT over the partition's JSON Lines objects in moto's S3, the hive-partitioned Parquet files DuckDB
 * writes (dt=<dt>/run_id=<run>/) put under its TO location, nothing registered (Athena User Guide,
 * "UNLOAD"). The rehearsal runs UNLOAD on Trino (core/rehearsal/athena-translation.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { StepTable } from '../../core/lake/athena-storage';
import { jsonLinesReader } from '../../core/lake/duckdb';

export interface UnloadTarget {
  readonly s3: S3Client;
  readonly bucket: string;
  /** The lake's key prefix in the bucket ('' or ending in '/'). */
  readonly lakePrefix: string;
}

/** The parts of UNLOAD (SELECT ... FROM <table>_json WHERE dt = ... ) TO 's3://bucket/key/', or undefined. */
function parseUnload(sql: string): { select: string; table: StepTable; dt: string; target: string } | undefined {
  const m = /^UNLOAD \((SELECT .* FROM (\w+)_json WHERE dt = '([^']+)' .*)\)\nTO 's3:\/\/[^/]+\/([^']*)'/s.exec(sql);
  if (!m) return undefined;
  const [, select, table, dt, target] = m as unknown as [string, string, StepTable, string, string];
  return { select, table, dt, target };
}

export async function unloadOnDuckDb(sql: string, t: UnloadTarget): Promise<void> {
  const parsed = parseUnload(sql);
  if (!parsed) throw new Error(`the rehearsal's Athena cannot run this UNLOAD: ${sql.split('\n')[0]}`);
  const { select, table, dt, target } = parsed;
  const work = mkdtempSync(join(tmpdir(), 'ab-unload-'));
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    const partition = join(work, 'tables', table, `dt=${dt}`);
    mkdirSync(partition, { recursive: true });
    const files: string[] = [];
    let token: string | undefined;
    do {
      const page = await t.s3.send(
        new ListObjectsV2Command({
          Bucket: t.bucket,
          Prefix: `${t.lakePrefix}tables/${table}/dt=${dt}/`,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const o of page.Contents ?? []) {
        const file = join(partition, o.Key!.slice(o.Key!.lastIndexOf('/') + 1));
        const body = await t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: o.Key! }));
        writeFileSync(file, await body.Body!.transformToByteArray());
        files.push(file);
      }
      token = page.NextContinuationToken;
    } while (token);
    if (files.length === 0) return;
    await db.run(
      `CREATE VIEW ${table}_json AS SELECT * FROM ${jsonLinesReader(table, files, { hivePartitioning: true })}`,
    );
    const out = join(work, 'out');
    mkdirSync(out);
    await db.run(`COPY (${select}) TO '${out}' (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (dt, run_id))`);
    for (const d of readdirSync(out, { recursive: true, withFileTypes: true })) {
      if (!d.isFile()) continue;
      const file = join(d.parentPath, d.name);
      await t.s3.send(
        new PutObjectCommand({ Bucket: t.bucket, Key: `${target}${relative(out, file)}`, Body: readFileSync(file) }),
      );
    }
  } finally {
    db.closeSync();
    instance.closeSync();
    rmSync(work, { recursive: true, force: true });
  }
}
