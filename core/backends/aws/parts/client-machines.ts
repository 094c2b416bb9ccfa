import { EC2Client } from '@aws-sdk/client-ec2';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { ClientFleet, type ClientFleetOptions } from '../client-fleet';
import { s3ClientConfig, sdkClientConfig } from '../client-config';
import { S3LakeStore } from '../s3-lake';
import { composeAwsBackend, type BackendOperations, type PartContext } from './compose';

export function clientMachinesPart(
  options: ClientFleetOptions,
): Pick<BackendOperations, 'startClients' | 'checkClientsReady'> {
  const fleet = new ClientFleet(options);
  return {
    startClients: (run, cell, resources) => fleet.startClients(run, cell, resources),
    checkClientsReady: (run, cell, resources) => fleet.checkClientsReady(run, cell, resources),
  };
}

/**
 * The backend of a function whose Task starts or checks a cell's client instances.
 * It holds the SDK clients this part calls, the lake, and this part alone.
 */
export function clientMachinesBackend(
  { config, clientOptions, instrument }: PartContext,
  builtFor: string,
): ReturnType<typeof composeAwsBackend> {
  const common = sdkClientConfig(clientOptions);
  const clients = {
    ec2: instrument(new EC2Client(common)),
    ssm: instrument(new SSMClient(common)),
    s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
  };
  const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
  return composeAwsBackend(config, lake, clientMachinesPart({ clients, config, now: () => new Date() }), builtFor);
}
