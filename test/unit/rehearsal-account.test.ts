/**
 * RehearsalAccount's own bookkeeping: one rehearsal at a time, the standing infrastructure created
 * once per key, the sandbox kept while its key is the same (disposed when it changes), and the
 * functions' calls routed to the rehearsal that holds the account. The sandbox here is a stand-in
 * that records its routes and disposal; the real one runs in test/rehearsal/studies-*.test.ts.
 */
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import type { LambdaSandbox, SdkAnswer } from '../../core/rehearsal/lambda-sandbox';
import { RehearsalAccount, type SandboxRoute } from '../../core/rehearsal/rehearsal-account';
import { offlineAwsConfig } from '../helpers/aws-config';

interface StandIn {
  readonly sandbox: LambdaSandbox;
  readonly route: SandboxRoute;
  disposed: boolean;
}

function standIn(made: StandIn[]): (route: SandboxRoute) => LambdaSandbox {
  return (route) => {
    const entry: StandIn = {
      route,
      disposed: false,
      sandbox: {
        dispose: () => {
          entry.disposed = true;
          return Promise.resolve();
        },
      } as unknown as LambdaSandbox,
    };
    made.push(entry);
    return entry.sandbox;
  };
}

const answer = (text: string): SandboxRoute => ({
  sdk: () => Promise.resolve({ ok: true, output: { text } }),
  onLog: () => undefined,
});
const call = { client: 'S3Client', service: 'S3', command: 'ListBucketsCommand', input: {} };

describe('RehearsalAccount', () => {
  it('is held by one rehearsal at a time; only the first is told to reset the moto server', () => {
    const account = new RehearsalAccount('http://127.0.0.1:1', '/tmp/unused');
    expect(account.take()).toEqual({ first: true });
    expect(() => account.take()).toThrow('the rehearsal account is in use by another rehearsal');
    account.release();
    expect(account.take()).toEqual({ first: false });
  });

  it('creates the standing infrastructure once per key', async () => {
    const account = new RehearsalAccount('http://127.0.0.1:1', '/tmp/unused');
    let created = 0;
    const create = (): Promise<AwsBackendConfig> => Promise.resolve(offlineAwsConfig({ bucket: `b${++created}` }));
    const first = await account.standing('us-east-1 1', create);
    const again = await account.standing('us-east-1 1', create);
    const other = await account.standing('eu-west-1 1', create);
    expect([first.bucket, again.bucket, other.bucket, created]).toEqual(['b1', 'b1', 'b2', 2]);
  });

  it('keeps the sandbox while its key is the same, routes its calls to the holder, none after release', async () => {
    // Arrange
    const account = new RehearsalAccount('http://127.0.0.1:1', '/tmp/unused');
    const made: StandIn[] = [];
    // Act
    account.take();
    const first = await account.sandbox('functions v1', standIn(made), answer('run 1'));
    const duringFirst = await made[0]!.route.sdk('fn', call);
    account.release();
    const released = await made[0]!.route.sdk('fn', call);
    account.take();
    const second = await account.sandbox('functions v1', standIn(made), answer('run 2'));
    const duringSecond = await made[0]!.route.sdk('fn', call);
    account.release();
    account.take();
    const third = await account.sandbox('functions v2', standIn(made), answer('run 3'));
    account.release();
    await account.dispose();
    // Assert
    expect(second).toBe(first);
    expect([duringFirst, duringSecond]).toEqual<SdkAnswer[]>([
      { ok: true, output: { text: 'run 1' } },
      { ok: true, output: { text: 'run 2' } },
    ]);
    expect(released).toMatchObject({ ok: false, error: { message: expect.stringContaining('no rehearsal holds') } });
    expect(third).not.toBe(first);
    expect(made.map((m) => m.disposed)).toEqual([true, true]);
  });
});
