/**
 * The rehearsal's Athena (core/rehearsal/athena-on-trino.ts) on a real Trino: the Glue tables of
 * the synthesized template in moto's Glue, a run's lake objects in moto's S3, the views and queries
 * as the AWS code sends them, answered through moto's Athena to AthenaLake (GetQueryResults).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { AthenaLake } from '../../core/backends/aws/athena-lake';
import { athenaViewSql } from '../../core/lake/athena-storage';
import { withLake } from '../../core/lake/duckdb';
import { AthenaOnTrino } from '../../core/rehearsal/athena-on-trino';
import { historyFromLake } from '../../core/cli/regression-command';
import { DT } from '../helpers/lake-fixtures';
import { writeLakeRun } from '../helpers/regression-fixtures';
import { CREDENTIALS, destroyRawClients, rawClients, REGION, type RawClients } from './fixtures';
import { startMoto, type MotoServer } from './moto';
import { deniedActions, stackTemplate, startTrino, type TrinoServer } from './trino';

const BUCKET = 'ab-trino-lake';
const WORK_GROUP = 'ab-trino';
const DATABASE = 'aurora_bench';

let moto: MotoServer;
let trino: TrinoServer;
let raw: RawClients;
let athena: AthenaOnTrino;
let client: AthenaClient;
let lake: AthenaLake;
let tempDir: string;
let lakeDir: string;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

beforeAll(async () => {
  moto = startMoto();
  trino = startTrino();
  raw = rawClients(moto.endpoint);
  await raw.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  tempDir = mkdtempSync(join(tmpdir(), 'ab-trino-'));
  lakeDir = join(tempDir, 'lake');
  writeLakeRun(lakeDir, 'nightly-001', '2026-01-01T00:00:00.000Z', [{ tps: 1000, latencyMs: 10 }]);
  writeLakeRun(lakeDir, 'nightly-002', '2026-01-02T00:00:00.000Z', [{ tps: 700, latencyMs: 14.3 }]);
  // Repeats left out in two cells of five: the history names each, in the order the rows came.
  writeLakeRun(lakeDir, 'nightly-003', '2026-01-03T00:00:00.000Z', [
    { tps: 990 },
    { tps: 0, status: 'failed' },
    { tps: 1004 },
    { tps: 0, status: 'failed' },
    { tps: 1002, saturated: true },
  ]);
  for (const file of filesUnder(lakeDir))
    await raw.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: relative(lakeDir, file), Body: readFileSync(file) }));
  client = new AthenaClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  await client.send(
    new CreateWorkGroupCommand({
      Name: WORK_GROUP,
      Configuration: { ResultConfiguration: { OutputLocation: `s3://${BUCKET}/athena-results/` } },
    }),
  );
  athena = new AthenaOnTrino({
    trinoEndpoint: trino.endpoint,
    motoEndpoint: moto.endpoint,
    region: REGION,
    bucket: BUCKET,
    lakePrefix: '',
    template: stackTemplate(),
    projectionRange: `${DT},2024-05-02`,
  });
  athena.install(client);
  lake = new AthenaLake({ client, workGroup: WORK_GROUP, database: DATABASE, pollMs: 20 });
}, 600_000);

afterAll(async () => {
  await athena.close();
  client.destroy();
  destroyRawClients(raw);
  trino.stop();
  moto.stop();
  rmSync(tempDir, { recursive: true, force: true });
});

/** Rows in a stable order, numbers rounded to 9 significant digits (float sums differ in their last bits). */
const normalized = (rows: readonly Record<string, unknown>[]): string[] =>
  rows
    .map((r) =>
      JSON.stringify(
        Object.fromEntries(
          Object.keys(r)
            .sort()
            .map((k) => [k, typeof r[k] === 'number' ? Number(r[k].toPrecision(9)) : r[k]]),
        ),
      ),
    )
    .sort();

/** A value with every number in it rounded to 9 significant digits. */
const rounded = (v: unknown): unknown =>
  typeof v === 'number'
    ? Number(v.toPrecision(9))
    : Array.isArray(v)
      ? v.map(rounded)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rounded(x)]))
        : v;

describe('Athena on Trino over the synthesized Glue tables', () => {
  it('answers each view of the lake as the local lake (DuckDB) does', async () => {
    for (const view of athenaViewSql()) {
      const sql = `SELECT * FROM ${view.name}`;
      const local = await withLake(lakeDir, (l) => l.query(sql));
      const remote = await lake.query(sql);
      expect({ view: view.name, rows: normalized(remote) }).toEqual({ view: view.name, rows: normalized(local) });
    }
  }, 600_000);

  // The history's step rows came in no order (a SELECT over step_summary, an aggregate, without ORDER BY:
  // core/regression/load.ts), so its note of the repeats it left out named them in the order each engine
  // gave: on this lake DuckDB r6g-r2, r6g-r5, r6g-r4 and Trino r6g-r4, r6g-r2, r6g-r5.
  it('builds the same history of the experiment as the local lake does', async () => {
    const local = await withLake(lakeDir, (l) => historyFromLake(l, 'nightly'));
    const remote = await historyFromLake(lake, 'nightly');
    const notes = (h: typeof local) => h.steps.flatMap((s) => s.points.map((p) => p.note));
    expect(notes(local)).toContain(
      '3 of 5 repeats left out: failed in r6g-r2: FATAL: connection lost; failed in r6g-r4: FATAL: connection ' +
        "lost; client-bound in r6g-r5 (its client's CPU was saturated: the numbers measure the client, not the server)",
    );
    expect(notes(remote)).toEqual(notes(local));
    expect(rounded(remote)).toEqual(rounded(local));
  }, 300_000);

  it("records the Glue and S3 actions of each query, which ComputeVerdicts' role allows", async () => {
    await lake.query('SELECT run_id FROM variant_summary');
    expect(athena.answered.flatMap((q) => q.actions)).toEqual(
      expect.arrayContaining(['glue:GetTable', 's3:GetObject']),
    );
    expect(deniedActions(athena.answered, 'WorkflowTaskcomputeverdictsFunction')).toEqual([]);
  }, 300_000);
});
