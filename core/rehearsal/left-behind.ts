/** What a run left in moto, and the servers and clients still running. */
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import {
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  RDSClient,
} from '@aws-sdk/client-rds';
import { ListSecretsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { sdkClientConfig } from '../backends/aws/client-config';
import { motoClientOptions } from './moto-clients';
import type { RdsEmulation } from './rds-emulation';
import type { SsmAgentEmulation } from './ssm-agent';

/** Everything of the run still in moto. */
async function leftInMoto(endpoint: string, region: string): Promise<string[]> {
  const common = sdkClientConfig(motoClientOptions(region, endpoint));
  const rds = new RDSClient(common);
  const ec2 = new EC2Client(common);
  const secrets = new SecretsManagerClient(common);
  try {
    const left: string[] = [];
    for (const c of (await rds.send(new DescribeDBClustersCommand({}))).DBClusters ?? [])
      left.push(`RDS cluster ${c.DBClusterIdentifier}`);
    for (const i of (await rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [])
      left.push(`RDS instance ${i.DBInstanceIdentifier}`);
    for (const g of (await rds.send(new DescribeDBClusterParameterGroupsCommand({}))).DBClusterParameterGroups ?? []) {
      if (!g.DBClusterParameterGroupName?.startsWith('default.'))
        left.push(`RDS cluster parameter group ${g.DBClusterParameterGroupName}`);
    }
    for (const g of (await rds.send(new DescribeDBParameterGroupsCommand({}))).DBParameterGroups ?? []) {
      if (!g.DBParameterGroupName?.startsWith('default.')) left.push(`RDS parameter group ${g.DBParameterGroupName}`);
    }
    const reservations =
      (
        await ec2.send(
          new DescribeInstancesCommand({
            Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] }],
          }),
        )
      ).Reservations ?? [];
    for (const r of reservations)
      for (const i of r.Instances ?? []) left.push(`EC2 instance ${i.InstanceId} (${i.State?.Name})`);
    for (const s of (await secrets.send(new ListSecretsCommand({}))).SecretList ?? []) left.push(`secret ${s.Name}`);
    return left;
  } finally {
    rds.destroy();
    ec2.destroy();
    secrets.destroy();
  }
}

export async function leftBehind(
  motoEndpoint: string,
  region: string,
  rds: RdsEmulation,
  agent: SsmAgentEmulation,
): Promise<string[]> {
  return [
    ...(await leftInMoto(motoEndpoint, region)),
    ...rds.runningServers().map((s) => `MariaDB server of ${s.instanceId} (pid ${s.pid})`),
    ...agent.leftovers(),
  ];
}
