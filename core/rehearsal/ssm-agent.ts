/**
 * The SSM agent of every client instance the rehearsal's EC2 launches, on this machine.
 * moto records RunInstances and SendCommand but runs nothing, so this emulation does the agent's work.
 *
 * - Boot: each instance gets its own home and runs its boot commands there, as its user data would.
 *   The agent counts as registered from launch on, as on EC2.
 * - SendCommand runs AWS-RunShellScript as the agent does, in a process group of its own.
 *   See the agent's runshellscript.go, runscript.go and executers_unix.go.
 *   A Debian root runs it with its own dash. Elsewhere this machine's bash runs it in POSIX mode.
 *   CancelCommand and a timeout SIGKILL the whole group, so a cancelled runner gets no chance to upload.
 * - Output goes to OutputS3BucketName under the agent's key layout.
 *   GetCommandInvocation answers from the real process. See ssm service-2.json.
 * - TerminateInstances kills the instance's processes and removes its home.
 * - Server instances run the real server scripts, which find this machine's mariadbd.
 *   They get a local host and a free port of their own, where EC2 gives each its private IPv4 and 3306.
 *
 * With `machines`, an instance is a Debian 12 root of its own, and the stack's user data runs in it unmodified.
 * It then counts as registered only once the user data has started the SSM agent package.
 * Before that, SendCommand answers InvalidInstanceId, as for an instance without an agent.
 *
 * The commands run with the AWS CLI pointed at moto, and HOME inside the instance home.
 * So no profile of the user is read and no call reaches AWS.
 * AWS_DEFAULT_REGION is set too, because the AWS CLI v2 takes the region from instance metadata.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SSMServiceException } from '@aws-sdk/client-ssm';
import { findFreePort, isAlive, processCmdline, processUid, waitForExit } from '../backends/local/processes';
import type { ServerInfo } from '../backends/local/mariadb-server';
import {
  AGENT_STARTED_FILE,
  hostClientOptionFile,
  mountInstanceRoot,
  processesInRoot,
  removeInstanceRoot,
  unmountUnder,
  USER_DATA_SCRIPT,
  writeStandIns,
  type InstanceRoot,
} from './instance-root';
import type { ProcessTracker } from './process-tracker';
import { answer, interceptClient, serviceError, type Forward, type SdkResult } from './sdk-intercept';

/** GetCommandInvocation output limits. See ssm service-2.json. */
const STDOUT_LIMIT = 24_000;
const STDERR_LIMIT = 8_000;
/** The agent's exit code for a command it stopped. See executers_unix.go CommandStoppedPreemptivelyExitCode. */
const STOPPED_EXIT_CODE = 137;
/** AWS-RunShellScript's default executionTimeout, per its document. */
const DEFAULT_EXECUTION_TIMEOUT_S = 3600;
const PLUGIN_DIR = join('awsrunShellScript', '0.awsrunShellScript');
/** The user data leaves AURORA_BENCH_HOME unset on a Debian machine, so the scripts' default holds. */
const MACHINE_HOME = '/opt/aurora-bench';

type InvocationStatus = 'InProgress' | 'Success' | 'Failed' | 'Cancelled' | 'TimedOut';

interface Invocation {
  readonly commandId: string;
  readonly instanceId: string;
  readonly comment: string | undefined;
  readonly documentName: string;
  readonly dir: string;
  readonly outputBucket: string | undefined;
  readonly outputPrefix: string | undefined;
  readonly startedAt: Date;
  status: InvocationStatus;
  responseCode: number;
  endedAt?: Date;
  stdout: string;
  stderr: string;
  child?: ChildProcess;
  stopReason?: 'cancel' | 'timeout';
  done: Promise<void>;
}

interface EmulatedInstance {
  readonly instanceId: string;
  readonly home: string;
  /** A Debian machine's root and its instance metadata service. */
  readonly machine?: { readonly root: InstanceRoot; readonly imds: Server };
  /** The port a server instance's MariaDB listens on. */
  readonly server?: { readonly port: number };
  terminated: boolean;
  boot?: { child: ChildProcess; exit?: number | null; done: Promise<void> };
  readonly invocations: Map<string, Invocation>;
}

export interface BootContext {
  readonly instanceId: string;
  readonly home: string;
  readonly role: 'client' | 'server';
}

