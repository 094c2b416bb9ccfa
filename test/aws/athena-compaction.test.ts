/**
 * FinishRun's compaction on AWS (core/backends/aws/athena-compaction.ts) against moto's S3 and Athena.
 * moto's Athena records queries but runs no SQL and writes no file, so Athena's part is played by the
 * rehearsal's (core/rehearsal/athena-on-trino.ts): Trino over moto's Glue (the synthesized template's
 * tables) and S3 runs the UNLOAD's SELECT and writes its Parquet files where UNLOAD would, and
 * registers the partitions in Glue (the two statements translated: athena-translation.ts). What is
 * checked here are the requests: which statements are sent in which order, what is deleted, what is
 * kept, that a repeat does nothing twice, and that FinishRun's role allows what Trino did for them.
 */
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { runAthenaQuery } from '../../core/backends/aws/athena';
import { compactRunOnAthena, type AthenaCompactionOptions } from '../../core/backends/aws/athena-compaction';
import { addRunPartitionSql } from '../../core/lake/athena-storage';
import { lakeKeys, toJsonLines } from '../../core/lake/rows';
import { AthenaOnTrino } from '../../core/rehearsal/athena-on-trino';
import { interceptClient } from '../../core/rehearsal/sdk-intercept';
import { CREDENTIALS, destroyRawClients, rawClients, REGION, type RawClients } from './fixtures';
import { startMoto, type MotoServer } from './moto';
import { deniedActions, stackTemplate, startTrino, type TrinoServer } from './trino';

jest.setTimeout(120_000);

const BUCKET = 'compaction-lake';
const PREFIX = 'lake/';
const DT = '2026-11-20';
const RUN = { runId: 'nightly-7', dt: DT };

let moto: MotoServer | undefined;
let raw: RawClients;
let athena: AthenaClient | undefined;
let bare: AthenaClient | undefined;
let emulation: AthenaOnTrino;
let trino: TrinoServer | undefined;
const bareSent: string[] = [];
/** What the emulated Athena was sent since the test began. */
let sentFrom = 0;
const sent = () => emulation.queries.slice(sentFrom);

async function keys(s3: S3Client, prefix: string): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!).sort();
}

beforeAll(async () => {
  const server = startMoto();
  moto = server;
  raw = rawClients(server.endpoint);
  const client = new AthenaClient({ region: REGION, endpoint: server.endpoint, credentials: CREDENTIALS });
  athena = client;
  trino = startTrino();
  emulation = new AthenaOnTrino({
    trinoEndpoint: trino.endpoint,
    bucket: BUCKET,
    lakePrefix: PREFIX,
    motoEndpoint: server.endpoint,
    region: REGION,
    template: stackTemplate(),
    projectionRange: `${DT},NOW`,
  });
  emulation.install(client);
  // A bare Athena (moto alone): every query "succeeds", UNLOAD writes nothing.
  const bareClient = new AthenaClient({ region: REGION, endpoint: server.endpoint, credentials: CREDENTIALS });
  bare = bareClient;
  interceptClient(bareClient, 'compactionTestBareAthena', async (command, input, forward) => {
    if (command === 'StartQueryExecution') bareSent.push(String(input['QueryString']));
    return forward();
  });
  await raw.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await client.send(
    new CreateWorkGroupCommand({
      Name: 'aurora-bench',
      Configuration: { ResultConfiguration: { OutputLocation: `s3://${BUCKET}/athena-results/` } },
    }),
  );
}, 600_000);
afterAll(async () => {
  await emulation.close();
  trino?.stop();
  athena?.destroy();
  bare?.destroy();
  destroyRawClients(raw);
  moto?.stop();
});
beforeEach(() => {
  sentFrom = emulation.queries.length;
});

function started<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('moto did not start (see beforeAll)');
  return value;
}

const options = (client = athena): AthenaCompactionOptions => ({
  athena: started(client),
  s3: raw.s3,
  bucket: BUCKET,
  lakePrefix: PREFIX,
  workGroup: 'aurora-bench',
  database: 'aurora_bench',
  query: { pollMs: 1 },
});

/** Two steps of interval rows of the run, one of another run the same day, and the run's row (not a step table). */
async function writeRun(runId: string): Promise<void> {
  for (const step of ['s1', 's2']) {
    const rows = [1, 2, 3].map((t) => ({
      run_id: runId,
      cell_id: 'c1',
      variant: 'base',
      step_id: step,
      client_id: 'client-0',
      t,
      threads: 8,
      tps: 100 + t,
      qps: 2000,
      dt: DT,
    }));
    await raw.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: PREFIX + lakeKeys.stepTable('intervals', DT, runId, 'c1', step),
        Body: toJsonLines(rows),
      }),
    );
  }
}

