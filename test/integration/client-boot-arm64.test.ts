/**
 * The clients' user data booted unmodified in an arm64 Debian 12 root, as on the nightly's c6g
 * clients: the root's binaries run under qemu-user-static (binfmt_misc), the rest as in
 * client-boot.test.ts (the rehearsal's SSM agent emulation, moto's S3 with the agent package for
 * debian_arm64). The root is the cached base with the client packages' layer, as the rehearsal boots:
 * under emulation debootstrap and dpkg take tens of minutes, so this file runs only where
 * `node dist/scripts/build-rehearsal-roots.js --arm64` has built them, and says so when it skips.
 * Proven: Debian's arm64 sysbench passes client-ready.sh (its Lua run through the report hook, the
 * system LuaJIT, not the bundled 2.1.0-beta2 that crashes on aarch64), and the arm64 Node.js the
 * user data installs runs the runner bundle, as an SSM job execs it.
 */
import { readdirSync, readFileSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import { CLIENT_INSTALL_DIR, clientReadyKey, type ClientReadyMarker } from '../../core/backends/aws/runner-command';
import {
  cachedLayers,
  foreignArchUnavailable,
  rootsUnavailable,
  serveAgentPackage,
} from '../../core/rehearsal/instance-root';
import { MOTO_CREDENTIALS } from '../../core/rehearsal/moto-server';
import { ProcessTracker } from '../../core/rehearsal/process-tracker';
import { SsmAgentEmulation } from '../../core/rehearsal/ssm-agent';
import { EXPIRES_AT_TAG, RUNNER_PREFIX } from '../../lib/handler-environment';
import { renderedBootUserData } from '../../lib/client-user-data';
import { startMoto, type MotoServer } from '../aws/moto';

const ROOT = join(__dirname, '..', '..');
const REGION = 'us-east-1';
const BUCKET = 'boot-arm64-lake';
/** Under emulation the boot's apt-get and client-ready.sh take minutes on a busy machine. */
const BOOT_TIMEOUT_MS = 20 * 60_000;

const boot = renderedBootUserData({ bucket: BUCKET, region: REGION });
const layers = cachedLayers('arm64', boot.client.packages);
const unavailable =
  rootsUnavailable() ??
  foreignArchUnavailable('arm64') ??
  (layers === undefined
    ? 'the arm64 client root is not cached (build it: node dist/scripts/build-rehearsal-roots.js --arm64)'
    : undefined);
const describeWithRoot = unavailable === undefined ? describe : describe.skip;
if (unavailable !== undefined) console.warn(`test/integration/client-boot-arm64.test.ts skipped: ${unavailable}`);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name)) : [join(dir, name)],
  );
}

async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describeWithRoot("the clients' user data booted in an arm64 Debian 12 root under qemu-user-static", () => {
  let moto: MotoServer;
  let work: string;
  let ec2: EC2Client;
  let ssm: SSMClient;
  let s3: S3Client;
  let agent: SsmAgentEmulation;
  let tracker: ProcessTracker;
  const lines: string[] = [];

  beforeAll(async () => {
    moto = startMoto();
    work = mkdtempSync(join(tmpdir(), 'client-arm64-'));
    const common = { region: REGION, endpoint: moto.endpoint, credentials: MOTO_CREDENTIALS };
    ec2 = new EC2Client(common);
    ssm = new SSMClient(common);
    s3 = new S3Client({ ...common, forcePathStyle: true });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    for (const file of filesUnder(join(ROOT, 'client'))) {
      await s3.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: RUNNER_PREFIX + relative(join(ROOT, 'client'), file),
          Body: readFileSync(file),
        }),
      );
    }
    await serveAgentPackage(s3, REGION, join(work, 'agent-package'), 'arm64');
    tracker = new ProcessTracker();
    agent = new SsmAgentEmulation({
      dir: join(work, 'instances'),
      region: REGION,
      motoEndpoint: moto.endpoint,
      credentials: MOTO_CREDENTIALS,
      s3,
      tracker,
      bootCommands: () => ['false'],
      machines: { layers: () => layers!, userData: (role) => boot[role].userData },
      log: (l) => lines.push(l),
    });
    agent.install({ ssm, ec2 });
  }, 120_000);
  afterAll(async () => {
    await agent.shutdown();
    tracker.dispose();
    for (const c of [ec2, ssm, s3]) c.destroy();
    moto.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it(
    "passes client-ready.sh with Debian's arm64 sysbench and runs the runner on the arm64 Node.js",
    async () => {
      // Arrange
      const started = Date.now();
      const run = await ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          InstanceType: 'c6g.large',
          TagSpecifications: [
            {
              ResourceType: 'instance',
              Tags: [{ Key: EXPIRES_AT_TAG, Value: new Date(Date.now() + 2 * 3600_000).toISOString() }],
            },
          ],
        }),
      );
      const instanceId = run.Instances![0]!.InstanceId!;

      // Act: the ready marker, as checkClientsReady reads it; then the runner as an SSM job execs it.
      const marker = await until(
        'the ready marker',
        async () => {
          try {
            const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: clientReadyKey(instanceId) }));
            return JSON.parse(await out.Body!.transformToString()) as ClientReadyMarker & { arch?: string };
          } catch {
            return undefined;
          }
        },
        BOOT_TIMEOUT_MS - 120_000,
      );
      const bootS = (Date.now() - started) / 1000;
      const sent = await ssm.send(
        new SendCommandCommand({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: {
            commands: [
              'uname -m',
              'dpkg --print-architecture',
              `node "${CLIENT_INSTALL_DIR}/runner.js" --help | cut -c1-21`,
            ],
          },
        }),
      );
      const tools = await until<GetCommandInvocationCommandOutput>(
        'the command',
        async () => {
          const inv = await ssm.send(
            new GetCommandInvocationCommand({ CommandId: sent.Command!.CommandId!, InstanceId: instanceId }),
          );
          return inv.Status === 'InProgress' ? undefined : inv;
        },
        300_000,
      );
      console.log(
        `arm64 client: ready marker after ${bootS.toFixed(0)} s, the runner's first run ` +
          `${((Date.now() - started) / 1000 - bootS).toFixed(0)} s after it`,
      );

      // Assert
      expect(marker).toMatchObject({
        ready: true,
        arch: 'aarch64',
        sysbenchVersion: '1.0.20',
        sysbench: expect.stringMatching(/^sysbench 1\.0\.20 \(using system LuaJIT 2\.1/),
      });
      expect(tools).toMatchObject({ Status: 'Success', ResponseCode: 0 });
      expect(tools.StandardOutputContent).toBe('aarch64\narm64\nusage: runner --phase\n');
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    },
    BOOT_TIMEOUT_MS,
  );
});
