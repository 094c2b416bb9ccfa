/**
 * The On-Demand vCPUs a plan runs at once on EC2's Standard quota: its clients and self-managed servers.
 * `plan --aws` counts them offline from the instance size, so the quota can be asked for before a first run.
 */
import type { Plan } from '../../plan/types';
import { ENGINES } from '../../aurora/engines';

/**
 * "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", counted in vCPUs.
 * See the AWS CLI User Guide, Service Quotas examples.
 */
export const STANDARD_VCPU_QUOTA = {
  serviceCode: 'ec2',
  quotaCode: 'L-1216C47A',
  name: 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances',
} as const;

/** Which On-Demand vCPU quota an instance type draws on. See the EC2 User Guide, "On-Demand Instance quotas". */
export function vcpuQuotaGroup(instanceType: string): string {
  const family = /^[a-z]+/.exec(instanceType)?.[0] ?? '';
  const named: [RegExp, string][] = [
    [/^inf/, 'Inf'],
    [/^trn/, 'Trn'],
    [/^dl/, 'DL'],
    [/^hpc/, 'HPC'],
    [/^mac/, 'Mac (Dedicated Hosts)'],
    [/^u$/, 'High Memory'],
    [/^(g|vt)/, 'G and VT'],
    [/^p/, 'P'],
    [/^x/, 'X'],
    [/^f/, 'F'],
    [/^[acdhimrtz]/, 'Standard'],
  ];
  return named.find(([re]) => re.test(family))?.[1] ?? 'unknown';
}

/**
 * The EC2 type of a self-managed cell's servers, or undefined for a managed engine.
 */
export function serverTypeOf(plan: Plan, variant: Plan['cells'][number]['variant']): string | undefined {
  const engine = variant.engine ?? plan.engine;
  return ENGINES[engine.kind].topology === 'ec2' ? variant.instanceClass.replace(/^db\./, '') : undefined;
}

/**
 * The clients' vCPUs at the worst moment. A Distributed Map may run any maxConcurrency of its items together.
 * So this sums the largest maxConcurrency items. With order "duet", an item is one round's cells.
 */
export function peakClientVcpus(
  plan: Plan,
  vcpusOf: (instanceType: string) => number | undefined,
): { vcpus: number; cells: number } {
  const perItem = new Map<string, { vcpus: number; cells: number }>();
  for (const c of plan.cells) {
    const serverType = serverTypeOf(plan, c.variant);
    const clientVcpus =
      vcpuQuotaGroup(c.variant.clients.instanceType) === 'Standard'
        ? c.variant.clients.count * (vcpusOf(c.variant.clients.instanceType) ?? 0)
        : 0;
    // A self-managed cell's writer and replicas are On-Demand instances too.
    const serverVcpus =
      serverType !== undefined && vcpuQuotaGroup(serverType) === 'Standard'
        ? (1 + c.variant.readers) * (vcpusOf(serverType) ?? 0)
        : 0;
    if (clientVcpus + serverVcpus === 0) continue;
    const item = perItem.get(c.duet ?? c.cellId) ?? { vcpus: 0, cells: 0 };
    perItem.set(c.duet ?? c.cellId, { vcpus: item.vcpus + clientVcpus + serverVcpus, cells: item.cells + 1 });
  }
  const atOnce = [...perItem.values()].sort((a, b) => b.vcpus - a.vcpus).slice(0, Math.max(1, plan.maxConcurrency));
  return { vcpus: atOnce.reduce((a, b) => a + b.vcpus, 0), cells: atOnce.reduce((a, b) => a + b.cells, 0) };
}

/**
 * An instance type's default vCPUs from its size, where the size says it. Nxlarge has 4N.
 * This holds for the C, M and R families of every generation. See the Amazon EC2 Instance Types guide.
 * Undefined for burstable T types, metal and other sizes. Only DescribeInstanceTypes knows those.
 * @internal exported for its tests
 */
export function instanceSizeVcpus(instanceType: string): number | undefined {
  const m = /^([a-z0-9-]+)\.(\d*)(xlarge|large|medium)$/.exec(instanceType);
  if (!m || m[1]!.startsWith('t')) return undefined;
  if (m[3] === 'medium') return m[2] === '' ? 1 : undefined;
  if (m[3] === 'large') return m[2] === '' ? 2 : undefined;
  return 4 * (m[2] === '' ? 1 : Number(m[2]));
}

/** `plan --aws`'s line: the vCPUs the run needs at once on the Standard quota. */
export function planVcpuLine(plan: Plan): string {
  const types = [
    ...new Set(plan.cells.flatMap((c) => [c.variant.clients.instanceType, serverTypeOf(plan, c.variant) ?? []].flat())),
  ];
  const unknown = types.filter((t) => vcpuQuotaGroup(t) === 'Standard' && instanceSizeVcpus(t) === undefined);
  const peak = peakClientVcpus(plan, instanceSizeVcpus);
  const quota = `EC2 quota ${STANDARD_VCPU_QUOTA.quotaCode} "${STANDARD_VCPU_QUOTA.name}"`;
  return (
    `On-Demand vCPUs at once: ${peak.vcpus}${unknown.length > 0 ? ` and those of ${unknown.join(', ')}` : ''} ` +
    `(the largest ${peak.cells} cell${peak.cells === 1 ? '' : 's'}, maxConcurrency ${plan.maxConcurrency}) on ` +
    `${quota}: check it holds that much on top of what already runs before a first run (preflight --aws checks it)`
  );
}
