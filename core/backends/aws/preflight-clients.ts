/**
 * The client checks of the AWS preflight. Each client and self-managed server type must exist,
 * have a launch template for its architecture, and be offered in its AZ.
 * The EC2 vCPU quota must hold what the plan runs at once, on top of what already runs.
 */
import {
  DescribeInstancesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  type _InstanceType,
  type Instance,
} from '@aws-sdk/client-ec2';
import { GetAWSDefaultServiceQuotaCommand, GetServiceQuotaCommand } from '@aws-sdk/client-service-quotas';
import type { Plan } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import { variantAz } from './placement';
import { peakClientVcpus, serverTypeOf, STANDARD_VCPU_QUOTA, vcpuQuotaGroup } from './vcpu-quota';
import { errorCode } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig, ClientArchitecture } from './config';
import {
  ask,
  CheckResult,
  guarded,
  NotCheckable,
  specVariantIndex,
  unanswered,
  type PreflightCheck,
} from './preflight-common';

export interface InstanceTypeFacts {
  readonly architecture: ClientArchitecture | undefined;
  readonly reported: readonly string[];
  readonly vcpus: number;
}

/** Instance type facts by type. EC2 reports an unknown type as the error InvalidInstanceType. */
export class InstanceTypeCatalog {
  private readonly known = new Map<string, Promise<InstanceTypeFacts | undefined>>();
  constructor(private readonly clients: AwsClients) {}

  get(instanceType: string): Promise<InstanceTypeFacts | undefined> {
    let found = this.known.get(instanceType);
    if (!found) {
      found = this.describe(instanceType);
      this.known.set(instanceType, found);
    }
    return found;
  }

  private async describe(instanceType: string): Promise<InstanceTypeFacts | undefined> {
    try {
      const out = await this.clients.ec2.send(
        new DescribeInstanceTypesCommand({ InstanceTypes: [instanceType as _InstanceType] }),
      );
      const info = out.InstanceTypes?.[0];
      if (!info) return undefined;
      const reported = info.ProcessorInfo?.SupportedArchitectures ?? [];
      const architecture = reported.includes('arm64') ? 'arm64' : reported.includes('x86_64') ? 'x86_64' : undefined;
      return { architecture, reported, vcpus: info.VCpuInfo?.DefaultVCpus ?? 0 };
    } catch (e) {
      if (/InvalidInstanceType/.test(errorCode(e))) return undefined;
      return unanswered('ec2:DescribeInstanceTypes', e);
    }
  }
}

export interface ClientCheckInput {
  readonly plan: Plan;
  readonly spec: Spec;
  readonly clients: AwsClients;
  readonly config: AwsBackendConfig | undefined;
  readonly types: InstanceTypeCatalog;
  readonly stackLabel: string;
}

/** Whether EC2 offers an instance type in an AZ, asked once per pair. An empty answer means no. */
function typeOfferings(clients: AwsClients): (type: string, az: string) => Promise<boolean> {
  const offered = new Map<string, Promise<boolean>>();
  return (type, az) => {
    const key = `${type}@${az}`;
    if (!offered.has(key)) {
      offered.set(
        key,
        ask('ec2:DescribeInstanceTypeOfferings', () =>
          clients.ec2.send(
            new DescribeInstanceTypeOfferingsCommand({
              LocationType: 'availability-zone',
              Filters: [
                { Name: 'instance-type', Values: [type] },
                { Name: 'location', Values: [az] },
              ],
            }),
          ),
        ).then((out) => (out.InstanceTypeOfferings ?? []).length > 0),
      );
    }
    return offered.get(key)!;
  };
}

/**
 * A self-managed variant's server type exists, is x86_64 or arm64 with a server launch template,
 * and is offered in its AZ.
 */
