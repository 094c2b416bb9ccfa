/**
 * The boot the stack deploys, executed: the clients' and the self-managed servers' user data,
 * rendered as the stack renders it (lib/client-user-data.ts renderedBootUserData, which
 * test/cdk/stack.test.ts checks against the synthesized launch templates), run unmodified in a
 * clean Debian 12 root built on this machine by debootstrap from Debian's archive
 * (core/rehearsal/instance-root.ts, cached between runs), by the rehearsal's SSM agent emulation as
 * an emulated RunInstances boots it. Here the root has nothing but the clean base: the user data's
 * apt-get installs sysbench, the AWS CLI and MariaDB from the archive. S3 is moto, which serves the
 * rehearsal's SSM agent package where AWS serves the real one; docs/aws-client-boot.md lists the
 * other stand-ins. Then sysbench and the AWS CLI of that root answer an SSM command. The client boots
 * while something else holds the dpkg lock, as Debian's apt-daily timers may on a new instance: its
 * apt-get waits for the lock (DPkg::Lock::Timeout), the client is not ready meanwhile, and ready after.
 * A client whose apt-get fails (a broken apt source) reports not-ready at once, with apt's error, by
 * curl alone (no AWS CLI is installed yet), and the backend's readiness check stops the cell with it.
 *
 * Needs root (overlayfs, chroot), debootstrap (scripts/setup.sh --test) and Debian's archive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import { UnsupportedOnBackendError, type CellResources } from '../../core/backend';
import { ClientFleet } from '../../core/backends/aws/client-fleet';
import { CLIENT_INSTALL_DIR, clientReadyKey, type ClientReadyMarker } from '../../core/backends/aws/runner-command';
import { tagKeys } from '../../core/backends/aws/names';
import {
  ensureBaseRoot,
  processesInRoot,
  rootsUnavailable,
  serveAgentPackage,
  STAND_IN_RECORD_DIR,
} from '../../core/rehearsal/instance-root';
import { MOTO_CREDENTIALS } from '../../core/rehearsal/moto-server';
import { ProcessTracker } from '../../core/rehearsal/process-tracker';
import { SsmAgentEmulation } from '../../core/rehearsal/ssm-agent';
import { validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';
import { EXPIRES_AT_TAG, RUNNER_PREFIX } from '../../lib/handler-environment';
import { renderedBootUserData } from '../../lib/client-user-data';
import { startMoto, type MotoServer } from '../aws/moto';
import { offlineAwsConfig } from '../helpers/aws-config';

const ROOT = join(__dirname, '..', '..');
const REGION = 'us-east-1';
const BUCKET = 'boot-test-lake';
/** A cold run builds the root (debootstrap, minutes) and installs the packages from the archive. */
const BOOT_TIMEOUT_MS = 20 * 60_000;

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

/**
 * Holds the root's dpkg frontend lock as apt does (an fcntl write lock on the whole file: apt's
 * GetLock, apt-pkg/contrib/fileutl.cc) until the returned process is killed. flock(1) would not
 * do: flock(2) locks do not conflict with fcntl ones on Linux (flock(2), "NOTES").
 */
