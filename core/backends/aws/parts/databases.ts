/**
 * The cell's databases: an Aurora cluster, RDS DB instances or self-managed servers on EC2.
 * The cell's engine kind chooses which.
 */
import type { CellResources, RunContext } from '../../../backend';
import { ENGINES } from '../../../aurora/engines';
import type { CellPlan } from '../../../plan/types';
import { ClientFleet } from '../client-fleet';
import type { AwsClients } from '../clients';
import { AuroraClusters, cellEngineOf } from '../cluster';
import type { AwsBackendConfig } from '../config';
import { RdsInstances } from '../db-instances';
import { SelfManagedServers } from '../self-managed-servers';
import { EC2Client } from '@aws-sdk/client-ec2';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SSMClient } from '@aws-sdk/client-ssm';
import { s3ClientConfig, sdkClientConfig } from '../client-config';
import { S3LakeStore } from '../s3-lake';
import { composeAwsBackend, type BackendOperations, type PartContext } from './compose';

export interface DatabasesPartOptions {
  readonly clients: Pick<AwsClients, 'rds' | 'ec2' | 'ssm' | 's3' | 'secrets'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
}

export function databasesPart(
  options: DatabasesPartOptions,
): Pick<BackendOperations, 'provisionCell' | 'checkCellReady'> {
  const clusters = new AuroraClusters(options);
  const instances = new RdsInstances(options);
  const fleet = new ClientFleet(options);
  const servers = new SelfManagedServers({ ...options, architectureOf: (type) => fleet.architectureOf(type) });
  const databasesOf = (run: RunContext, cell: CellPlan): AuroraClusters | RdsInstances | SelfManagedServers => {
    const topology = ENGINES[cellEngineOf(run, cell).kind].topology;
    return topology === 'instance' ? instances : topology === 'ec2' ? servers : clusters;
  };
  return {
    provisionCell: (run: RunContext, cell: CellPlan) => databasesOf(run, cell).provisionCell(run, cell),
    checkCellReady: (run: RunContext, cell: CellPlan, resources: CellResources) =>
      databasesOf(run, cell).checkCellReady(run, cell, resources),
  };
}

/**
 * The backend of a function whose Task provisions or checks a cell's databases.
 * It holds the SDK clients this part calls, the lake, and this part alone.
 */
export function databasesBackend(
  { config, clientOptions, instrument }: PartContext,
  builtFor: string,
): ReturnType<typeof composeAwsBackend> {
  const common = sdkClientConfig(clientOptions);
  const clients = {
    rds: instrument(new RDSClient(common)),
    ec2: instrument(new EC2Client(common)),
    ssm: instrument(new SSMClient(common)),
    secrets: instrument(new SecretsManagerClient(common)),
    s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
  };
  const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
  return composeAwsBackend(config, lake, databasesPart({ clients, config, now: () => new Date() }), builtFor);
}
