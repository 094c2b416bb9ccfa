/**
 * A cell on self-managed servers: MariaDB on EC2 instances beside the clients, with GTID replication.
 * The server side is client/server-install.sh and client/server-setup.sh, whose header says what it takes and prints.
 * API facts come from botocore secretsmanager/2017-10-17, ec2/2016-11-15 and ssm/2014-11-06.
 */
import { randomBytes } from 'node:crypto';
import { CreateSecretCommand, DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { DescribeInstancesCommand, RunInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
} from '@aws-sdk/client-ssm';
import {
  UnsupportedOnBackendError,
  type CellResources,
  type Endpoint,
  type ReadyState,
  type RunContext,
} from '../../backend';
import { renderServerOptions, serverOptionsBase64 } from '../../aurora/server-config';
import { serverHardware } from '../local/instance-classes';
import { ENGINES, serverVolumeGib } from '../../aurora/engines';
import { AuroraBenchError } from '../../errors';
import type { CellPlan } from '../../plan/types';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig, ClientArchitecture } from './config';
import { cellEngineOf } from './cluster';
import { cellNames, cellTagger, tagKeys } from './names';
import { cellAz } from './placement';
import { redact } from './redact';
import { CLIENT_HOME, CLIENT_INSTALL_DIR, shellQuote } from './runner-command';
import { findLiveInstances } from './teardown';

/**
 * A server's setup script failed or printed no result. The message is the script's reason.
 * The workflow's Catch fails the cell under this name.
 * @internal exported for its tests
 */
export class ServerSetupFailedError extends AuroraBenchError {
  override readonly name = 'ServerSetupFailedError';
}

/** The stack's security group rules open this port. */
const SELF_MANAGED_PORT = 3306;
/** The database user the setup script creates from the secret, as RDS's master user. */
const SERVER_USER = 'benchadmin';
/** Letters and digits only, so no shell or SQL quoting is at stake. */
const PASSWORD_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const PASSWORD_LENGTH = 32;
/**
 * How long SSM lets server-setup.sh run. It waits up to 15 minutes for the boot's install marker.
 * Then it starts the server, and a replica waits for replication to run.
 */
const SETUP_EXECUTION_TIMEOUT_S = 1800;
/** SendCommand TimeoutSeconds: how long SSM tries to deliver it. It takes 30 to 2592000. */
const SETUP_DELIVERY_TIMEOUT_S = 600;
/** EC2 states from which an instance never runs again. */
const LOST_STATES = new Set(['shutting-down', 'terminated', 'stopping', 'stopped']);
/** GetCommandInvocation statuses of a command still under way. */
const RUNNING_STATUSES = new Set(['Pending', 'InProgress', 'Delayed', 'Cancelling']);
/**
 * The root device of the Debian 12 AMIs the server launch templates use.
 */
const ROOT_DEVICE = '/dev/xvda';

/**
 * What EC2 does not publish for an instance without an agent on it, named once in the cell's notes.
 */
const SERVER_METRICS_UNAVAILABLE =
  'self-managed servers: DatabaseConnections and ReplicaLag are not collected (AWS/EC2 gives CPUUtilization, ' +
  "NetworkIn/Out and, on Nitro-based types, EBSReadOps/EBSWriteOps; FreeableMemory is the CloudWatch agent's " +
  'CWAgent mem_available, absent when the agent did not install)';

/** The JSON line server-setup.sh prints last on success. */
interface ServerSetupResult {
  readonly ready: true;
  readonly role: 'writer' | 'replica';
  readonly host: string;
  readonly port: number;
  readonly version?: string;
  readonly serverId?: number;
}

/**
 * The result line of a setup's stdout: its last non-empty line, a JSON object with ready true, a host and a port.
 * SSM keeps only the first 24,000 characters of stdout, so the script keeps it short and prints this last.
 * Endpoints are the host and port the script prints, not the private IP.
 * So an emulation that runs several servers on one machine reports its own ports.
 */
