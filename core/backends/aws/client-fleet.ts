/**
 * A cell's client fleet: EC2 instances from the stack's launch template, found again by their tags.
 * So a retried start never doubles the fleet. Clients are ready once they run and have proven that sysbench works.
 * API fields are named as in botocore ec2/2016-11-15 and ssm/2014-11-06.
 */
import {
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  RunInstancesCommand,
  type Instance,
} from '@aws-sdk/client-ec2';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DescribeInstanceInformationCommand } from '@aws-sdk/client-ssm';
import {
  UnsupportedOnBackendError,
  type CellResources,
  type ClientRef,
  type ReadyState,
  type RunContext,
} from '../../backend';
import type { CellPlan } from '../../plan/types';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig, ClientArchitecture } from './config';
import { cellNames, cellTagger, tagKeys } from './names';
import { ENGINES } from '../../aurora/engines';
import { cellEngineOf } from './cluster';
import { cellAz } from './placement';
import { redact } from './redact';
import { clientReadyKey, type ClientReadyMarker } from './runner-command';
import { findLiveInstances } from './teardown';

export interface ClientFleetOptions {
  readonly clients: Pick<AwsClients, 'ec2' | 'ssm' | 's3'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
}

export class ClientFleet {
  private readonly config: AwsBackendConfig;
  private readonly clients: Pick<AwsClients, 'ec2' | 'ssm' | 's3'>;
  private readonly tags: ReturnType<typeof tagKeys>;
  private readonly cellTagList: ReturnType<typeof cellTagger>;

  constructor(options: ClientFleetOptions) {
    this.config = options.config;
    this.clients = options.clients;
    this.tags = tagKeys(options.config.tagKeyPrefix);
    this.cellTagList = cellTagger(options.config.tagKeyPrefix, options.now);
  }

  /** x86_64 or arm64 for an EC2 instance type. */
  async architectureOf(instanceType: string): Promise<ClientArchitecture> {
    let archs: string[] = [];
    try {
      const out = await this.clients.ec2.send(
        new DescribeInstanceTypesCommand({ InstanceTypes: [instanceType as never] }),
      );
      archs = out.InstanceTypes?.[0]?.ProcessorInfo?.SupportedArchitectures ?? [];
    } catch (e) {
      if (/InvalidInstanceType/.test(errorCode(e)))
        throw new UnsupportedOnBackendError(`EC2 instance type ${instanceType} does not exist in this region`);
      rethrow(e, `EC2 DescribeInstanceTypes ${instanceType}`);
    }
    if (archs.includes('arm64')) return 'arm64';
    if (archs.includes('x86_64')) return 'x86_64';
    throw new UnsupportedOnBackendError(
      `EC2 instance type ${instanceType} is not x86_64 or arm64 (reported: ${archs.join(', ') || 'nothing'})`,
    );
  }

  private cellClientFilters(run: RunContext, cell: CellPlan) {
    return [
      { Name: `tag:${this.tags.runId}`, Values: [run.runId] },
      { Name: `tag:${this.tags.cellId}`, Values: [cell.cellId] },
      // A self-managed cell's server instances carry the same run and cell tags.
      { Name: `tag:${this.tags.role}`, Values: ['client'] },
      { Name: 'instance-state-name', Values: ['pending', 'running'] },
    ];
  }

  async startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    const names = cellNames(run.runId, cell.cellId);
    const wanted = cell.variant.clients.count;
    const az = resources.writer?.az ?? resources.backendState['az'] ?? cellAz(this.config, run, cell);
    const subnetId = this.config.subnetIdsByAz[az];
    if (!subnetId)
      throw new UnsupportedOnBackendError(`no configured subnet in ${az} for the clients of ${cell.cellId}`);
    const instanceType = cell.variant.clients.instanceType;
    const arch = await this.architectureOf(instanceType);
    const launchTemplateId = this.config.launchTemplateIds[arch];
    if (!launchTemplateId)
      throw new UnsupportedOnBackendError(`no launch template for ${arch} clients (${instanceType}) is configured`);

