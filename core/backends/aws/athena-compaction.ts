/**
 * A finished run's step tables compacted to Parquet on AWS by Athena, in steps safe to repeat after a crash.
 * Registering the partition is the commit, since from then on the view reads the Parquet rows.
 * Until the JSON Lines objects are deleted, queries over that day still scan them but never count them.
 */
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { AthenaClient } from '@aws-sdk/client-athena';
import { runAthenaQuery, type AthenaRunOptions } from './athena';
import { call } from './aws-errors';
import {
  addRunPartitionSql,
  checkCompactableRun,
  compactedRunPrefix,
  compactedTablePrefix,
  runPartitionCountSql,
  STEP_TABLES,
  unloadSql,
  type StepTable,
} from '../../lake/athena-storage';
import { lakeKeys } from '../../lake/rows';

export interface AthenaCompactionOptions {
  readonly athena: AthenaClient;
  readonly s3: S3Client;
  readonly bucket: string;
  /** The lake's key prefix in the bucket: '' or ending in '/'. */
  readonly lakePrefix: string;
  readonly workGroup: string;
  readonly database: string;
  readonly query?: AthenaRunOptions;
}

export interface AthenaTableCompaction {
  readonly table: StepTable;
  /** JSON Lines objects of the run deleted. */
  readonly jsonObjects: number;
  /** Parquet objects the run's partition holds. 0 when it was registered before this call. */
  readonly parquetObjects: number;
  /** False when an earlier call registered the partition. */
  readonly unloaded: boolean;
}

/** DeleteObjects takes at most 1,000 keys per request. See botocore s3/2006-03-01, DeleteObjects. */
const DELETE_BATCH = 1000;

async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await call(`S3 ListObjectsV2 s3://${bucket}/${prefix}`, () =>
      s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
      ),
    );
    for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

async function deleteKeys(s3: S3Client, bucket: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_BATCH) {
    const batch = keys.slice(i, i + DELETE_BATCH);
    const out = await call(`S3 DeleteObjects s3://${bucket}/ (${batch.length} keys)`, () =>
      s3.send(
        new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      ),
    );
    const failed = out.Errors ?? [];
    if (failed.length > 0)
      throw new Error(
        (
          `S3 DeleteObjects s3://${bucket}/: ${failed.length} key(s) not deleted, ` +
          `first ${failed[0]!.Key ?? '?'}: ${failed[0]!.Code ?? ''} ${failed[0]!.Message ?? ''}`
        ).trim(),
      );
  }
}

export async function compactRunOnAthena(
  options: AthenaCompactionOptions,
  run: { readonly runId: string; readonly dt: string },
): Promise<AthenaTableCompaction[]> {
  checkCompactableRun(run);
  const { athena, s3, bucket, lakePrefix } = options;
  const query = (sql: string) =>
    runAthenaQuery(athena, { sql, database: options.database, workGroup: options.workGroup }, options.query ?? {});
  const uri = (key: string) => `s3://${bucket}/${lakePrefix}${key}`;
  const compactTable = async (table: (typeof STEP_TABLES)[number]): Promise<AthenaTableCompaction | undefined> => {
    const jsonKeys = await listKeys(s3, bucket, lakePrefix + lakeKeys.runTablePrefix(table, run.dt, run.runId));
    if (jsonKeys.length === 0) return undefined;
    const registered = Number((await query(runPartitionCountSql(table, run))).rows[0]?.['partitions'] ?? '0') > 0;
    let parquetObjects = 0;
    if (!registered) {
      const runPrefix = lakePrefix + compactedRunPrefix(table, run.dt, run.runId);
      await deleteKeys(s3, bucket, await listKeys(s3, bucket, runPrefix));
      await query(unloadSql(table, run, uri(compactedTablePrefix(table))));
      parquetObjects = (await listKeys(s3, bucket, runPrefix)).length;
      // Rows in JSON Lines and no file written: registering the partition would hide them all.
      if (parquetObjects === 0)
        throw new Error(
          `Athena UNLOAD of ${table} for run ${run.runId} wrote nothing ` +
            `under ${uri(compactedRunPrefix(table, run.dt, run.runId))}; its JSON Lines objects are kept`,
        );
      await query(addRunPartitionSql(table, run, uri(compactedRunPrefix(table, run.dt, run.runId))));
    }
    await deleteKeys(s3, bucket, jsonKeys);
    return { table, jsonObjects: jsonKeys.length, parquetObjects, unloaded: !registered };
  };
  // Each table is its own partition and query, so they run at once.
  // Four active queries are far below Athena's quotas. See the Athena User Guide, "Service Quotas".
  // Every table settles before a failure is thrown, so none is left half done.
  const settled = await Promise.allSettled(STEP_TABLES.map(compactTable));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.flatMap((s) => (s.status === 'fulfilled' && s.value ? [s.value] : []));
}
