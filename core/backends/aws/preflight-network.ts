/**
 * The network check of the AWS preflight. The stack's subnets must be where the configuration says,
 * and every variant's AZ must have one. Clients there get no public IP.
 * They must still reach S3, Systems Manager, and the sources their user data downloads at boot.
 */
import {
  DescribeNatGatewaysCommand,
  DescribePrefixListsCommand,
  DescribeRouteTablesCommand,
  DescribeSubnetsCommand,
  DescribeVpcEndpointsCommand,
  type Route,
  type RouteTable,
  type Subnet,
} from '@aws-sdk/client-ec2';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { Plan } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import { variantAz } from './placement';
import { errorCode, isNotFound } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import {
  ask,
  CheckResult,
  guarded,
  isAccessDenied,
  specVariantIndex,
  unanswered,
  type PreflightCheck,
} from './preflight-common';

export interface NetworkCheckInput {
  readonly plan: Plan;
  readonly spec: Spec;
  readonly clients: AwsClients;
  readonly config: AwsBackendConfig | undefined;
  readonly stackLabel: string;
}

/** How a subnet's instances (without a public IP) reach the internet. */
type InternetPath =
  { kind: 'nat' } | { kind: 'igw' } | { kind: 'none'; why: string } | { kind: 'unknown'; why: string };

interface SubnetReach {
  readonly subnet: Subnet;
  readonly internet: InternetPath;
  readonly s3Gateway: boolean;
}

/**
 * The cdk.json setting a client download comes from.
 * Debian's archive is the AMI's, reached through a NAT, not a setting of its own.
 */
function sourceSetting(name: string): string {
  return name === 'debian' ? 'aurora-bench.network.natGateways' : `aurora-bench.clients.${name}SourceUrl`;
}

function describeTarget(r: Route): string {
  return (
    r.TransitGatewayId ??
    r.VpcPeeringConnectionId ??
    r.NetworkInterfaceId ??
    r.InstanceId ??
    r.CarrierGatewayId ??
    r.CoreNetworkArn ??
    r.LocalGatewayId ??
    r.GatewayId ??
    'an unknown target'
  );
}

/**
 * A subnet without an explicitly associated route table uses the VPC's main one.
 * See the VPC User Guide, "Route tables".
 */
async function routeTableOf(clients: AwsClients, subnet: Subnet): Promise<RouteTable | undefined> {
  const explicit = await ask('ec2:DescribeRouteTables', () =>
    clients.ec2.send(
      new DescribeRouteTablesCommand({ Filters: [{ Name: 'association.subnet-id', Values: [subnet.SubnetId!] }] }),
    ),
  );
  if (explicit.RouteTables?.[0]) return explicit.RouteTables[0];
  const main = await ask('ec2:DescribeRouteTables', () =>
    clients.ec2.send(
      new DescribeRouteTablesCommand({
        Filters: [
          { Name: 'vpc-id', Values: [subnet.VpcId!] },
          { Name: 'association.main', Values: ['true'] },
        ],
      }),
    ),
  );
  return main.RouteTables?.[0];
}

async function natAvailable(clients: AwsClients, natGatewayId: string): Promise<boolean> {
  const out = await ask('ec2:DescribeNatGateways', () =>
    clients.ec2.send(new DescribeNatGatewaysCommand({ NatGatewayIds: [natGatewayId] })),
  );
  return out.NatGateways?.[0]?.State === 'available';
}
/**
 * A NAT gateway reaches the internet. An internet gateway does so only for instances with a public IP.
 * A route to the S3 prefix list through a vpce-* is the S3 gateway endpoint.
 * Any other target may or may not reach the internet, so it is only a warning.
 * A blackhole route's target is gone. See botocore, ec2, Route.State.
 */

async function reachOf(clients: AwsClients, subnet: Subnet, s3PrefixListId: string | undefined): Promise<SubnetReach> {
  const table = await routeTableOf(clients, subnet);
  const routes = table?.Routes ?? [];
  const active = routes.filter((r) => r.State !== 'blackhole');
  const s3Gateway =
    s3PrefixListId !== undefined &&
    active.some((r) => r.DestinationPrefixListId === s3PrefixListId && (r.GatewayId ?? '').startsWith('vpce-'));
  const defaults = routes.filter((r) => r.DestinationCidrBlock === '0.0.0.0/0');
  let internet: InternetPath;
  const def = defaults[0];
  if (!def)
    internet = {
      kind: 'none',
      why: `its route table ${table?.RouteTableId ?? '(none)'} has no default route (0.0.0.0/0)`,
    };
  else if (def.State === 'blackhole')
    internet = {
      kind: 'none',
      why: `its default route to ${describeTarget(def)} is a blackhole (the target was deleted)`,
    };
  else if (def.NatGatewayId) {
    internet = (await natAvailable(clients, def.NatGatewayId))
      ? { kind: 'nat' }
      : { kind: 'none', why: `its NAT gateway ${def.NatGatewayId} is not available` };
  } else if ((def.GatewayId ?? '').startsWith('igw-')) {
    internet = subnet.MapPublicIpOnLaunch
      ? { kind: 'igw' }
      : {
          kind: 'none',
          why:
            `its default route goes to the internet gateway ${def.GatewayId}, but instances there get no ` +
            `public IP (MapPublicIpOnLaunch false)`,
        };
  } else {
    internet = {
      kind: 'unknown',
      why: `its default route goes to ${describeTarget(def)}, which may or may not reach the internet`,
    };
  }
  return { subnet, internet, s3Gateway };
}