export interface SsmAgentOptions {
  /** Instance homes go under <dir>/<n>/. */
  readonly dir: string;
  readonly region: string;
  readonly motoEndpoint: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Where the agent uploads command output. */
  readonly s3: S3Client;
  readonly tracker: ProcessTracker;
  /** Directories put first on PATH, such as the AWS CLI's. */
  readonly extraPath?: readonly string[];
  /** Shell commands an instance runs at boot on this machine, without `machines`. */
  readonly bootCommands: (ctx: BootContext) => readonly string[];
  /** Instances are Debian machines booting the stack's user data. */
  readonly machines?: {
    /** The cached layers of the instance's root, uppermost first. */
    readonly layers: (role: BootContext['role']) => readonly string[];
    /** The user data of the role's launch template, as the stack renders it. */
    readonly userData: (role: BootContext['role']) => string;
    /**
     * What else runs in the machine as it boots, started before its user data.
     * On an EC2 instance, Debian's apt-daily timers may hold the dpkg lock then.
     */
    readonly beforeUserData?: (root: string) => Promise<void>;
  };
  /** A server instance's mariadbd is up, or gone at terminate. */
  readonly onServerChanged?: (instanceId: string, server: ServerInfo | undefined) => Promise<void>;
  readonly log?: (line: string) => void;
}

/** What the agent does to stop a command. See executers_unix.go killProcess. */
/** How long a terminated instance's killed processes and their uploads are waited for. */
const TERMINATE_WAIT_MS = 20_000;

/**
 * Waits for `promises` to settle, at most `ms`, keeping the event loop alive meanwhile.
 * The children are unref'd, so their `exit` events alone hold nothing.
 * Without a referenced handle, Node would exit 0 with the rehearsal's promise still pending.
 */
