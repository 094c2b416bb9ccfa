/**
 * Deleting a cell's resources, and observing them with their creation times before and after each pass.
 */
import type { AwsBackendConfig } from '../config';
import { tagKeys } from '../names';
import { observeCellResources } from '../lifetimes';
import { teardownCell, type TeardownClients } from '../teardown';
import type { BackendOperations } from './compose';

export function cellTeardownPart(options: {
  readonly clients: TeardownClients;
  readonly config: Pick<AwsBackendConfig, 'tagKeyPrefix'>;
}): Pick<BackendOperations, 'teardownCell' | 'observeCellResources'> {
  const tags = tagKeys(options.config.tagKeyPrefix);
  return {
    teardownCell: (run, cell, resources) => teardownCell(options.clients, tags, run, cell, resources),
    observeCellResources: (run, cell, resources) => observeCellResources(options.clients, tags, run, cell, resources),
  };
}