export async function checkServerInstances(input: ClientCheckInput): Promise<PreflightCheck> {
  const result = new CheckResult('server-instances', 'self-managed server instances');
  const { plan, spec, clients, config, types } = input;
  return guarded(result, 'variants', async () => {
    const offeredIn = typeOfferings(clients);
    const described: string[] = [];
    for (const variant of spec.variants) {
      const planned = plan.cells.find((c) => c.variant.name === variant.name)?.variant;
      const type = planned ? serverTypeOf(plan, planned) : undefined;
      if (!planned || type === undefined) continue;
      const path = `variants[${specVariantIndex(spec, variant.name)}].instanceClass`;
      const facts = await types.get(type);
      if (!facts) {
        result.refuse(
          path,
          `EC2 instance type ${type} (the self-managed server of ${planned.instanceClass}) does not exist ` +
            `in ${plan.region}: choose another class (e.g. db.r6g.large)`,
        );
        continue;
      }
      if (!facts.architecture) {
        result.refuse(
          path,
          `EC2 instance type ${type} is not x86_64 or arm64 ` +
            `(reported: ${facts.reported.join(', ') || 'nothing'}): choose another class`,
        );
        continue;
      }
      if (
        config &&
        (!config.serverLaunchTemplateIds?.[facts.architecture] ||
          !config.serverSecurityGroupId ||
          !config.serverInstanceProfileArn)
      ) {
        result.refuse(
          path,
          `${type} is ${facts.architecture} but ${input.stackLabel} has no self-managed server launch template ` +
            `for ${facts.architecture} (or no server security group or instance profile): deploy the current ` +
            `stack with "${facts.architecture}" in aurora-bench.clients.architectures`,
        );
      }
      const az = config
        ? variantAz(plan.region, planned, config.subnetIdsByAz)
        : planned.az !== undefined
          ? `${plan.region}${planned.az}`
          : undefined;
      if (az !== undefined && !(await offeredIn(type, az)))
        result.refuse(
          path,
          `EC2 does not offer ${type} in ${az} (DescribeInstanceTypeOfferings): choose another class, or another AZ`,
        );
      described.push(
        `${1 + planned.readers} x ${type} (${facts.architecture}, ${facts.vcpus} vCPUs)${az ? ` in ${az}` : ''}`,
      );
    }
    return described.length === 0 ? 'no self-managed variant' : [...new Set(described)].join('; ');
  });
}

export async function checkClientInstances(input: ClientCheckInput): Promise<PreflightCheck> {
  const result = new CheckResult('client-instances', 'client instances');
  const { plan, spec, clients, config, types } = input;
  return guarded(result, 'variants', async () => {
    const offeredIn = typeOfferings(clients);
    const described: string[] = [];
    for (const variant of spec.variants) {
      const planned = plan.cells.find((c) => c.variant.name === variant.name)?.variant;
      if (!planned) continue;
      const vi = specVariantIndex(spec, variant.name);
      const path = `variants[${vi}].clients.instanceType`;
      const type = planned.clients.instanceType;
      const facts = await types.get(type);
      if (!facts) {
        result.refuse(
          path,
          `EC2 instance type ${type} does not exist in ${plan.region}: choose another client type (e.g. c6i.large)`,
        );
        continue;
      }
      if (!facts.architecture) {
        result.refuse(
          path,
          `EC2 instance type ${type} is not x86_64 or arm64 ` +
            `(reported: ${facts.reported.join(', ') || 'nothing'}): choose another client type`,
        );
        continue;
      }
      if (config && !config.launchTemplateIds[facts.architecture]) {
        result.refuse(
          path,
          `${type} is ${facts.architecture} but ${input.stackLabel} has no launch template ` +
            `for ${facts.architecture} clients: add "${facts.architecture}" to ` +
            `aurora-bench.clients.architectures in cdk.json and redeploy, or choose a client type of another ` +
            `architecture`,
        );
      }
      const az = config
        ? variantAz(plan.region, planned, config.subnetIdsByAz)
        : planned.az !== undefined
          ? `${plan.region}${planned.az}`
          : undefined;
      if (az !== undefined && !(await offeredIn(type, az))) {
        result.refuse(
          path,
          `EC2 does not offer ${type} in ${az} (DescribeInstanceTypeOfferings): choose another client type, or ` +
            `another AZ with variants[${vi}].az`,
        );
      }
      described.push(
        `${planned.clients.count} x ${type} (${facts.architecture}, ${facts.vcpus} vCPUs)${az ? ` in ${az}` : ''}`,
      );
    }
    return [...new Set(described)].join('; ');
  });
}

/**
 * vCPUs of the running On-Demand instances on the Standard quota.
 * Spot instances have their own quotas. We count the instances, not the AWS/Usage metric.
 */
async function runningStandardVcpus(
  clients: AwsClients,
  types: InstanceTypeCatalog,
): Promise<{ vcpus: number; instances: number }> {
  let vcpus = 0;
  let instances = 0;
  let token: string | undefined;
  do {
    const out = await ask('ec2:DescribeInstances', () =>
      clients.ec2.send(
        new DescribeInstancesCommand({
          Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running'] }],
          MaxResults: 1000,
          ...(token ? { NextToken: token } : {}),
        }),
      ),
    );
    const all: Instance[] = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []);
    for (const i of all) {
      if (i.InstanceLifecycle === 'spot' || !i.InstanceType || vcpuQuotaGroup(i.InstanceType) !== 'Standard') continue;
      const cores = i.CpuOptions?.CoreCount;
      const threads = i.CpuOptions?.ThreadsPerCore;
      vcpus +=
        cores !== undefined && threads !== undefined
          ? cores * threads
          : ((await types.get(i.InstanceType))?.vcpus ?? 0);
      instances++;
    }
    token = out.NextToken || undefined;
  } while (token);
  return { vcpus, instances };
}

