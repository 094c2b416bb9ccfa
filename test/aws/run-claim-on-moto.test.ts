/**
 * The S3 lake's claim of a key (S3LakeStore.createOnce) on moto's S3, which refuses a PutObject with
 * If-None-Match "*" over an existing object with 412 Precondition Failed as S3 does: the first claim
 * of a run id gets it, every later one (through another store of the same lake) is told the key is
 * taken, and the first claimant's body stays.
 */
import { CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { lakeKeys } from '../../core/lake/rows';
import { destroyRawClients, rawClients, type RawClients } from './fixtures';
import { startMoto, type MotoServer } from './moto';

jest.setTimeout(120_000);

const BUCKET = 'ab-run-claims';
let moto: MotoServer | undefined;
let raw: RawClients;

beforeAll(async () => {
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  await raw.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
}, 300_000);

afterAll(() => {
  destroyRawClients(raw);
  moto?.stop();
});

describe('run id claims in the S3 lake', () => {
  it('gives a key to its first claim only; later claims through other stores are refused', async () => {
    // Arrange: a store per claimant, as two writers of one lake each build their own
    const stores = [0, 1, 2].map(() => new S3LakeStore(raw.s3, BUCKET, 'lake/'));
    const key = lakeKeys.runClaim('fixed-1');

    // Act
    const first = await stores[0]!.createOnce(key, '{"claimant":0}\n');
    const later = [await stores[1]!.createOnce(key, '{"claimant":1}\n'), await stores[2]!.createOnce(key, 'x\n')];

    // Assert
    expect(first).toBe(true);
    expect(later).toEqual([false, false]);
    const body = await raw.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `lake/${key}` }));
    expect(await body.Body!.transformToString()).toBe('{"claimant":0}\n');
  });

  it('claims two different run ids independently', async () => {
    // Arrange
    const store = new S3LakeStore(raw.s3, BUCKET, 'other/');

    // Act
    const got = [
      await store.createOnce(lakeKeys.runClaim('a-1'), '{}\n'),
      await store.createOnce(lakeKeys.runClaim('b-1'), '{}\n'),
    ];

    // Assert
    expect(got).toEqual([true, true]);
  });
});