async function settledWithin(promises: readonly (Promise<unknown> | undefined)[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.allSettled(promises.filter((p): p is Promise<unknown> => p !== undefined)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

/**
 * Whether RunInstances launches server instances.
 * Their `<prefix>role` tag is `server` or starts with `server-`.
 */
function launchesServers(input: Record<string, unknown>): boolean {
  const specs =
    (input['TagSpecifications'] as
      { ResourceType?: string; Tags?: { Key?: string; Value?: string }[] }[] | undefined) ?? [];
  return specs.some(
    (t) =>
      t.ResourceType === 'instance' &&
      (t.Tags ?? []).some(
        (tag) =>
          tag.Key?.endsWith('role') === true && (tag.Value === 'server' || tag.Value?.startsWith('server-') === true),
      ),
  );
}

/** The instance tags of a RunInstances call (TagSpecifications of ResourceType instance). */
function instanceTags(input: Record<string, unknown>): ReadonlyMap<string, string> {
  const specs =
    (input['TagSpecifications'] as
      { ResourceType?: string; Tags?: { Key?: string; Value?: string }[] }[] | undefined) ?? [];
  const tags = new Map<string, string>();
  for (const t of specs)
    if (t.ResourceType === 'instance')
      for (const tag of t.Tags ?? []) if (tag.Key !== undefined) tags.set(tag.Key, tag.Value ?? '');
  return tags;
}

/**
 * The role name the metadata stand-in gives.
 * The stack's role has a generated name, and the user data reads it from iam/security-credentials/.
 */
const REHEARSAL_INSTANCE_ROLE = 'aurora-bench-rehearsal-client-role';

/**
 * An instance's metadata service on a free local port, speaking IMDSv2 as the user data uses it.
 * See EC2 User Guide, "Use the Instance Metadata Service to access instance metadata".
 * A GET without a valid token is 401, since the launch templates require IMDSv2.
 * It answers instance-id, local-ipv4, instance tags and the instance profile's credentials.
 * The credentials take EC2's shape with moto's keys.
 * See EC2 User Guide, "Retrieve security credentials from instance metadata".
 * Anything else is 404.
 */
async function startImds(
  instanceId: string,
  tags: ReadonlyMap<string, string>,
  credentials: SsmAgentOptions['credentials'],
): Promise<Server> {
  const token = `rehearsal-${instanceId}`;
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    if (req.method === 'PUT' && url === '/latest/api/token') {
      if (req.headers['x-aws-ec2-metadata-token-ttl-seconds'] === undefined) return void res.writeHead(400).end();
      return void res.end(token);
    }
    if (req.method !== 'GET') return void res.writeHead(405).end();
    if (req.headers['x-aws-ec2-metadata-token'] !== token) return void res.writeHead(401).end();
    const meta = url.replace(/^\/latest\/meta-data\//, '');
    if (meta === 'instance-id') return void res.end(instanceId);
    if (meta === 'local-ipv4') return void res.end('127.0.0.1');
    const tag = /^tags\/instance\/(.+)$/.exec(meta);
    if (tag && tags.has(decodeURIComponent(tag[1]!))) return void res.end(tags.get(decodeURIComponent(tag[1]!)));
    if (meta === 'iam/security-credentials/' || meta === 'iam/security-credentials')
      return void res.end(REHEARSAL_INSTANCE_ROLE);
    if (meta === `iam/security-credentials/${REHEARSAL_INSTANCE_ROLE}`) {
      const now = Date.now();
      return void res.setHeader('Content-Type', 'text/plain').end(
        JSON.stringify(
          {
            Code: 'Success',
            LastUpdated: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
            Type: 'AWS-HMAC',
            AccessKeyId: credentials.accessKeyId,
            SecretAccessKey: credentials.secretAccessKey,
            Token: `rehearsal-session-${instanceId}`,
            Expiration: new Date(now + 6 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          },
          null,
          2,
        ),
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return server;
}

/** A string field of an API input or answer, or '' when absent. */
function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : text.slice(0, limit);
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export class SsmAgentEmulation {
  private readonly instances = new Map<string, EmulatedInstance>();
  private homes = 0;
  private exitHook: (() => void) | undefined;

  constructor(private readonly o: SsmAgentOptions) {}

  private log(line: string): void {
    this.o.log?.(`[rehearsal ssm] ${line}`);
  }

  /** The environment of everything an emulated instance runs. */
  env(home: string, server?: { readonly port: number }): NodeJS.ProcessEnv {
    return {
      ...(server ? { AURORA_BENCH_SERVER_HOST: '127.0.0.1', AURORA_BENCH_SERVER_PORT: String(server.port) } : {}),
      PATH: [...(this.o.extraPath ?? []), process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin'].join(':'),
      LANG: 'C.UTF-8',
      HOME: home,
      TMPDIR: join(home, 'tmp'),
      AURORA_BENCH_HOME: home,
      AWS_ENDPOINT_URL: this.o.motoEndpoint,
      AWS_ACCESS_KEY_ID: this.o.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.o.credentials.secretAccessKey,
      AWS_DEFAULT_REGION: this.o.region,
      // No instance metadata here, so the CLI must never wait for it.
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  }

  /**
   * The environment of what runs in a Debian machine, as cloud-init and the agent run it.
   * The AWS CLI gets no instance metadata, since its IMDS client would wait for 169.254.169.254.
   * The root's AWS CLI 2.9.19 predates AWS_ENDPOINT_URL, so its stand-in passes --endpoint-url.
   * The runner's bundled SDK reads AWS_ENDPOINT_URL, so it is set here.
   * See AWS SDKs and Tools Reference Guide, "Service-specific endpoints".
   */
  private machineEnv(server?: { readonly port: number }): NodeJS.ProcessEnv {
    return {
      ...(server ? { AURORA_BENCH_SERVER_HOST: '127.0.0.1', AURORA_BENCH_SERVER_PORT: String(server.port) } : {}),
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      LANG: 'C.UTF-8',
      HOME: '/root',
      AWS_ENDPOINT_URL: this.o.motoEndpoint,
      AWS_ACCESS_KEY_ID: this.o.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.o.credentials.secretAccessKey,
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  }

  /** Whether the instance's agent has started. It always has on this machine. */
  private registered(instance: EmulatedInstance): boolean {
    return instance.machine === undefined || existsSync(join(instance.machine.root.root, AGENT_STARTED_FILE));
  }

  /** Puts the agent behind the SSM client and the instance lifecycle behind the EC2 client. */
  install(clients: { ssm: Parameters<typeof interceptClient>[0]; ec2: Parameters<typeof interceptClient>[0] }): void {
    interceptClient(clients.ssm, 'auroraBenchRehearsalSsm', (command, input, forward) =>
      this.handleSsm(command, input, forward),
    );
    interceptClient(clients.ec2, 'auroraBenchRehearsalEc2', (command, input, forward) =>
      this.handleEc2(command, input, forward),
    );
  }

  // ------------------------------------------------------------------ EC2

  private async handleEc2(command: string, input: Record<string, unknown>, forward: Forward): Promise<SdkResult> {
    if (command === 'RunInstances') {
      const result = await forward();
      const role = launchesServers(input) ? 'server' : 'client';
      for (const i of (result.output['Instances'] as { InstanceId?: string }[] | undefined) ?? []) {
        if (i.InstanceId && !this.instances.has(i.InstanceId))
          await this.bootInstance(i.InstanceId, role, instanceTags(input));
      }
      return result;
    }
    if (command === 'TerminateInstances') {
      const result = await forward();
      for (const id of (input['InstanceIds'] as string[] | undefined) ?? []) await this.terminateInstance(id);
      return result;
    }
    return forward();
  }

  private async bootInstance(
    instanceId: string,
    role: 'client' | 'server',
    tags: ReadonlyMap<string, string>,
  ): Promise<void> {
    if (this.o.machines) return this.bootMachine(instanceId, role, tags, this.o.machines);
    const home = join(this.o.dir, String(++this.homes));
    await mkdir(join(home, 'tmp'), { recursive: true });
    const instance: EmulatedInstance = {
      instanceId,
      home,
      terminated: false,
      invocations: new Map(),
      ...(role === 'server' ? { server: { port: await findFreePort() } } : {}),
    };
    this.instances.set(instanceId, instance);
    const script = join(home, 'boot.sh');
    await writeFile(script, this.o.bootCommands({ instanceId, home, role }).join('\n') + '\n', { mode: 0o700 });
    const logFd = openSync(join(home, 'boot.log'), 'w');
    let child: ChildProcess;
    try {
      child = spawn('bash', [script], {
        cwd: home,
        env: this.env(home, instance.server),
        detached: true,
        stdio: ['ignore', logFd, logFd],
      });
    } finally {
      closeSync(logFd);
    }
    if (child.pid === undefined) throw new Error(`could not start the boot of ${instanceId}`);
    child.unref();
    this.o.tracker.add(child.pid, { group: true, marker: home });
    const boot: NonNullable<EmulatedInstance['boot']> = {
      child,
      done: new Promise<void>((resolve) => {
        child.once('exit', (code) => {
          boot.exit = code;
          this.o.tracker.remove(child.pid!);
          if (code !== 0 && !instance.terminated)
            this.log(
              `${instanceId}: boot failed (exit ${code}): ` +
                readText(join(home, 'boot.log')).trim().split('\n').slice(-5).join(' | '),
            );
          resolve();
        });
      }),
    };
    instance.boot = boot;
    this.log(
      `${instanceId}: launched${instance.server ? ` (server, port ${instance.server.port})` : ''}, booting in ${home}`,
    );
  }

  /** Boots a Debian machine: its root, its metadata service, then the user data in it. */
  private async bootMachine(
    instanceId: string,
    role: 'client' | 'server',
    tags: ReadonlyMap<string, string>,
    machines: NonNullable<SsmAgentOptions['machines']>,
  ): Promise<void> {
    const dir = join(this.o.dir, String(++this.homes));
    await mkdir(dir, { recursive: true });
    const imds = await startImds(instanceId, tags, this.o.credentials);
    let root: InstanceRoot;
    try {
      root = await mountInstanceRoot(dir, machines.layers(role));
    } catch (e) {
      imds.close();
      throw e;
    }
    if (!this.exitHook) {
      // A forced exit skips shutdown(), and the machines' processes and mounts must not outlive the process.
      this.exitHook = () => {
        for (const i of this.instances.values()) if (i.machine) unmountUnder(i.machine.root.root);
      };
      process.once('exit', this.exitHook);
    }
    const instance: EmulatedInstance = {
      instanceId,
      home: join(root.root, MACHINE_HOME),
      machine: { root, imds },
      terminated: false,
      invocations: new Map(),
      ...(role === 'server' ? { server: { port: await findFreePort() } } : {}),
    };
    this.instances.set(instanceId, instance);
    await writeStandIns(root.root, {
      awsEndpoint: this.o.motoEndpoint,
      imdsPort: (imds.address() as AddressInfo).port,
    });
    const script = join(root.root, USER_DATA_SCRIPT);
    await mkdir(join(script, '..'), { recursive: true });
    await writeFile(script, machines.userData(role), { mode: 0o700 });
    await machines.beforeUserData?.(root.root);
    const logFd = openSync(join(dir, 'boot.log'), 'w');
    let child: ChildProcess;
    try {
      child = spawn('chroot', [root.root, USER_DATA_SCRIPT], {
        cwd: '/',
        env: this.machineEnv(instance.server),
        detached: true,
        stdio: ['ignore', logFd, logFd],
      });
    } finally {
      closeSync(logFd);
    }
    if (child.pid === undefined) throw new Error(`could not start the boot of ${instanceId}`);
    child.unref();
    const started = Date.now();
    const boot: NonNullable<EmulatedInstance['boot']> = {
      child,
      done: new Promise<void>((resolve) => {
        child.once('exit', (code) => {
          boot.exit = code;
          if (!instance.terminated) {
            const tail = readText(join(dir, 'boot.log')).trim().split('\n').slice(-5).join(' | ');
            this.log(
              `${instanceId}: user data ` +
                (code === 0 ? 'finished' : `failed (exit ${code})`) +
                ` in ` +
                ((Date.now() - started) / 1000).toFixed(1) +
                ` s${code === 0 ? '' : `: ${tail}`}`,
            );
          }
          resolve();
        });
      }),
    };
    instance.boot = boot;
    this.log(
      `${instanceId}: launched` +
        (instance.server ? ` (server, port ${instance.server.port})` : '') +
        `, booting its user data in the Debian root ${root.root}`,
    );
  }

  private async terminateInstance(instanceId: string): Promise<void> {
    const instance = this.instances.get(instanceId);
    if (!instance || instance.terminated) return;
    instance.terminated = true;
    if (instance.boot && instance.boot.exit === undefined && instance.boot.child.pid)
      killGroup(instance.boot.child.pid);
    for (const inv of instance.invocations.values()) {
      if (inv.status === 'InProgress' && inv.child?.pid) {
        inv.stopReason = 'cancel';
        killGroup(inv.child.pid);
      }
    }
    await settledWithin(
      [instance.boot?.done, ...[...instance.invocations.values()].map((i) => i.done)],
      TERMINATE_WAIT_MS,
    );
    if (instance.server) {
      await this.o.onServerChanged?.(instanceId, undefined);
      await this.stopServer(instance);
    }
    if (instance.machine) {
      instance.machine.imds.close();
      await removeInstanceRoot(instance.machine.root);
    } else {
      await rm(instance.home, { recursive: true, force: true });
    }
    this.log(`${instanceId}: terminated`);
  }

  /** The mariadbd client/server-setup.sh started for a server instance, if it still runs there. */
  private serverPid(instance: EmulatedInstance): number | undefined {
    const pid = Number(readText(join(instance.home, 'server', 'mariadbd.pid')).trim());
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
    // Only a process of this instance counts, never a reused pid.
    if (instance.machine) return processesInRoot(instance.machine.root.root).includes(pid) ? pid : undefined;
    return processCmdline(pid)?.some((a) => a.includes(instance.home)) ? pid : undefined;
  }

  /** Tracks a server's mariadbd, so a crash of the rehearsal still kills it. */
  private async trackServer(instance: EmulatedInstance, inv: Invocation): Promise<void> {
    const pid = this.serverPid(instance);
    if (pid === undefined) return;
    // A machine's processes are stopped by their root, also at exit.
    if (!instance.machine) this.o.tracker.add(pid, { group: false, marker: instance.home, owner: processUid(pid) });
    // The setup's last line when it succeeded.
    let ready: { ready?: unknown; role?: unknown; port?: unknown; serverId?: unknown } | undefined;
    try {
      ready = JSON.parse(inv.stdout.trim().split('\n').pop() ?? '') as typeof ready;
    } catch {
      return; // Not a setup command, or a failed one.
    }
    if (ready?.ready !== true || typeof ready.port !== 'number' || !this.o.onServerChanged) return;
    const dir = join(instance.home, 'server');
    // In a Debian root the option file names the socket by its path inside the root.
    // So this machine's sampler reaches the server over its TCP port instead.
    const clientDefaultsFile = instance.machine
      ? await hostClientOptionFile(instance.machine.root, join(MACHINE_HOME, 'server', 'client.cnf'), ready.port)
      : join(dir, 'client.cnf');
    await this.o.onServerChanged(instance.instanceId, {
      instanceId: instance.instanceId,
      role: ready.role === 'replica' ? 'reader' : 'writer',
      serverId: typeof ready.serverId === 'number' ? ready.serverId : 0,
      host: '127.0.0.1',
      port: ready.port,
      pid,
      dir,
      datadir: join(dir, 'data'),
      socket: join(dir, 'mariadbd.sock'),
      defaultsFile: join(dir, 'my.cnf'),
      clientDefaultsFile,
      errorLog: join(dir, 'error.log'),
      client: 'mariadb',
    });
  }

  private async stopServer(instance: EmulatedInstance): Promise<void> {
    const pid = this.serverPid(instance);
    if (pid === undefined) return;
    process.kill(pid, 'SIGTERM');
    if (!(await waitForExit(pid, 30_000)) && this.serverPid(instance) === pid) process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
    if (!instance.machine) this.o.tracker.remove(pid);
  }

  // ------------------------------------------------------------------ SSM

  private async handleSsm(command: string, input: Record<string, unknown>, forward: Forward): Promise<SdkResult> {
    switch (command) {
      case 'SendCommand':
        return this.sendCommand(input, forward);
      case 'GetCommandInvocation':
        return this.getCommandInvocation(input);
      case 'ListCommands':
        return this.listCommands(await forward());
      case 'CancelCommand':
        return this.cancelCommand(input);
      case 'DescribeInstanceInformation':
        return this.describeInstanceInformation(input);
      default:
        return forward();
    }
  }

  private ssmError(code: string, message: string): Error {
    return serviceError(code, message, SSMServiceException);
  }

  private async sendCommand(input: Record<string, unknown>, forward: Forward): Promise<SdkResult> {
    const documentName = text(input['DocumentName']);
    if (documentName !== 'AWS-RunShellScript')
      throw this.ssmError('InvalidDocument', `the rehearsal's agent runs AWS-RunShellScript only, not ${documentName}`);
    const ids = (input['InstanceIds'] as string[] | undefined) ?? [];
    for (const id of ids) {
      const inst = this.instances.get(id);
      // SendCommand to an instance that is not a running managed node fails with InvalidInstanceId.
      if (!inst || inst.terminated || !this.registered(inst))
        throw this.ssmError('InvalidInstanceId', `Instances [${id}] not in a valid state for account`);
    }
    const params = (input['Parameters'] as Record<string, string[]> | undefined) ?? {};
    const commands = params['commands'] ?? [];
    const timeoutS = Number(params['executionTimeout']?.[0] ?? DEFAULT_EXECUTION_TIMEOUT_S);
    const result = await forward();
    const commandId = (result.output['Command'] as { CommandId?: string } | undefined)?.CommandId ?? '';
    if (!commandId) throw new Error('moto answered SendCommand without a CommandId');
    for (const id of ids) await this.startInvocation(this.instances.get(id)!, commandId, input, commands, timeoutS);
    return result;
  }

  private async startInvocation(
    instance: EmulatedInstance,
    commandId: string,
    input: Record<string, unknown>,
    commands: readonly string[],
    timeoutS: number,
  ): Promise<void> {
    // Where the agent keeps a command's files in a machine.
    const inRoot = join('/var/lib/amazon/ssm', instance.instanceId, 'document', 'orchestration', commandId, PLUGIN_DIR);
    const dir = instance.machine
      ? join(instance.machine.root.root, inRoot)
      : join(instance.home, 'ssm', commandId, PLUGIN_DIR);
    await mkdir(dir, { recursive: true });
    const script = join(dir, '_script.sh');
    await writeFile(script, commands.join('\n') + '\n', { mode: 0o700 });
    const stdoutFile = join(dir, 'stdout');
    const stderrFile = join(dir, 'stderr');
    const outFd = openSync(stdoutFile, 'w');
    const errFd = openSync(stderrFile, 'w');
    let child: ChildProcess;
    try {
      child = instance.machine
        ? spawn(
            'chroot',
            [instance.machine.root.root, '/bin/sh', '-c', 'cd "$1" && exec /bin/sh -c "$1/_script.sh"', 'sh', inRoot],
            {
              cwd: '/',
              env: this.machineEnv(instance.server),
              detached: true,
              stdio: ['ignore', outFd, errFd],
            },
          )
        : spawn('bash', ['--posix', '-c', script], {
            cwd: dir,
            env: this.env(instance.home, instance.server),
            detached: true,
            stdio: ['ignore', outFd, errFd],
          });
    } finally {
      closeSync(outFd);
      closeSync(errFd);
    }
    if (child.pid === undefined) throw new Error(`could not start command ${commandId} on ${instance.instanceId}`);
    child.unref();
    if (!instance.machine) this.o.tracker.add(child.pid, { group: true, marker: instance.home });
    const prefix = typeof input['OutputS3KeyPrefix'] === 'string' ? input['OutputS3KeyPrefix'] : undefined;
    const inv: Invocation = {
      commandId,
      instanceId: instance.instanceId,
      comment: typeof input['Comment'] === 'string' ? input['Comment'] : undefined,
      documentName: text(input['DocumentName']),
      dir,
      outputBucket: typeof input['OutputS3BucketName'] === 'string' ? input['OutputS3BucketName'] : undefined,
      outputPrefix: prefix,
      startedAt: new Date(),
      status: 'InProgress',
      responseCode: -1,
      stdout: '',
      stderr: '',
      child,
      done: Promise.resolve(),
    };
    const timer = setTimeout(() => {
      if (inv.status !== 'InProgress' || !child.pid) return;
      inv.stopReason = 'timeout';
      killGroup(child.pid);
    }, timeoutS * 1000);
    timer.unref();
    inv.done = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (!instance.machine) this.o.tracker.remove(child.pid!);
        void this.finish(inv, code, signal, stdoutFile, stderrFile)
          .then(() => (instance.server && inv.status === 'Success' ? this.trackServer(instance, inv) : undefined))
          .catch((e: unknown) => this.log(`${instance.instanceId}: ${(e as Error).message}`))
          .finally(resolve);
      });
    });
    instance.invocations.set(commandId, inv);
  }

  private async finish(
    inv: Invocation,
    code: number | null,
    signal: NodeJS.Signals | null,
    stdoutFile: string,
    stderrFile: string,
  ): Promise<void> {
    inv.stdout = readText(stdoutFile);
    inv.stderr = readText(stderrFile);
    const exit = code ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : 15) : STOPPED_EXIT_CODE);
    // The agent uploads what the command wrote before anyone reads the final status here.
    if (inv.outputBucket) {
      const base =
        (inv.outputPrefix ? inv.outputPrefix.replace(/\/+$/, '') + '/' : '') +
        `${inv.commandId}/${inv.instanceId}/awsrunShellScript/0.awsrunShellScript/`;
      for (const [name, body] of [
        ['stdout', inv.stdout],
        ['stderr', inv.stderr],
      ] as const) {
        if (body === '') continue;
        try {
          await this.o.s3.send(new PutObjectCommand({ Bucket: inv.outputBucket, Key: base + name, Body: body }));
        } catch (e) {
          this.log(`${inv.instanceId}: could not upload ${name} of ${inv.commandId}: ${(e as Error).message}`);
        }
      }
    }
    inv.responseCode = inv.stopReason ? STOPPED_EXIT_CODE : exit;
    inv.endedAt = new Date();
    inv.status =
      inv.stopReason === 'cancel'
        ? 'Cancelled'
        : inv.stopReason === 'timeout'
          ? 'TimedOut'
          : exit === 0
            ? 'Success'
            : 'Failed';
    inv.child = undefined;
  }

  private findInvocation(commandId: string, instanceId?: string): Invocation[] {
    const found: Invocation[] = [];
    for (const inst of this.instances.values()) {
      if (instanceId !== undefined && inst.instanceId !== instanceId) continue;
      const inv = inst.invocations.get(commandId);
      if (inv) found.push(inv);
    }
    return found;
  }

  private outputUrl(inv: Invocation, name: 'stdout' | 'stderr'): string {
    if (!inv.outputBucket) return '';
    const prefix = inv.outputPrefix ? inv.outputPrefix.replace(/\/+$/, '') + '/' : '';
    return `https://s3.${this.o.region}.amazonaws.com/${inv.outputBucket}/${prefix}${inv.commandId}/${inv.instanceId}/awsrunShellScript/0.awsrunShellScript/${name}`;
  }

  private getCommandInvocation(input: Record<string, unknown>): SdkResult {
    const [inv] = this.findInvocation(text(input['CommandId']), text(input['InstanceId']));
    if (!inv)
      throw this.ssmError(
        'InvocationDoesNotExist',
        'An error occurred (InvocationDoesNotExist) when calling the GetCommandInvocation operation',
      );
    const finished = inv.status !== 'InProgress';
    const details = inv.status === 'TimedOut' ? 'ExecutionTimedOut' : inv.status;
    return answer({
      CommandId: inv.commandId,
      InstanceId: inv.instanceId,
      Comment: inv.comment ?? '',
      DocumentName: inv.documentName,
      PluginName: 'aws:runShellScript',
      ResponseCode: inv.responseCode,
      ExecutionStartDateTime: inv.startedAt.toISOString(),
      ...(inv.endedAt
        ? {
            ExecutionEndDateTime: inv.endedAt.toISOString(),
            ExecutionElapsedTime: `PT${((inv.endedAt.getTime() - inv.startedAt.getTime()) / 1000).toFixed(3)}S`,
          }
        : {}),
      Status: inv.status,
      StatusDetails: details,
      StandardOutputContent: finished ? truncate(inv.stdout, STDOUT_LIMIT) : '',
      StandardOutputUrl: finished ? this.outputUrl(inv, 'stdout') : '',
      StandardErrorContent: finished ? truncate(inv.stderr, STDERR_LIMIT) : '',
      StandardErrorUrl: finished ? this.outputUrl(inv, 'stderr') : '',
    });
  }

  private listCommands(result: SdkResult): SdkResult {
    const commands = ((result.output['Commands'] as Record<string, unknown>[] | undefined) ?? []).map((c) => {
      const invs = this.findInvocation(text(c['CommandId']));
      if (invs.length === 0) return c;
      const running = invs.some((i) => i.status === 'InProgress');
      const status = running ? 'InProgress' : (invs.find((i) => i.status !== 'Success')?.status ?? 'Success');
      return { ...c, Status: status, StatusDetails: status === 'TimedOut' ? 'ExecutionTimedOut' : status };
    });
    return { ...result, output: { ...result.output, Commands: commands } };
  }

  private cancelCommand(input: Record<string, unknown>): SdkResult {
    const commandId = text(input['CommandId']);
    const only = input['InstanceIds'] as string[] | undefined;
    const invs = this.findInvocation(commandId).filter(
      (i) => only === undefined || only.length === 0 || only.includes(i.instanceId),
    );
    if (this.findInvocation(commandId).length === 0)
      throw this.ssmError('InvalidCommandId', `command ${commandId} is unknown`);
    for (const inv of invs) {
      if (inv.status !== 'InProgress' || !inv.child?.pid) continue;
      inv.stopReason = 'cancel';
      killGroup(inv.child.pid);
    }
    return answer({});
  }

  private describeInstanceInformation(input: Record<string, unknown>): SdkResult {
    const wanted = new Set<string>();
    for (const f of (input['Filters'] as { Key?: string; Values?: string[] }[] | undefined) ?? [])
      if (f.Key === 'InstanceIds') for (const v of f.Values ?? []) wanted.add(v);
    for (const f of (input['InstanceInformationFilterList'] as { key?: string; valueSet?: string[] }[] | undefined) ??
      [])
      if (f.key === 'InstanceIds') for (const v of f.valueSet ?? []) wanted.add(v);
    const list = [...this.instances.values()]
      .filter((i) => !i.terminated && this.registered(i) && (wanted.size === 0 || wanted.has(i.instanceId)))
      .map((i) => ({
        InstanceId: i.instanceId,
        PingStatus: 'Online',
        LastPingDateTime: new Date(),
        PlatformType: 'Linux',
        PlatformName: i.machine ? 'Debian GNU/Linux' : 'Amazon Linux',
        ResourceType: 'EC2Instance',
        AgentVersion: 'rehearsal',
      }));
    return answer({ InstanceInformationList: list });
  }

  // ------------------------------------------------------------------ what is left

  /** Commands still running and instances not terminated. */
  leftovers(): string[] {
    const left: string[] = [];
    for (const i of this.instances.values()) {
      if (!i.terminated) left.push(`${i.server ? 'server' : 'client'} ${i.instanceId} (not terminated)`);
      for (const inv of i.invocations.values())
        if (inv.status === 'InProgress') left.push(`command ${inv.commandId} on ${i.instanceId} (still running)`);
    }
    return left;
  }

  /** Kills everything every instance still runs and removes the homes. */
  async shutdown(): Promise<void> {
    for (const id of [...this.instances.keys()]) await this.terminateInstance(id);
    this.instances.clear();
    if (this.exitHook) process.off('exit', this.exitHook);
    await rm(this.o.dir, { recursive: true, force: true });
  }
}