function parseS3Url(url: string): { bucket: string; key: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  return m ? { bucket: m[1]!, key: m[2]! } : undefined;
}

export async function checkNetwork(input: NetworkCheckInput): Promise<PreflightCheck> {
  const result = new CheckResult('network', 'network and client downloads');
  const { plan, spec, clients, config, stackLabel } = input;
  if (!config) {
    result.warn(stackLabel, 'not checked: the stack configuration is unknown');
    return result.done('not checked');
  }
  return guarded(result, stackLabel, async () => {
    const region = config.region;
    // The configured subnets really are in the AZs they are listed under.
    const subnets = new Map<string, Subnet>();
    for (const [az, subnetId] of Object.entries(config.subnetIdsByAz)) {
      const where = `${stackLabel}: subnet ${subnetId} (${az})`;
      let found: Subnet | undefined;
      try {
        found = (await clients.ec2.send(new DescribeSubnetsCommand({ SubnetIds: [subnetId] }))).Subnets?.[0];
      } catch (e) {
        if (!isNotFound(e) && !/InvalidSubnet/.test(errorCode(e))) unanswered('ec2:DescribeSubnets', e);
      }
      if (!found)
        result.refuse(
          where,
          `subnet ${subnetId} does not exist: redeploy the stack (npx cdk deploy) or fix ` +
            `aurora-bench.network.existingVpc`,
        );
      else if (found.AvailabilityZone !== az)
        result.refuse(
          where,
          `subnet ${subnetId} is in ` +
            (found.AvailabilityZone ?? 'no AZ') +
            `, not ${az}: fix aurora-bench.network.existingVpc and redeploy`,
        );
      else subnets.set(az, found);
    }

    // The AZs the cells use (the backend's own choice, variantAz) and the subnets clients start in.
    const used = new Map<string, Subnet>();
    for (const variant of spec.variants) {
      const planned = plan.cells.find((c) => c.variant.name === variant.name)?.variant;
      if (!planned) continue;
      const az = variantAz(plan.region, planned, config.subnetIdsByAz);
      const vi = specVariantIndex(spec, variant.name);
      if (az === undefined || !(az in config.subnetIdsByAz)) {
        result.refuse(
          `variants[${vi}].az`,
          `AZ ${az ?? '(none)'} has no subnet of ${stackLabel} (configured: ` +
            (Object.keys(config.subnetIdsByAz).sort().join(', ') || 'none') +
            `): use one of those AZs`,
        );
        continue;
      }
      const subnet = subnets.get(az);
      if (subnet) used.set(az, subnet);
    }
    if (used.size === 0) return 'no usable client subnet';

    const prefixLists = await ask('ec2:DescribePrefixLists', () =>
      clients.ec2.send(
        new DescribePrefixListsCommand({
          Filters: [{ Name: 'prefix-list-name', Values: [`com.amazonaws.${region}.s3`] }],
        }),
      ),
    );
    const s3PrefixListId = prefixLists.PrefixLists?.[0]?.PrefixListId;
    const vpcIds = [...new Set([...used.values()].map((s) => s.VpcId!))];
    const endpoints = await ask('ec2:DescribeVpcEndpoints', () =>
      clients.ec2.send(new DescribeVpcEndpointsCommand({ Filters: [{ Name: 'vpc-id', Values: vpcIds }] })),
    );
    const interfaceServices = new Set(
      (endpoints.VpcEndpoints ?? [])
        .filter((e) => e.VpcEndpointType === 'Interface' && e.State?.toLowerCase() === 'available')
        .map((e) => `${e.VpcId}|${e.ServiceName}`),
    );
    // An SSM managed instance without a NAT needs these three interface endpoints.
    // The runner needs Secrets Manager for the master password.
    const privateServices = ['ssm', 'ssmmessages', 'ec2messages', 'secretsmanager'].map(
      (s) => `com.amazonaws.${region}.${s}`,
    );

    const sources = config.clientSourceUrls;
    if (sources === undefined) {
      result.warn(
        stackLabel,
        'the stack does not say where clients download sysbench from (deployed by an older aurora-bench): ' +
          'redeploy it (npx cdk deploy) to have that checked',
      );
    }
    // An s3:// source exists. It is asked once per URL, not per subnet.
    // HeadObject answers 404 when it does not, and 403 when the caller may not read it.
    for (const [name, url] of Object.entries(sources ?? {})) {
      const s3 = parseS3Url(url);
      if (!s3) continue;
      try {
        await clients.s3.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: s3.key }));
      } catch (e) {
        if (isNotFound(e) || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) {
          result.refuse(
            `${stackLabel}: ${sourceSetting(name)}`,
            `${url} does not exist: upload the file there (aws s3 cp FILE ${url}) or ` +
              `point ${sourceSetting(name)} at it and redeploy`,
          );
        } else if (isAccessDenied(e)) {
          result.warn(
            `${stackLabel}: ${sourceSetting(name)}`,
            `could not check that ${url} exists: s3:GetObject was denied (${errorCode(e)})`,
          );
        } else {
          unanswered('s3:GetObject', e);
        }
      }
    }

    const lines: string[] = [];
    for (const [az, subnet] of [...used.entries()].sort()) {
      const reach = await reachOf(clients, subnet, s3PrefixListId);
      const where = `${stackLabel}: subnet ${subnet.SubnetId} (${az})`;
      const online = reach.internet.kind === 'nat' || reach.internet.kind === 'igw';
      const vpc = subnet.VpcId!;
      const s3Interface = interfaceServices.has(`${vpc}|com.amazonaws.${region}.s3`);
      const s3 = reach.s3Gateway
        ? 'S3 gateway endpoint'
        : s3Interface
          ? 'S3 interface endpoint'
          : online
            ? 'S3 through the internet route'
            : undefined;
      if (!s3 && reach.internet.kind !== 'nat' && reach.internet.kind !== 'igw') {
        const unsure = reach.internet.kind === 'unknown';
        result[unsure ? 'warn' : 'refuse'](
          where,
          `clients there ${unsure ? 'may not' : 'cannot'} reach S3 (the runner, their output, their ready ` +
            `marker): no S3 gateway endpoint route or S3 interface endpoint, and ${reach.internet.why}: ` +
            'add an S3 gateway endpoint to its route table (aurora-bench.network.existingVpc.createEndpoints ' +
            'true) or route 0.0.0.0/0 to a NAT gateway',
        );
      }
      const missing = privateServices.filter((s) => !interfaceServices.has(`${vpc}|${s}`));
      if (missing.length > 0 && !online) {
        const unsure = reach.internet.kind === 'unknown';
        result[unsure ? 'warn' : 'refuse'](
          where,
          `clients there ${unsure ? 'may not' : 'cannot'} reach Systems Manager (Run Command starts every job) ` +
            `or Secrets Manager (the runner reads the master password): ` +
            `no interface endpoint for ${missing.join(', ')} in ${vpc} and ${reach.internet.why}: ` +
            'create those endpoints (aurora-bench.network.existingVpc.createEndpoints true) or route 0.0.0.0/0 ' +
            'to a NAT gateway',
        );
      }
      for (const [name, url] of Object.entries(sources ?? {})) {
        if (!url.startsWith('https://') || online) continue;
        const nat = 'give the VPC a NAT gateway (aurora-bench.network.natGateways 1, or a NAT route in existingVpc)';
        const how =
          name === 'debian'
            ? `${nat}: clients and servers install their packages from it at boot`
            : `${nat}, or mirror the tarball to S3 and set ${sourceSetting(name)} to its s3:// URL`;
        if (reach.internet.kind === 'unknown')
          result.warn(`${where}: ${sourceSetting(name)}`, `clients download ${url} at boot, but ${reach.internet.why}`);
        else
          result.refuse(
            `${where}: ${sourceSetting(name)}`,
            `clients download ${url} at boot, but ${reach.internet.why}: ${how}`,
          );
      }
      const internetText =
        reach.internet.kind === 'nat'
          ? 'NAT gateway'
          : reach.internet.kind === 'igw'
            ? 'internet gateway (public IP)'
            : 'no internet';
      lines.push(
        `${az} ${subnet.SubnetId}: ${internetText}, ${s3 ?? 'no S3'}` +
          (missing.length === 0 ? ', SSM and Secrets Manager endpoints' : ''),
      );
    }
    const sourceText = Object.entries(sources ?? {}).map(([name, url]) => `${name} from ${url}`);
    return [...lines, ...sourceText].join('; ');
  });
}
