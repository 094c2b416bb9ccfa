/**
 * The S3 lake's schema version (core/backends/aws/s3-lake.ts, LAKE_VERSION_KEY in core/lake/schema.ts)
 * on moto's S3: the first writer of a lake records the version; a lake written before versions were
 * recorded (test/fixtures/s3-lake-v1) is read by this code through Athena and brought to this version
 * when it first writes, without an object changing; a lake a newer aurora-bench wrote is refused, for
 * writing and for reading, naming the version record and both versions, with nothing written and no
 * query sent. moto's Athena runs no SQL: the rehearsal's Athena (core/rehearsal/athena-on-trino.ts)
 * answers the queries on Trino over the synthesized template's Glue tables in moto and the S3 objects.
 * Each lake prefix has a Glue database of its own, since a table's location names the prefix.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { AthenaLake } from '../../core/backends/aws/athena-lake';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { findRun, stepResults } from '../../core/lake/results';
import { LAKE_SCHEMA_VERSION, LAKE_VERSION_KEY } from '../../core/lake/schema';
import { AthenaOnTrino } from '../../core/rehearsal/athena-on-trino';
import { CREDENTIALS, destroyRawClients, rawClients, REGION, type RawClients } from './fixtures';
import { startMoto, type MotoServer } from './moto';
import { stackTemplate, startTrino, type TrinoServer } from './trino';

jest.setTimeout(120_000);

const BUCKET = 'ab-lake-versions';
const WORK_GROUP = 'aurora-bench';
const FIXTURE = join(__dirname, '..', 'fixtures', 's3-lake-v1', 'objects');
/** The fixture's day and the day a test writes: the lake's projected dates. */
const PROJECTED_DAYS = '2026-11-27,2026-11-28';

let moto: MotoServer | undefined;
let trino: TrinoServer | undefined;
let raw: RawClients;
let athena: AthenaClient | undefined;
const readers: { client: AthenaClient; athena: AthenaOnTrino }[] = [];

/** The fixture's objects: key under the lake prefix and body. */
function fixtureObjects(): { key: string; body: Buffer }[] {
  return (readdirSync(FIXTURE, { recursive: true }) as string[])
    .filter((f) => statSync(join(FIXTURE, f)).isFile())
    .map((f) => ({ key: f.split('\\').join('/'), body: readFileSync(join(FIXTURE, f)) }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

async function objects(prefix: string): Promise<Map<string, string>> {
  const out = await raw.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  const bodies = new Map<string, string>();
  for (const o of out.Contents ?? [])
    bodies.set(
      o.Key!.slice(prefix.length),
      await (await raw.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: o.Key! }))).Body!.transformToString(),
    );
  return bodies;
}

/**
 * The Athena reader of the lake at `prefix`, as `results --aws` builds it (core/cli/results-aws.ts),
 * answered on Trino, in a Glue database of the prefix's own (its tables located under the prefix).
 */
function athenaLakeAt(prefix: string, store: S3LakeStore): { lake: AthenaLake; athena: AthenaOnTrino } {
  const client = new AthenaClient({ region: REGION, endpoint: moto!.endpoint, credentials: CREDENTIALS });
  const onTrino = new AthenaOnTrino({
    trinoEndpoint: trino!.endpoint,
    motoEndpoint: moto!.endpoint,
    region: REGION,
    bucket: BUCKET,
    lakePrefix: prefix,
    template: stackTemplate(),
    projectionRange: PROJECTED_DAYS,
  });
  onTrino.install(client);
  readers.push({ client, athena: onTrino });
  const database = `aurora_bench_${prefix.replace(/\W/g, '_')}`.replace(/_+$/, '');
  return { lake: new AthenaLake({ client, workGroup: WORK_GROUP, database, pollMs: 20, store }), athena: onTrino };
}

beforeAll(async () => {
  moto = startMoto();
  trino = startTrino();
  raw = rawClients(moto.endpoint);
  athena = new AthenaClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  await raw.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await athena.send(
    new CreateWorkGroupCommand({
      Name: WORK_GROUP,
      Configuration: { ResultConfiguration: { OutputLocation: `s3://${BUCKET}/athena-results/` } },
    }),
  );
}, 300_000);

afterAll(async () => {
  for (const r of readers) {
    await r.athena.close();
    r.client.destroy();
  }
  athena?.destroy();
  destroyRawClients(raw);
  trino?.stop();
  moto?.stop();
});