async function holdDpkgLock(root: string): Promise<ChildProcess> {
  const holder = spawn(
    'python3',
    [
      '-c',
      'import fcntl, sys\nf = open(sys.argv[1], "a")\nfcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n' +
        'print("held", flush=True)\nsys.stdin.read()\n',
      join(root, 'var', 'lib', 'dpkg', 'lock-frontend'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code}) before it held the lock`)));
  });
  return holder;
}

const unavailable = rootsUnavailable();
const describeWithRoots = unavailable === undefined ? describe : describe.skip;
if (unavailable !== undefined) {
  // A skipped layer must say why, not pass silently: the run's output names it.
  console.warn(`test/integration/client-boot.test.ts skipped: ${unavailable}`);
}

describeWithRoots(
  "the stack's user data booted unmodified in a clean Debian 12 root (debootstrap), by the rehearsal's SSM agent",
  () => {
    let moto: MotoServer;
    let work: string;
    let ec2: EC2Client;
    let ssm: SSMClient;
    let s3: S3Client;
    let agent: SsmAgentEmulation;
    let tracker: ProcessTracker;
    const lines: string[] = [];
    /** What the next machine booted has done to its root before its user data runs (set by a test). */
    let beforeNextBoot: ((root: string) => Promise<void>) | undefined;
    let lockHolder: Promise<ChildProcess> | undefined;
    const expiresAt = new Date(Date.now() + 2 * 3600_000).toISOString();

    beforeAll(async () => {
      moto = startMoto();
      work = mkdtempSync(join(tmpdir(), 'client-boot-test-'));
      const common = { region: REGION, endpoint: moto.endpoint, credentials: MOTO_CREDENTIALS };
      ec2 = new EC2Client(common);
      ssm = new SSMClient(common);
      s3 = new S3Client({ ...common, forcePathStyle: true });
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
      // What the stack's BucketDeployment puts under runner/: this repository's client/.
      for (const file of filesUnder(join(ROOT, 'client'))) {
        await s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: RUNNER_PREFIX + relative(join(ROOT, 'client'), file),
            Body: readFileSync(file),
          }),
        );
      }
      await serveAgentPackage(s3, REGION, join(work, 'agent-package'));
      const base = await ensureBaseRoot({ log: (l) => lines.push(l) });
      const boot = renderedBootUserData({ bucket: BUCKET, region: REGION });
      tracker = new ProcessTracker();
      agent = new SsmAgentEmulation({
        dir: join(work, 'instances'),
        region: REGION,
        motoEndpoint: moto.endpoint,
        credentials: MOTO_CREDENTIALS,
        s3,
        tracker,
        bootCommands: () => ['false'],
        // The clean root only: the user data installs every package itself.
        machines: {
          layers: () => [base],
          userData: (role) => boot[role].userData,
          beforeUserData: async (root) => {
            const before = beforeNextBoot;
            beforeNextBoot = undefined;
            await before?.(root);
          },
        },
        log: (l) => lines.push(l),
      });
      agent.install({ ssm, ec2 });
    }, BOOT_TIMEOUT_MS);
    afterAll(async () => {
      (await lockHolder?.catch(() => undefined))?.kill('SIGKILL');
      await agent.shutdown();
      tracker.dispose();
      for (const c of [ec2, ssm, s3]) c.destroy();
      moto.stop();
      rmSync(work, { recursive: true, force: true });
    });

    const launch = async (role: 'client' | 'server'): Promise<string> => {
      const keys = tagKeys(EXPIRES_AT_TAG.slice(0, -'expires-at'.length));
      const run = await ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          InstanceType: 'c6i.large',
          TagSpecifications: [
            {
              ResourceType: 'instance',
              Tags: [
                { Key: EXPIRES_AT_TAG, Value: expiresAt },
                { Key: keys.role, Value: role },
              ],
            },
          ],
        }),
      );
      return run.Instances![0]!.InstanceId!;
    };
    /** The instance's root on this machine (the agent's log names it). */
    const rootOf = (instanceId: string): string => {
      const line = lines.find((l) => l.includes(`${instanceId}: launched`));
      const m = / the Debian root (\S+)$/.exec(line ?? '');
      if (!m) throw new Error(`no boot line for ${instanceId}: ${lines.join('\n')}`);
      return m[1]!;
    };
    /** The ready marker in moto's S3, where checkClientsReady reads it; undefined while there is none. */
    const readyMarker = async (instanceId: string): Promise<ClientReadyMarker | undefined> => {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: clientReadyKey(instanceId) }));
        return JSON.parse(await out.Body!.transformToString()) as ClientReadyMarker;
      } catch {
        return undefined;
      }
    };
    const commandOutput = async (
      instanceId: string,
      commands: string[],
    ): Promise<GetCommandInvocationCommandOutput> => {
      const sent = await ssm.send(
        new SendCommandCommand({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: { commands },
        }),
      );
      return until(
        'the command',
        async () => {
          const inv = await ssm.send(
            new GetCommandInvocationCommand({ CommandId: sent.Command!.CommandId!, InstanceId: instanceId }),
          );
          return inv.Status === 'InProgress' ? undefined : inv;
        },
        120_000,
      );
    };

    it(
      'a client waits for a held dpkg lock, installs sysbench, the AWS CLI and Node.js, passes client-ready.sh, ' +
        'runs commands',
      async () => {
        // Arrange: the dpkg lock held from before the user data starts.
        beforeNextBoot = async (root) => {
          lockHolder = holdDpkgLock(root);
          await lockHolder;
        };
        const instanceId = await launch('client');
        const markerOf = () => readyMarker(instanceId);
        const online = async () =>
          (
            (
              await ssm.send(
                new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: [instanceId] }] }),
              )
            ).InstanceInformationList ?? []
          ).length > 0;
        const before = await online();
        const log = () => {
          try {
            return readFileSync(join(rootOf(instanceId), 'var', 'log', 'aurora-bench-user-data.log'), 'utf8');
          } catch {
            return '';
          }
        };

        // Act: once apt-get waits for the lock, the client is still booting (no marker, neither ready
        // nor failed); 3 s later the lock is released, and the boot goes on.
        const waiting = await until(
          'apt-get waiting for the dpkg lock',
          () => {
            // A boot that ended before it waited: its log's tail says why.
            if (lines.some((l) => l.startsWith(`${instanceId}: user data`)))
              throw new Error(`the boot ended before apt-get waited: ${log().slice(-1500)}`);
            return Promise.resolve(/Waiting for cache lock: [^\r\n]*lock-frontend[^\r\n]*/.exec(log())?.[0]);
          },
          BOOT_TIMEOUT_MS / 2,
        );
        await new Promise((r) => setTimeout(r, 3000));
        const whileHeld = await markerOf();
        (await lockHolder!).kill('SIGKILL');
        // Then wait for the ready marker, as checkClientsReady does.
        const marker = await until('the ready marker', markerOf, BOOT_TIMEOUT_MS - 60_000);
        // One name per `command -v`: the agent runs commands with the instance's sh, dash on Debian, whose
        // `command -v` looks up only its first operand (POSIX gives it one: command [-v|-V] command_name).
        const tools = await commandOutput(instanceId, [
          'command -v sysbench',
          'command -v aws',
          'sysbench --version',
          '/usr/bin/aws --version',
          'cat /etc/debian_version',
          // The runner bundle on Debian 12's Node 18 (scripts/build-runner.ts
          // targets it), as the SSM job commands exec it.
          'node --version',
          `node "${CLIENT_INSTALL_DIR}/runner.js" --help | cut -c1-21`,
        ]);
        const root = rootOf(instanceId);

        // Assert
        expect(before).toBe(false);
        expect(waiting).toMatch(/Could not get lock \/var\/lib\/dpkg\/lock-frontend\. It is held by process \d+/);
        expect(whileHeld).toBeUndefined();
        expect(marker).toMatchObject({
          ready: true,
          sysbenchVersion: '1.0.20',
          sysbench: expect.stringMatching(/^sysbench 1\.0\.20 \(using system LuaJIT 2\.1/),
        });
        expect(marker.drivers).toEqual(expect.arrayContaining(['mysql', 'pgsql']));
        expect(await online()).toBe(true);
        expect(tools).toMatchObject({ Status: 'Success', ResponseCode: 0 });
        expect(tools.StandardOutputContent).toMatch(
          new RegExp(
            /^\/usr\/bin\/sysbench\n\/usr\/local\/bin\/aws\nsysbench 1\.0\.20\naws-cli\/2\.9\.19/.source +
              / .*debian\.12.*\n12\.\d+\nv18\.\d+\.\d+\nusage: runner --phase\n$/.source,
          ),
        );
        // The dead-man's switch asked for the shutdown at the instance's expires-at tag (two hours, within a minute).
        const shutdown = readFileSync(join(root, STAND_IN_RECORD_DIR, 'shutdown'), 'utf8').trim();
        expect(Number(/^-h \+(\d+)$/.exec(shutdown)?.[1])).toBeGreaterThanOrEqual(118);
        expect(Number(/^-h \+(\d+)$/.exec(shutdown)?.[1])).toBeLessThanOrEqual(120);
        expect(readFileSync(join(root, 'var', 'log', 'aurora-bench-user-data.log'), 'utf8')).toContain(
          'client-ready.sh: ready: sysbench 1.0.20',
        );
        await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      },
      BOOT_TIMEOUT_MS,
    );

    it(
      "a client whose apt-get fails reports not-ready at once with apt's error, by curl before the AWS CLI is there",
      async () => {
        // Arrange: a broken apt source (a deb822 stanza without URIs), which apt-get update refuses at once.
        beforeNextBoot = (root) => {
          writeFileSync(
            join(root, 'etc', 'apt', 'sources.list.d', 'broken.sources'),
            'Types: deb\nSuites: bookworm\nComponents: main\n',
          );
          return Promise.resolve();
        };
        const started = Date.now();
        const instanceId = await launch('client');
        const plan = planRun(
          validateSpec({
            name: 'boot-test',
            engine: { version: '3.04.0' },
            region: REGION,
            variants: [{ name: 'v', instanceClass: 'db.r6g.large', clients: { count: 1, instanceType: 'c6i.large' } }],
            data: { tables: 1, tableSize: 10 },
            workloads: [{ name: 'w', test: 'oltp_read_only', threads: [1] }],
            ttlHours: 2,
          }),
          { backend: 'aws', now: new Date(), runId: 'boot-test-run' },
        );
        const cell = plan.cells[0]!;
        const run = {
          runId: plan.runId,
          specName: plan.specName,
          backend: 'aws' as const,
          region: plan.region,
          engineVersion: plan.engine.version,
          dt: plan.dt,
          ttlHours: plan.ttlHours,
        };
        const resources: CellResources = {
          cellId: cell.cellId,
          clusterId: 'ab-boot-test',
          readers: [],
          clients: [{ clientId: instanceId }],
          credentials: {
            user: 'benchadmin',
            secretRef: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-x',
          },
          notes: [],
          backendState: {},
        };
        const fleet = new ClientFleet({
          clients: { ec2, ssm, s3 },
          config: offlineAwsConfig({ bucket: BUCKET, region: REGION }),
          now: () => new Date(),
        });

        // Act: the marker, as checkClientsReady polls for it; then its answer.
        const marker = await until('the not-ready marker', () => readyMarker(instanceId), 120_000);
        const seconds = (Date.now() - started) / 1000;
        const check = fleet.checkClientsReady(run, cell, resources);

        // Assert
        expect(marker).toMatchObject({ ready: false, hostname: expect.any(String) });
        expect(marker.reason).toMatch(/^user data failed \(exit 100\): .*E: Malformed entry 1 in sources file/);
        expect(seconds).toBeLessThan(60);
        // Uploaded by curl: apt installed nothing, so there was no AWS CLI and no runner to upload with.
        const root = rootOf(instanceId);
        expect(existsSync(join(root, 'usr', 'bin', 'aws'))).toBe(false);
        expect(existsSync(join(root, 'opt', 'aurora-bench', 'client', 'client-ready.sh'))).toBe(false);
        await expect(check).rejects.toBeInstanceOf(UnsupportedOnBackendError);
        await expect(fleet.checkClientsReady(run, cell, resources)).rejects.toThrow(
          new RegExp(`client ${instanceId} could not prove that sysbench works: user data failed \\(exit 100\\)`),
        );
        await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      },
      BOOT_TIMEOUT_MS,
    );

    it(
      "a self-managed server installs Debian's MariaDB 10.11, its packaged service stopped, and registers its agent",
      async () => {
        // Arrange
        const instanceId = await launch('server');

        // Act: wait for the marker client/server-setup.sh waits for.
        const root = await until(
          'the boot line',
          () =>
            Promise.resolve(lines.some((l) => l.includes(`${instanceId}: launched`)) ? rootOf(instanceId) : undefined),
          60_000,
        );
        const installed = await until(
          'server-installed',
          () =>
            Promise.resolve(
              existsSync(join(root, 'opt', 'aurora-bench', 'server-installed'))
                ? readFileSync(join(root, 'opt', 'aurora-bench', 'server-installed'), 'utf8')
                : undefined,
            ),
          BOOT_TIMEOUT_MS - 60_000,
        );
        const info = await until(
          'the agent',
          async () =>
            (
              await ssm.send(
                new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: [instanceId] }] }),
              )
            ).InstanceInformationList?.[0],
          120_000,
        );

        // Assert
        expect(installed).toMatch(/^mariadbd=\/usr\/sbin\/mariadbd\nversion=.* 10\.11\.\d+-MariaDB/);
        expect(info).toMatchObject({ PingStatus: 'Online', PlatformName: 'Debian GNU/Linux' });
        const mariadbds = processesInRoot(root).filter(
          (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'mariadbd',
        );
        expect(mariadbds).toEqual([]);
        expect(existsSync(join(root, 'usr', 'sbin', 'policy-rc.d'))).toBe(false);
        expect(readFileSync(join(root, STAND_IN_RECORD_DIR, 'systemctl'), 'utf8').split('\n')).toEqual(
          expect.arrayContaining(['enable --now amazon-ssm-agent', 'disable mariadb']),
        );
        await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      },
      BOOT_TIMEOUT_MS,
    );
  },
);
