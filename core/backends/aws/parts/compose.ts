/**
 * The AWS backend composed from parts, one per concern of the Backend port (the other modules of
 * this folder), each built from only the SDK clients it uses. A Task's Lambda composes only the
 * parts its Task calls (lambdas/<task>/handler.ts), so esbuild leaves the other parts' code, and
 * the SDK operations they send, out of its bundle, and its role needs only the actions of its own
 * parts (lib/backend-permissions.ts). The full backend (every part) is AwsBackend (aws-backend.ts).
 */
import type { Backend } from '../../../backend';
import { AuroraBenchError } from '../../../errors';
import type { AwsClientOptions } from '../client-config';
import type { AwsBackendConfig } from '../config';
import type { S3LakeStore } from '../s3-lake';

/** What a backend does, apart from what it is (kind, lake, metrics delay). */
export type BackendOperations = Omit<
  Backend,
  'kind' | 'lake' | 'metricsPublishDelayS' | 'replicationHealth' | 'writeForwarding'
>;

/**
 * A backend operation called in a function built without its part: the function's wiring
 * (lambdas/<task>/handler.ts) does not match what its Task calls. test/bundles runs every function's
 * Task through its own bundle, so this is a programming error, never an expected state.
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
 * The Backend port over the lake and the given parts' operations; any
 * other operation throws NotBuiltForThisFunctionError naming `builtFor`.
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
 * What a function builds a part's backend from (core/task-deps/aws-function-deps.ts AwsFunctionContext):
 * the configuration, the SDK clients' options, and the hook every SDK client goes through once.
 */
export interface PartContext {
  readonly config: AwsBackendConfig;
  readonly clientOptions: AwsClientOptions;
  readonly instrument: <C>(client: C) => C;
}