describe('the S3 lake records its schema version', () => {
  it('the first writer of a new lake records it; a later writer reads it and writes it no more', async () => {
    // Arrange
    const prefix = 'fresh/';
    const first = new S3LakeStore(raw.s3, BUCKET, prefix);
    const second = new S3LakeStore(raw.s3, BUCKET, prefix);
    // Act
    await first.put('tables/runs/dt=2026-11-27/r1.jsonl', '{"run_id":"r1"}\n');
    const recorded = (await objects(prefix)).get(LAKE_VERSION_KEY);
    await raw.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}${LAKE_VERSION_KEY}`,
        Body: `{"schemaVersion":${LAKE_SCHEMA_VERSION},"writtenBy":"kept"}\n`,
      }),
    );
    await second.put('tables/runs/dt=2026-11-27/r2.jsonl', '{"run_id":"r2"}\n');
    // Assert: the record the first writer made, kept as it is by the second (which only read it)
    expect(recorded === undefined ? undefined : JSON.parse(recorded)).toEqual({ schemaVersion: LAKE_SCHEMA_VERSION });
    const lake = await objects(prefix);
    expect([...lake.keys()].sort()).toEqual([
      LAKE_VERSION_KEY,
      'tables/runs/dt=2026-11-27/r1.jsonl',
      'tables/runs/dt=2026-11-27/r2.jsonl',
    ]);
    expect(JSON.parse(lake.get(LAKE_VERSION_KEY)!)).toEqual({ schemaVersion: LAKE_SCHEMA_VERSION, writtenBy: 'kept' });
    expect(await second.schemaVersion()).toBe(LAKE_SCHEMA_VERSION);
  });
});

describe('an S3 lake written by the previous release (version 1, no lake.json)', () => {
  it('is read by this code through Athena: its run and step as that run printed them', async () => {
    // Arrange
    const prefix = 'v1-read/';
    for (const o of fixtureObjects())
      await raw.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: prefix + o.key, Body: o.body }));
    const store = new S3LakeStore(raw.s3, BUCKET, prefix);
    const { lake } = athenaLakeAt(prefix, store);
    // Act: findRun/stepResults only use query(), as `results --aws` reads them
    const run = await findRun(lake);
    const steps = await stepResults(lake, run.run_id);
    // Assert: the figures the run printed when it was made (161.24 tps, 2,257.32 qps); nothing written by reading
    expect([run.run_id, run.spec_name, run.status]).toEqual(['lake-v1-fixture', 'lake-v1', 'succeeded']);
    expect(
      steps.map((s) => [s.step_id, s.status, Math.round(s.tps! * 100) / 100, Math.round(s.qps! * 100) / 100]),
    ).toEqual([['ro-t1', 'ok', 161.24, 2257.32]]);
    expect(await store.schemaVersion()).toBeUndefined();
  });

  it('is brought to this version by its first write, without an object of it changing', async () => {
    // Arrange
    const prefix = 'v1-write/';
    const fixture = fixtureObjects();
    for (const o of fixture)
      await raw.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: prefix + o.key, Body: o.body }));
    const store = new S3LakeStore(raw.s3, BUCKET, prefix);
    // Act
    await store.put('tables/runs/dt=2026-11-28/next-run.jsonl', '{"run_id":"next-run"}\n');
    // Assert
    const lake = await objects(prefix);
    expect(JSON.parse(lake.get(LAKE_VERSION_KEY)!)).toEqual({ schemaVersion: LAKE_SCHEMA_VERSION });
    for (const o of fixture) expect([o.key, lake.get(o.key)]).toEqual([o.key, o.body.toString('utf8')]);
    expect(lake.size).toBe(fixture.length + 2);
    const { lake: reader } = athenaLakeAt(prefix, new S3LakeStore(raw.s3, BUCKET, prefix));
    expect(await reader.query('SELECT run_id FROM runs ORDER BY run_id')).toEqual([
      { run_id: 'lake-v1-fixture' },
      { run_id: 'next-run' },
    ]);
  });
});

describe('an S3 lake of a newer schema version', () => {
  it('is refused by a writer and a reader, naming record and versions; nothing written, no query sent', async () => {
    // Arrange
    const prefix = 'newer/';
    const newer = LAKE_SCHEMA_VERSION + 1;
    for (const o of fixtureObjects())
      await raw.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: prefix + o.key, Body: o.body }));
    await raw.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}${LAKE_VERSION_KEY}`,
        Body: JSON.stringify({ schemaVersion: newer }),
      }),
    );
    const before = await objects(prefix);
    const store = new S3LakeStore(raw.s3, BUCKET, prefix);
    const { lake, athena: onTrino } = athenaLakeAt(prefix, store);
    // Act
    const write = store.put('tables/runs/dt=2026-11-28/r.jsonl', '{"run_id":"r"}\n');
    const read = lake.query('SELECT run_id FROM runs');
    // Assert
    await expect(write).rejects.toMatchObject({
      name: 'LakeVersionError',
      message:
        `the results lake s3://${BUCKET}/${prefix} is of schema version ${newer} ` +
        `(s3://${BUCKET}/${prefix}${LAKE_VERSION_KEY}), written by a newer aurora-bench; this one writes ` +
        `version ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench (redeploy the stack with it)`,
    });
    await expect(read).rejects.toMatchObject({
      name: 'LakeVersionError',
      message:
        `the results lake s3://${BUCKET}/${prefix} is of schema version ${newer} ` +
        `(s3://${BUCKET}/${prefix}${LAKE_VERSION_KEY}), written by a newer aurora-bench; this one reads versions ` +
        `up to ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench`,
    });
    expect(await objects(prefix)).toEqual(before);
    expect(onTrino.queries).toEqual([]);
  });

  it('a version record that does not read is named', async () => {
    // Arrange
    const prefix = 'garbled/';
    await raw.s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: `${prefix}${LAKE_VERSION_KEY}`, Body: '{"schemaVersion": "two"}' }),
    );
    // Act / Assert
    await expect(new S3LakeStore(raw.s3, BUCKET, prefix).put('tables/x.jsonl', '{}\n')).rejects.toThrow(
      `s3://${BUCKET}/${prefix}${LAKE_VERSION_KEY}: schemaVersion must be a whole number from 1 (it is "two")`,
    );
  });
});