/**
 * The applied value of the Standard quota, else its default.
 * GetServiceQuota retrieves no quota whose applied value is not available.
 * See AWS, Service Quotas API Reference, GetServiceQuota.
 */
async function standardQuota(clients: AwsClients): Promise<number> {
  const q = { ServiceCode: STANDARD_VCPU_QUOTA.serviceCode, QuotaCode: STANDARD_VCPU_QUOTA.quotaCode };
  try {
    const out = await clients.serviceQuotas.send(new GetServiceQuotaCommand(q));
    if (out.Quota?.Value !== undefined) return out.Quota.Value;
  } catch (e) {
    if (errorCode(e) !== 'NoSuchResourceException') unanswered('servicequotas:GetServiceQuota', e);
  }
  const fallback = await ask('servicequotas:GetAWSDefaultServiceQuota', () =>
    clients.serviceQuotas.send(new GetAWSDefaultServiceQuotaCommand(q)),
  );
  if (fallback.Quota?.Value === undefined)
    throw new NotCheckable(`Service Quotas returned no value for ${STANDARD_VCPU_QUOTA.quotaCode}`);
  return fallback.Quota.Value;
}

export async function checkVcpuQuota(input: ClientCheckInput): Promise<PreflightCheck> {
  const result = new CheckResult('vcpu-quota', 'EC2 vCPU quota');
  const { plan, spec, clients, types } = input;
  const quotaPath = `account: EC2 quota ${STANDARD_VCPU_QUOTA.quotaCode} (${STANDARD_VCPU_QUOTA.name})`;
  return guarded(result, quotaPath, async () => {
    const facts = new Map<string, number | undefined>();
    for (const c of plan.cells) {
      const type = c.variant.clients.instanceType;
      if (!facts.has(type)) facts.set(type, (await types.get(type))?.vcpus);
      const serverType = serverTypeOf(plan, c.variant);
      if (serverType !== undefined && !facts.has(serverType))
        facts.set(serverType, (await types.get(serverType))?.vcpus);
    }
    for (const [type] of facts) {
      const group = vcpuQuotaGroup(type);
      if (group !== 'Standard' && plan.cells.some((c) => c.variant.clients.instanceType === type)) {
        const vi = specVariantIndex(
          spec,
          plan.cells.find((c) => c.variant.clients.instanceType === type)!.variant.name,
        );
        result.warn(
          `variants[${vi}].clients.instanceType`,
          `${type} draws on the "${group}" On-Demand vCPU quota, which the preflight does not check ` +
            `(only ${STANDARD_VCPU_QUOTA.quotaCode}): look it up in Service Quotas, Amazon EC2`,
        );
      }
    }
    const peak = peakClientVcpus(plan, (t) => facts.get(t));
    if (peak.vcpus === 0) return 'no clients on the Standard quota';
    const [quota, running] = await Promise.all([standardQuota(clients), runningStandardVcpus(clients, types)]);
    const free = quota - running.vcpus;
    const need =
      `${peak.vcpus} vCPUs of ` +
      `clients` +
      (plan.cells.some((c) => serverTypeOf(plan, c.variant) !== undefined) ? ' and self-managed servers' : '') +
      ` ` +
      `at once (the largest ${peak.cells} cell${peak.cells === 1 ? '' : 's'}, ` +
      `maxConcurrency ${plan.maxConcurrency})`;
    if (peak.vcpus > free) {
      result.refuse(
        quotaPath,
        `the run needs ${need}, ${running.vcpus} vCPUs already run on ${running.instances} On-Demand Standard ` +
          `instance${running.instances === 1 ? '' : 's'}, and the quota is ${quota}: ` +
          `request an increase to at least ${running.vcpus + peak.vcpus} (Service Quotas console, Amazon EC2, ` +
          `"${STANDARD_VCPU_QUOTA.name}"), stop other instances, or lower maxConcurrency or clients.count`,
      );
    }
    return `${need}; ${running.vcpus} already running (counted from DescribeInstances); quota ${quota}`;
  });
}