    // Found by tags first, since a retried call must not double the fleet. EC2's ClientToken also guards it.
    const live = await findLiveInstances(this.clients, this.cellClientFilters(run, cell));
    const missing = wanted - live.length;
    if (missing > 0) {
      const tags = this.cellTagList(run, cell, { Name: names.base + '-client', [this.tags.role]: 'client' });
      const out = await call(`EC2 RunInstances ${missing} x ${instanceType}`, () =>
        this.clients.ec2.send(
          new RunInstancesCommand({
            MinCount: missing,
            MaxCount: missing,
            // Deterministic per run, cell and count already running, so the same retry gets the same answer.
            ClientToken: names.clientToken(live.length),
            LaunchTemplate: { LaunchTemplateId: launchTemplateId, Version: this.config.launchTemplateVersion },
            InstanceType: instanceType as never,
            SubnetId: subnetId,
            SecurityGroupIds: [this.config.clientSecurityGroupId],
            IamInstanceProfile: { Arn: this.config.clientInstanceProfileArn },
            // The client's user data shuts it down at the run's expires-at.
            // `terminate` makes that the end of a client left behind.
            InstanceInitiatedShutdownBehavior: 'terminate',
            TagSpecifications: [
              { ResourceType: 'instance', Tags: tags },
              { ResourceType: 'volume', Tags: tags },
            ],
          }),
        ),
      );
      for (const i of out.Instances ?? []) {
        if (i.InstanceId)
          live.push({
            id: i.InstanceId,
            state: i.State?.Name ?? 'pending',
            ...(i.Placement?.AvailabilityZone ? { az: i.Placement.AvailabilityZone } : {}),
            ...(i.LaunchTime ? { launchTime: i.LaunchTime } : {}),
          });
      }
    }
    // Stable client order: launch time, then id.
    const ordered = [...live]
      .sort((a, b) => (a.launchTime?.getTime() ?? 0) - (b.launchTime?.getTime() ?? 0) || a.id.localeCompare(b.id))
      .slice(0, Math.max(wanted, 0));
    const clients: ClientRef[] = ordered.map((i) => ({ clientId: i.id, az: i.az ?? az }));
    return {
      ...resources,
      clients,
      backendState: { ...resources.backendState, clientArch: arch, clientInstanceType: instanceType },
    };
  }

  async checkClientsReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const ids = resources.clients.map((c) => c.clientId);
    if (ids.length === 0) return { ready: false, resources, detail: 'no clients started' };
    const instances: Instance[] = [];
    try {
      let token: string | undefined;
      do {
        const out = await this.clients.ec2.send(
          new DescribeInstancesCommand({ InstanceIds: ids, ...(token ? { NextToken: token } : {}) }),
        );
        for (const r of out.Reservations ?? []) instances.push(...(r.Instances ?? []));
        token = out.NextToken;
      } while (token);
    } catch (e) {
      // Just launched instances can be briefly unknown to DescribeInstances, which is eventually consistent.
      if (isNotFound(e) || /InvalidInstanceID/.test(errorCode(e)))
        return { ready: false, resources, detail: 'clients not visible yet' };
      rethrow(e, 'EC2 DescribeInstances (clients)');
    }
    const pending: string[] = [];
    for (const id of ids) {
      const inst = instances.find((i) => i.InstanceId === id);
      const state = inst?.State?.Name ?? 'unknown';
      if (state === 'terminated' || state === 'shutting-down' || state === 'stopped' || state === 'stopping') {
        throw new UnsupportedOnBackendError(
          `client ${id} is ${state}${inst?.StateReason?.Message ? `: ${inst.StateReason.Message}` : ''}`,
        );
      }
      if (state !== 'running') pending.push(`${id} ${state}`);
    }
    // Run Command reaches the client only once its agent is Online.
    const online = new Set<string>();
    let token: string | undefined;
    do {
      const out = await call('SSM DescribeInstanceInformation', () =>
        this.clients.ssm.send(
          new DescribeInstanceInformationCommand({
            Filters: [{ Key: 'InstanceIds', Values: ids }],
            ...(token ? { NextToken: token } : {}),
          }),
        ),
      );
      for (const info of out.InstanceInformationList ?? [])
        if (info.InstanceId && info.PingStatus === 'Online') online.add(info.InstanceId);
      token = out.NextToken;
    } while (token);
    for (const id of ids)
      if (!online.has(id) && !pending.some((p) => p.startsWith(id))) pending.push(`${id} not registered with SSM yet`);
    // The ready marker proves sysbench works. It is read for every client, also those still booting.
    // So a failed install stops the cell now, with its reason, not at the readiness deadline.
    const versions = new Set<string>();
    const driver = ENGINES[cellEngineOf(run, cell).kind].driver;
    for (const id of ids) {
      const marker = await this.readyMarker(id);
      if (marker === undefined) {
        if (!pending.some((p) => p.startsWith(id))) pending.push(`${id} installing sysbench (no ready marker yet)`);
      } else if (!marker.ready) {
        throw new UnsupportedOnBackendError(
          `client ${id} could not prove that sysbench ` +
            `works: ${redact(marker.reason ?? 'no reason given').slice(0, 1500)}`,
        );
      } else {
        // The boot builds the pgsql driver only when it found libpq and pg_config.
        // A PostgreSQL cell on clients without it stops here with the reason, not at its first step.
        if (marker.drivers !== undefined && !marker.drivers.includes(driver)) {
          throw new UnsupportedOnBackendError(
            `client ${id}: its sysbench was built without the ${driver} driver this cell's engine needs ` +
              `(compiled-in: ${marker.drivers.join(', ') || 'none'}); ` +
              `for pgsql the client's boot must install libpq's headers and pg_config (see the instance's ` +
              `/var/log/cloud-init-output.log)`,
          );
        }
        if (marker.sysbench) versions.add(marker.sysbench);
      }
    }
    if (pending.length > 0) return { ready: false, resources, detail: pending.join('; ') };
    return {
      ready: true,
      resources,
      detail:
        `${ids.length} client(s) running, online in SSM, sysbench proven ` +
        `(${[...versions].join('; ') || 'version not reported'})`,
    };
  }

  /**
   * The ready marker of a client in the stack's bucket, or undefined while there is none.
   */
  private async readyMarker(instanceId: string): Promise<ClientReadyMarker | undefined> {
    const key = clientReadyKey(instanceId);
    let text: string;
    try {
      const out = await this.clients.s3.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
      text = (await out.Body?.transformToString('utf8')) ?? '';
    } catch (e) {
      // GetObject answers NoSuchKey, or NotFound for a 404 without a body.
      // NoSuchBucket stays an error.
      if (/^(NoSuchKey|NotFound)$/.test(errorCode(e))) return undefined;
      return rethrow(e, `S3 GetObject s3://${this.config.bucket}/${key}`);
    }
    try {
      const parsed = JSON.parse(text) as Partial<ClientReadyMarker>;
      if (typeof parsed.ready !== 'boolean') throw new Error('no boolean "ready"');
      return parsed as ClientReadyMarker;
    } catch (e) {
      throw new UnsupportedOnBackendError(
        `ready marker s3://${this.config.bucket}/${key} of client ${instanceId} is not the JSON ` +
          `client-ready.sh writes (${(e as Error).message})`,
      );
    }
  }
}