function parseSetupResult(stdout: string): ServerSetupResult | undefined {
  const last = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1);
  if (last === undefined) return undefined;
  try {
    const parsed = JSON.parse(last) as Partial<ServerSetupResult>;
    if (
      parsed.ready !== true ||
      typeof parsed.host !== 'string' ||
      parsed.host === '' ||
      typeof parsed.port !== 'number' ||
      !Number.isInteger(parsed.port)
    )
      return undefined;
    if (parsed.role !== 'writer' && parsed.role !== 'replica') return undefined;
    return parsed as ServerSetupResult;
  } catch {
    return undefined;
  }
}

/**
 * The --options-b64 of each role, rendered for the instance's hardware as for the local backend.
 * What cannot go to a server's file refuses the cell before anything is created.
 */
function serverOptionsOf(cell: CellPlan): { writer: string; replica: string } {
  const hardware = serverHardware(cell.variant.instanceClass);
  const writer = renderServerOptions(cell.variant, hardware, 'writer');
  const replica = renderServerOptions(cell.variant, hardware, 'replica');
  const problems = [
    ...writer.problems,
    ...replica.problems.filter((p) => !writer.problems.some((w) => w.path === p.path)),
  ];
  if (problems.length > 0) {
    throw new UnsupportedOnBackendError(
      `the server options of ${cell.cellId} cannot be written:\n  ` +
        `- ${problems.map((p) => `${p.path}: ${p.message}`).join('\n  - ')}`,
    );
  }
  return { writer: serverOptionsBase64(writer.lines), replica: serverOptionsBase64(replica.lines) };
}

/**
 * AWS-RunShellScript `commands` of one server's setup.
 * @internal exported for the rehearsal's emulation test, which sends exactly these
 */
export function serverSetupCommands(options: {
  readonly region: string;
  readonly role: 'writer' | 'replica';
  readonly serverId: number;
  readonly optionsB64: string;
  readonly secretArn: string;
  readonly writer?: { readonly host: string; readonly port: number };
}): string[] {
  const args = [
    '--role',
    options.role,
    '--server-id',
    String(options.serverId),
    '--port',
    String(SELF_MANAGED_PORT),
    '--options-b64',
    options.optionsB64,
    '--secret-arn',
    options.secretArn,
    ...(options.writer ? ['--writer-host', options.writer.host, '--writer-port', String(options.writer.port)] : []),
  ];
  return [
    'set -eu',
    // The agent registers early in the boot, so SSM has the instance Online before client/ is copied.
    // So wait for server-install.sh's marker, written only after the copy, as long as server-setup.sh would.
    `h="${CLIENT_HOME}"; i=0`,
    `until [ -f "$h/server-installed" ] || [ -f "$h/server-install-failed" ]; do i=$((i + 1)); if [ "$i" ` +
      `-gt ${INSTALL_WAIT_S} ]; then echo "server-setup: no install marker in $h after ${INSTALL_WAIT_S} s: the ` +
      `user data has not finished (see /var/log/cloud-init-output.log)" >&2; exit 1; fi; sleep 1; done`,
    `export AWS_DEFAULT_REGION=${shellQuote(options.region)}`,
    `exec bash "${CLIENT_INSTALL_DIR}/server-setup.sh" ${args.map(shellQuote).join(' ')}`,
  ];
}

/**
 * server-setup.sh's own default wait for the install marker.
 */
const INSTALL_WAIT_S = 900;

/** A state key of backendState: the setup command of server `index`. */
const commandKey = (index: number) => `setupCommand${index}`;
/** A state key of backendState: the endpoint server `index` reported, as "host:port". */
const endpointKey = (index: number) => `endpoint${index}`;
/** A state key of backendState: the server version server `index` reported. */
const versionKey = (index: number) => `serverVersion${index}`;

export interface SelfManagedServersOptions {
  readonly clients: Pick<AwsClients, 'ec2' | 'ssm' | 'secrets'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
  readonly architectureOf: (instanceType: string) => Promise<ClientArchitecture>;
}

export class SelfManagedServers {
  private readonly config: AwsBackendConfig;
  private readonly clients: Pick<AwsClients, 'ec2' | 'ssm' | 'secrets'>;
  private readonly tags: ReturnType<typeof tagKeys>;
  private readonly cellTagList: ReturnType<typeof cellTagger>;
  private readonly architectureOf: (instanceType: string) => Promise<ClientArchitecture>;

