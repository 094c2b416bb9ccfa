/**
 * The AWS backend composed from parts, each built from only the SDK clients it uses.
 * A Task's Lambda composes only its Task's parts. So esbuild leaves the other parts out of its bundle.
 * And its role needs only the actions of its own parts.
 */
import type { Backend } from '../../../backend';
import { AuroraBenchError } from '../../../errors';
import type { AwsClientOptions } from '../client-config';
import type { AwsBackendConfig } from '../config';
import type { S3LakeStore } from '../s3-lake';

/** What a backend does, apart from what it is. */
export type BackendOperations = Omit<
  Backend,
  'kind' | 'lake' | 'metricsPublishDelayS' | 'replicationHealth' | 'writeForwarding'
>;

/**
 * A backend operation called in a function built without its part. The function's wiring does not match its Task.
 * The tests in test/bundles run every function's Task through its own bundle, so this is a programming error.
 */
export class NotBuiltForThisFunctionError extends AuroraBenchError {
  override readonly name = 'NotBuiltForThisFunctionError';
}

const OPERATIONS: readonly (keyof BackendOperations)[] = [
  'provisionCell',
  'checkCellReady',
  'startClients',
  'checkClientsReady',
  'startJobs',
  'checkJobs',
  'stopJobs',
  'collectServerMetrics',
  'observeCellResources',
  'teardownCell',
  'publishVerdicts',
];

/**
 * The Backend port over the lake and the given parts' operations.
 * Any other operation throws NotBuiltForThisFunctionError naming `builtFor`.
 */
export function composeAwsBackend(
  config: Pick<AwsBackendConfig, 'metricsPublishDelayS'>,
  lake: S3LakeStore,
  operations: Partial<BackendOperations>,
  builtFor: string,
): Backend & { readonly lake: S3LakeStore } {
  const missing = (operation: string) => () =>
    Promise.reject(
      new NotBuiltForThisFunctionError(
        `${builtFor} was built without the AWS backend part that does ${operation}: add that part in its handler`,
      ),
    );
  const bound = Object.fromEntries(
    OPERATIONS.map((op) => [op, operations[op] ?? missing(op)]),
  ) as unknown as BackendOperations;
  return { kind: 'aws', writeForwarding: 'native', lake, metricsPublishDelayS: config.metricsPublishDelayS, ...bound };
}

/**
 * What a function builds a part's backend from.
 * That is the configuration, the SDK clients' options, and the hook every SDK client goes through once.
 */
export interface PartContext {
  readonly config: AwsBackendConfig;
  readonly clientOptions: AwsClientOptions;
  readonly instrument: <C>(client: C) => C;
}
