/** Deleting a cell's resources (teardownCell): teardown.ts (EC2, RDS, Secrets Manager). */
import type { AwsBackendConfig } from '../config';
import { tagKeys } from '../names';
import { teardownCell, type TeardownClients } from '../teardown';
import type { BackendOperations } from './compose';

export function cellTeardownPart(options: { readonly clients: TeardownClients; readonly config: Pick<AwsBackendConfig, 'tagKeyPrefix'> }): Pick<BackendOperations, 'teardownCell'> {
  const tags = tagKeys(options.config.tagKeyPrefix);
  return { teardownCell: (run, cell, resources) => teardownCell(options.clients, tags, run, cell, resources) };
}