  constructor(options: SelfManagedServersOptions) {
    this.config = options.config;
    this.clients = options.clients;
    this.tags = tagKeys(options.config.tagKeyPrefix);
    this.cellTagList = cellTagger(options.config.tagKeyPrefix, options.now);
    this.architectureOf = options.architectureOf;
  }

  /**
   * The secret's ARN, with a fresh password. RDS writes its managed secrets as this SecretString too.
   * An existing name fails with ResourceExistsException, and a retried call then reads the ARN.
   */
  private async ensureSecret(run: RunContext, cell: CellPlan): Promise<string> {
    const name = cellNames(run.runId, cell.cellId).serverSecretName;
    const bytes = randomBytes(PASSWORD_LENGTH);
    const password = Array.from(bytes, (b) => PASSWORD_CHARS[b % PASSWORD_CHARS.length]).join('');
    try {
      const out = await this.clients.secrets.send(
        new CreateSecretCommand({
          Name: name,
          Description: `aurora-bench ${run.runId} ${cell.cellId}: self-managed server credentials`,
          SecretString: JSON.stringify({ username: SERVER_USER, password }),
          Tags: this.cellTagList(run, cell),
        }),
      );
      if (out.ARN) return out.ARN;
    } catch (e) {
      if (!/ResourceExists/.test(errorCode(e))) rethrow(e, `Secrets Manager CreateSecret ${name}`);
    }
    const described = await call(`Secrets Manager DescribeSecret ${name}`, () =>
      this.clients.secrets.send(new DescribeSecretCommand({ SecretId: name })),
    );
    if (!described.ARN) throw new Error(`Secrets Manager DescribeSecret ${name} returned no ARN`);
    return described.ARN;
  }

  private serverFilters(run: RunContext, cell: CellPlan, index: number) {
    return [
      { Name: `tag:${this.tags.runId}`, Values: [run.runId] },
      { Name: `tag:${this.tags.cellId}`, Values: [cell.cellId] },
      { Name: `tag:${this.tags.serverIndex}`, Values: [String(index)] },
      { Name: 'instance-state-name', Values: ['pending', 'running'] },
    ];
  }

  /** The instance of server `index`: found by its tags on a retry, else launched. */
  private async ensureServer(
    run: RunContext,
    cell: CellPlan,
    index: number,
    launch: { arch: ClientArchitecture; subnetId: string; instanceType: string },
  ): Promise<string> {
    const live = await findLiveInstances(this.clients, this.serverFilters(run, cell, index));
    if (live[0] !== undefined) return live[0].id;
    const names = cellNames(run.runId, cell.cellId);
    const role = index === 0 ? 'server-writer' : 'server-replica';
    const tags = this.cellTagList(run, cell, {
      Name: `${names.base}-${index === 0 ? 'writer' : `replica-${index}`}`,
      [this.tags.role]: role,
      [this.tags.serverIndex]: String(index),
    });
    const volumeGib = serverVolumeGib(cell.data);
    const out = await call(`EC2 RunInstances ${launch.instanceType} (${role} ${index})`, () =>
      this.clients.ec2.send(
        new RunInstancesCommand({
          MinCount: 1,
          MaxCount: 1,
          // Up to 64 ASCII characters, so a retried launch is idempotent.
          ClientToken: names.serverToken(index),
          LaunchTemplate: {
            LaunchTemplateId: this.config.serverLaunchTemplateIds![launch.arch]!,
            Version: this.config.launchTemplateVersion,
          },
          InstanceType: launch.instanceType as never,
          SubnetId: launch.subnetId,
          SecurityGroupIds: [this.config.serverSecurityGroupId!],
          IamInstanceProfile: { Arn: this.config.serverInstanceProfileArn! },
          // Detailed monitoring gives the 1-minute AWS/EC2 datapoints metrics.ts reads.
          // Basic monitoring has 5-minute ones.
          // See the EC2 User Guide, "List the available CloudWatch metrics for your instances".
          Monitoring: { Enabled: true },
          // A gp3 volume takes 1 to 65,536 GiB, at least its snapshot's size. See botocore ec2, EbsBlockDevice.
          BlockDeviceMappings: [
            {
              DeviceName: ROOT_DEVICE,
              Ebs: { VolumeSize: volumeGib, VolumeType: 'gp3', DeleteOnTermination: true, Encrypted: true },
            },
          ],
          // As the clients: the launch template's user data shuts a server down at the run's expiry.
          InstanceInitiatedShutdownBehavior: 'terminate',
          TagSpecifications: [
            { ResourceType: 'instance', Tags: tags },
            { ResourceType: 'volume', Tags: tags },
          ],
        }),
      ),
    );
    const id = out.Instances?.[0]?.InstanceId;
    if (!id) throw new Error(`EC2 RunInstances for ${role} ${index} of ${cell.cellId} returned no instance`);
    return id;
  }

