/**
 * Copies the run's lake from moto's S3, which goes with moto, into a local lake.
 * Its runs rows are marked a rehearsal's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { StepTable } from '../lake/athena-storage';
import { importAthenaCompactedRun } from '../lake/compact';
import type { AwsBackendConfig } from '../backends/aws/config';
import { LocalLakeStore } from '../backends/local/local-lake';
import { lakeKeys } from '../lake/rows';
import type { RunContext } from '../backend';
import { STATE } from '../workflow/state-names';
import type { ExecutionEvent } from '../workflow/local-runner';

/** A runs-table object with its rows marked as a rehearsal's. */
function markedRehearsal(key: string, body: Uint8Array): Uint8Array {
  if (!/^tables\/runs\//.test(key)) return body;
  const lines = Buffer.from(body).toString('utf8').split('\n');
  const marked = lines.map((l) =>
    l.trim() === '' ? l : JSON.stringify({ ...(JSON.parse(l) as object), backend: 'aws-rehearsal' }),
  );
  return Buffer.from(marked.join('\n'), 'utf8');
}

/**
 * Copies the run's row as PlanRun wrote it into the local lake.
 * If this process is killed, the lake has the run and `cleanup` records how it ended.
 * copyLake later replaces it with the final row.
 */
async function copyRunRow(s3: S3Client, config: AwsBackendConfig, lakeDir: string, output: unknown): Promise<void> {
  const run = (output as { run?: RunContext } | undefined)?.run;
  if (run === undefined) return;
  const key = lakeKeys.run(run.dt, run.runId);
  const lake = new LocalLakeStore(lakeDir);
  await lake.assertWritable();
  const object = await s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: `${config.lakePrefix}${key}` }));
  await lake.put(key, markedRehearsal(key, await object.Body!.transformToByteArray()));
}

/** The early copy of the run's row, when the run has a lake. */
export class RunRowCopy {
  private copied: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly s3: S3Client,
    private readonly config: AwsBackendConfig,
    private readonly lakeDir: string | undefined,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts the copy when PlanRun exits. A failure is a warning, since the final copy replaces the row. */
  saw(ev: ExecutionEvent): void {
    const lakeDir = this.lakeDir;
    if (lakeDir !== undefined && ev.type === 'StateExited' && ev.state?.name === STATE.PlanRun)
      this.copied = copyRunRow(this.s3, this.config, lakeDir, ev.state.output).catch((e: unknown) =>
        this.log(`warning: the run's row was not copied into ${lakeDir} yet: ${(e as Error).message}`),
      );
  }

  done(): Promise<unknown> {
    return this.copied;
  }
}

/** The run's lake objects from moto's S3 into the local lake `dir`. `scratch` is the rehearsal's folder. */
export async function copyLake(s3: S3Client, config: AwsBackendConfig, dir: string, scratch: string): Promise<number> {
  const lake = new LocalLakeStore(dir);
  // A lake a newer aurora-bench wrote is refused before any row is copied.
  // An older one is brought to this version.
  await lake.assertWritable();
  let token: string | undefined;
  let count = 0;
  const athenaParquet = new Map<string, { table: StepTable; dt: string; runId: string; files: string[] }>();
  // Inside the rehearsal's folder, so nothing is left outside it when the process is killed.
  const parquetDir = mkdtempSync(join(scratch, 'parquet-'));
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: config.bucket,
        Prefix: config.lakePrefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const o of page.Contents ?? []) {
      const key = o.Key!.slice(config.lakePrefix.length);
      // FinishRun's compaction moved the run's step tables to Athena's Parquet tables.
      const compacted = /^compacted\/([a-z_]+)\/dt=([^/]+)\/run_id=([^/]+)\/[^/]+$/.exec(key);
      if (!/^tables\//.test(key) && !compacted) continue;
      const body = await (
        await s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: o.Key! }))
      ).Body!.transformToByteArray();
      if (compacted) {
        const [, table, dt, runId] = compacted as unknown as [string, StepTable, string, string];
        const id = `${table}\n${dt}\n${runId}`;
        const group = athenaParquet.get(id) ?? { table, dt, runId, files: [] };
        const file = join(parquetDir, `${athenaParquet.size}-${group.files.length}.parquet`);
        writeFileSync(file, body);
        athenaParquet.set(id, { ...group, files: [...group.files, file] });
      } else {
        await lake.put(key, markedRehearsal(key, body));
      }
      count++;
    }
    token = page.NextContinuationToken;
  } while (token);
  try {
    for (const g of athenaParquet.values())
      await importAthenaCompactedRun(dir, g.table, { runId: g.runId, dt: g.dt }, g.files);
  } finally {
    rmSync(parquetDir, { recursive: true, force: true });
  }
  return count;
}