describe('compactRunOnAthena on moto', () => {
  it(
    'asks whether the run is registered, UNLOADs it, registers the partition, then deletes only its JSON ' +
      'Lines objects; a repeat does nothing',
    async () => {
      // Arrange
      await writeRun(RUN.runId);
      await writeRun('nightly-8');
      await raw.s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `${PREFIX}compacted/intervals/dt=${DT}/run_id=${RUN.runId}/orphan-of-a-failed-unload`,
          Body: 'x',
        }),
      );

      // Act
      const first = await compactRunOnAthena(options(), RUN);
      const firstSent = sent();
      const again = await compactRunOnAthena(options(), RUN);

      // Assert: one table had rows; the statements in order, the orphan gone, Parquet in the run's partition.
      expect(first).toEqual([{ table: 'intervals', jsonObjects: 2, parquetObjects: 1, unloaded: true }]);
      expect(firstSent).toHaveLength(3);
      expect(firstSent[0]).toMatch(
        new RegExp(
          /^SELECT count\(\*\) AS partitions FROM "intervals_parquet\$partitions" WHERE dt =/.source +
            / '2026-11-20' AND "run_id" = 'nightly-7'$/.source,
        ),
      );
      expect(firstSent[1]).toMatch(
        new RegExp(
          /^UNLOAD \(SELECT .* FROM intervals_json WHERE dt = '2026-11-20' AND "run_id" = 'nightly-7'/.source +
            / ORDER BY cell_id, step_id, client_id, t\)\nTO/.source +
            / 's3:\/\/compaction-lake\/lake\/compacted\/intervals\/'/.source,
        ),
      );
      expect(firstSent[2]).toBe(
        "ALTER TABLE intervals_parquet ADD IF NOT EXISTS PARTITION (dt = '2026-11-20', run_id = 'nightly-7') " +
          "LOCATION 's3://compaction-lake/lake/compacted/intervals/dt=2026-11-20/run_id=nightly-7/'",
      );
      const parquet = await keys(raw.s3, `${PREFIX}compacted/intervals/dt=${DT}/run_id=${RUN.runId}/`);
      expect(parquet).toHaveLength(1);
      expect(parquet[0]).not.toMatch(/orphan/);
      expect(await keys(raw.s3, `${PREFIX}tables/intervals/dt=${DT}/`)).toEqual([
        `${PREFIX}tables/intervals/dt=${DT}/nightly-8__c1__s1.jsonl`,
        `${PREFIX}tables/intervals/dt=${DT}/nightly-8__c1__s2.jsonl`,
      ]);
      expect(again).toEqual([]);
      expect(sent()).toHaveLength(3);
    },
  );

  it(
    'after a crash between the registration and the deletion, deletes the JSON Lines objects without ' +
      'unloading again',
    async () => {
      // Arrange: the run's partition is registered (the crashed call's
      // last statement), its JSON Lines objects are still there.
      await writeRun('nightly-9');
      const location = `s3://${BUCKET}/${PREFIX}compacted/intervals/dt=${DT}/run_id=nightly-9/`;
      await runAthenaQuery(
        started(athena),
        {
          sql: addRunPartitionSql('intervals', { runId: 'nightly-9', dt: DT }, location),
          database: 'aurora_bench',
          workGroup: 'aurora-bench',
        },
        { pollMs: 1 },
      );
      sentFrom = emulation.queries.length;

      // Act
      const done = await compactRunOnAthena(options(), { runId: 'nightly-9', dt: DT });

      // Assert
      expect(done).toEqual([{ table: 'intervals', jsonObjects: 2, parquetObjects: 0, unloaded: false }]);
      expect(sent().map((q) => q.split(' ')[0])).toEqual(['SELECT']);
      expect(await keys(raw.s3, `${PREFIX}tables/intervals/dt=${DT}/nightly-9__`)).toEqual([]);
    },
  );

  it('an UNLOAD that wrote nothing registers nothing and keeps the JSON Lines objects, saying so', async () => {
    // Arrange
    await writeRun('nightly-10');

    // Act: moto alone answers (the UNLOAD "succeeds" and writes nothing).
    const compaction = compactRunOnAthena(options(bare), { runId: 'nightly-10', dt: DT });

    // Assert
    await expect(compaction).rejects.toThrow(
      new RegExp(
        /Athena UNLOAD of intervals for run nightly-10 wrote nothing under/.source +
          / s3:\/\/compaction-lake\/lake\/compacted\/intervals\/dt=2026-11-20\/run_id=nightly-10\/; its/.source +
          / JSON Lines objects are kept/.source,
      ),
    );
    expect(bareSent.map((q) => q.split(' ')[0])).toEqual(['SELECT', 'UNLOAD']);
    expect(await keys(raw.s3, `${PREFIX}tables/intervals/dt=${DT}/nightly-10__`)).toHaveLength(2);
  });

  it("FinishRun's role allows the Glue and S3 actions Trino made for the compaction's queries", async () => {
    // A compacted run's rows read back from its registered partition, as the lake's views read them.
    const read = await runAthenaQuery(
      started(athena),
      {
        sql: `SELECT count(*) AS n FROM intervals_parquet WHERE dt = '${DT}'`,
        database: 'aurora_bench',
        workGroup: 'aurora-bench',
      },
      { pollMs: 1 },
    );
    expect(read.rows).toEqual([{ n: '6' }]);
    const actions = emulation.answered.flatMap((q) => q.actions);
    expect(actions).toEqual(expect.arrayContaining(['glue:GetTable']));
    expect(deniedActions(emulation.answered, 'WorkflowTaskfinishrunFunction')).toEqual([]);
  });
});