  /** What the stack must provide for servers of `arch`, as the missing configuration names it. */
  private missingConfiguration(arch: ClientArchitecture): string[] {
    const missing: string[] = [];
    if (!this.config.serverLaunchTemplateIds?.[arch]) missing.push(`a server launch template for ${arch}`);
    if (!this.config.serverSecurityGroupId) missing.push('the servers security group');
    if (!this.config.serverInstanceProfileArn) missing.push('the servers instance profile');
    return missing;
  }

  async provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    const engine = cellEngineOf(run, cell);
    if (ENGINES[engine.kind].topology !== 'ec2')
      throw new UnsupportedOnBackendError(`${engine.kind} ${engine.version} is not a self-managed server engine`);
    const instanceType = cell.variant.instanceClass.replace(/^db\./, '');
    const arch = await this.architectureOf(instanceType);
    const missing = this.missingConfiguration(arch);
    if (missing.length > 0) {
      throw new UnsupportedOnBackendError(
        `self-managed servers for ${cell.cellId} (${instanceType}) need ${missing.join(', ')}: the stack does ` +
          `not provide them (deploy the current stack)`,
      );
    }
    const az = cellAz(this.config, run, cell);
    const subnetId = this.config.subnetIdsByAz[az];
    if (!subnetId)
      throw new UnsupportedOnBackendError(`no configured subnet in ${az} for the servers of ${cell.cellId}`);
    serverOptionsOf(cell);
    // The secret first. The setup scripts read it, and teardown deletes it by its name either way.
    const secretArn = await this.ensureSecret(run, cell);
    const ids: string[] = [];
    for (let index = 0; index <= cell.variant.readers; index++)
      ids.push(await this.ensureServer(run, cell, index, { arch, subnetId, instanceType }));
    const names = cellNames(run.runId, cell.cellId);
    return {
      cellId: cell.cellId,
      // No cluster: the writer instance stands for the cell where a cluster id is asked for.
      clusterId: ids[0]!,
      readers: [],
      clients: [],
      credentials: { user: SERVER_USER, secretRef: secretArn },
      notes: [{ level: 'info', path: 'engine', message: SERVER_METRICS_UNAVAILABLE }],
      backendState: {
        az,
        engine: engine.kind,
        engineVersion: engine.version,
        serverInstanceType: instanceType,
        serverArch: arch,
        serverVolumeGib: String(serverVolumeGib(cell.data)),
        serverIds: ids.join(','),
        secretArn,
        secretName: names.serverSecretName,
      },
    };
  }

  /**
   * Advances as far as it can per call, and finds what earlier calls started again.
   * It goes from running instances to SSM Online, then the writer's setup, then the replicas' pointing at the writer.
   */
  async checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const ids = (resources.backendState['serverIds'] ?? '').split(',').filter((s) => s !== '');
    if (ids.length === 0)
      throw new UnsupportedOnBackendError(
        `cell ${cell.cellId} has no server instances in its state (provisionCell did not run?)`,
      );
    const state: Record<string, string> = { ...resources.backendState };
    const pending: string[] = [];

    // 1. Running.
    const instances = await this.describe(ids);
    const running = new Set<string>();
    for (const id of ids) {
      const inst = instances.find((i) => i.InstanceId === id);
      const name = inst?.State?.Name ?? 'not visible yet';
      if (LOST_STATES.has(name)) {
        throw new ServerSetupFailedError(
          `server ${id} of ${cell.cellId} ` +
            `is ${name}${inst?.StateReason?.Message ? `: ${inst.StateReason.Message}` : ''}`,
        );
      }
      if (name === 'running') running.add(id);
      else pending.push(`${id} ${name}`);
    }
    // 2. Online in SSM, since only then can Run Command reach it.
    const online = running.size > 0 ? await this.onlineInSsm([...running]) : new Set<string>();
    for (const id of running) if (!online.has(id)) pending.push(`${id} not registered with SSM yet`);

    // 3-6. The writer's setup, then the replicas' with the writer's endpoint.
    const optionsB64 = serverOptionsOf(cell);
    const secretArn = state['secretArn'] ?? resources.credentials.secretRef;
    for (const [index, id] of ids.entries()) {
      if (state[endpointKey(index)] !== undefined) continue;
      if (!online.has(id)) continue;
      const writer = index === 0 ? undefined : parseEndpoint(state[endpointKey(0)]);
      if (index > 0 && writer === undefined) {
        pending.push(`${id} waits for the writer's setup`);
        continue;
      }
      let commandId = state[commandKey(index)];
      if (commandId === undefined) {
        // The workflow keeps ProvisionCell's resources between checks.
        // So a command sent by an earlier check is found again by its Comment.
        const commands = serverSetupCommands({
          region: this.config.region,
          role: index === 0 ? 'writer' : 'replica',
          serverId: index + 1,
          optionsB64: index === 0 ? optionsB64.writer : optionsB64.replica,
          secretArn,
          ...(writer ? { writer } : {}),
        });
        commandId = await this.sendSetup(run, cell, id, index, commands);
        state[commandKey(index)] = commandId;
      }
      const outcome = await this.setupOutcome(commandId, id);
      if (outcome.state === 'running') {
        pending.push(`${id} ${index === 0 ? 'writer' : `replica ${index}`} setup ${outcome.detail}`);
        continue;
      }
      if (outcome.state === 'failed')
        throw new ServerSetupFailedError(
          `server setup of ${index === 0 ? 'the writer' : `replica ${index}`} (${id}) of ${cell.cellId} ` +
            `failed: ${outcome.detail}`,
        );
      const result = outcome.result;
      state[endpointKey(index)] = `${result.host}:${result.port}`;
      // The replicas after it in this loop start their setup in this same call.
      if (result.version !== undefined) state[versionKey(index)] = result.version;
    }
    const withState = { ...resources, backendState: state };
    if (ids.some((_, index) => state[endpointKey(index)] === undefined)) {
      return { ready: false, resources: withState, detail: pending.join('; ') || 'server setup under way' };
    }
    const az = state['az'];
    const endpoints: Endpoint[] = ids.map((id, index) => {
      const ep = parseEndpoint(state[endpointKey(index)])!;
      return {
        instanceId: id,
        role: index === 0 ? 'writer' : 'reader',
        host: ep.host,
        port: ep.port,
        ...(az ? { az } : {}),
      };
    });
    const versions = [
      ...new Set(ids.map((_, index) => state[versionKey(index)]).filter((v): v is string => v !== undefined)),
    ];
    return {
      ready: true,
      resources: { ...withState, writer: endpoints[0]!, readers: endpoints.slice(1) },
      detail: `writer and ${ids.length - 1} replica(s) set up (${versions.join('; ') || 'version not reported'})`,
    };
  }

  private async describe(ids: readonly string[]): Promise<Instance[]> {
    const instances: Instance[] = [];
    try {
      let token: string | undefined;
      do {
        const out = await this.clients.ec2.send(
          new DescribeInstancesCommand({ InstanceIds: [...ids], ...(token ? { NextToken: token } : {}) }),
        );
        for (const r of out.Reservations ?? []) instances.push(...(r.Instances ?? []));
        token = out.NextToken;
      } while (token);
    } catch (e) {
      // Just launched instances can be briefly unknown to DescribeInstances, which is eventually consistent.
      if (isNotFound(e) || /InvalidInstanceID/.test(errorCode(e))) return [];
      rethrow(e, 'EC2 DescribeInstances (servers)');
    }
    return instances;
  }

  private async onlineInSsm(ids: readonly string[]): Promise<Set<string>> {
    const online = new Set<string>();
    let token: string | undefined;
    do {
      const out = await call('SSM DescribeInstanceInformation (servers)', () =>
        this.clients.ssm.send(
          new DescribeInstanceInformationCommand({
            Filters: [{ Key: 'InstanceIds', Values: [...ids] }],
            ...(token ? { NextToken: token } : {}),
          }),
        ),
      );
      for (const info of out.InstanceInformationList ?? [])
        if (info.InstanceId && info.PingStatus === 'Online') online.add(info.InstanceId);
      token = out.NextToken;
    } while (token);
    return online;
  }

  /**
   * Sends the setup command of server `index`, unless an earlier attempt did.
   * It is found again by its Comment, so a retried Task does not start a second setup.
   */
  private async sendSetup(
    run: RunContext,
    cell: CellPlan,
    instanceId: string,
    index: number,
    commands: string[],
  ): Promise<string> {
    // SendCommand takes a Comment of at most 100 characters.
    const comment = `aurora-bench server-setup ${cellNames(run.runId, cell.cellId).serverToken(index).slice(0, 32)}`;
    const earlier = await call(`SSM ListCommands ${instanceId}`, () =>
      this.clients.ssm.send(new ListCommandsCommand({ InstanceId: instanceId })),
    );
    const found = (earlier.Commands ?? []).find((c) => c.Comment === comment && c.CommandId);
    if (found?.CommandId) return found.CommandId;
    const out = await call(`SSM SendCommand server-setup ${instanceId}`, () =>
      this.clients.ssm.send(
        new SendCommandCommand({
          DocumentName: this.config.ssmDocumentName,
          InstanceIds: [instanceId],
          Parameters: { commands, executionTimeout: [String(SETUP_EXECUTION_TIMEOUT_S)] },
          TimeoutSeconds: SETUP_DELIVERY_TIMEOUT_S,
          Comment: comment,
          OutputS3BucketName: this.config.bucket,
          OutputS3KeyPrefix: `${this.config.ssmOutputPrefix}${run.runId}/${cell.cellId}/server-setup-${index}`.slice(
            0,
            500,
          ),
        }),
      ),
    );
    const commandId = out.Command?.CommandId;
    if (!commandId) throw new Error(`SSM SendCommand (server setup on ${instanceId}) returned no CommandId`);
    return commandId;
  }

  private async setupOutcome(
    commandId: string,
    instanceId: string,
  ): Promise<
    | { state: 'running'; detail: string }
    | { state: 'failed'; detail: string }
    | { state: 'done'; result: ServerSetupResult }
  > {
    let inv;
    try {
      inv = await this.clients.ssm.send(
        new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }),
      );
    } catch (e) {
      // Right after SendCommand, the invocation may not exist yet.
      if (/InvocationDoesNotExist/.test(errorCode(e))) return { state: 'running', detail: 'not visible in SSM yet' };
      return rethrow(e, `SSM GetCommandInvocation ${commandId} ${instanceId}`);
    }
    const status = inv.Status ?? 'Pending';
    if (RUNNING_STATUSES.has(status)) return { state: 'running', detail: status };
    if (status === 'Success') {
      const result = parseSetupResult(inv.StandardOutputContent ?? '');
      if (result !== undefined) return { state: 'done', result };
      const tail = (inv.StandardOutputContent ?? '').trim().split('\n').at(-1) ?? '';
      return {
        state: 'failed',
        detail: redact(
          `it exited 0 but its last stdout line is not the result JSON (${tail.slice(0, 300) || 'no output'})`,
        ),
      };
    }
    // The script's one-line reason is the last line of its stderr.
    const reason = (inv.StandardErrorContent ?? '').trim().split('\n').at(-1)?.slice(0, 1500) ?? '';
    const code = inv.ResponseCode !== undefined && inv.ResponseCode >= 0 ? ` exit code ${inv.ResponseCode}` : '';
    return {
      state: 'failed',
      detail: redact(`${reason || 'no reason on stderr'} (SSM ${inv.StatusDetails ?? status}${code})`),
    };
  }
}

function parseEndpoint(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  const at = text.lastIndexOf(':');
  const port = Number(text.slice(at + 1));
  return at > 0 && Number.isInteger(port) ? { host: text.slice(0, at), port } : undefined;
}
