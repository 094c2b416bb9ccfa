/**
 * Classifying AWS SDK errors: not-found (teardown treats it as done), already-exists (provision
 * treats it as done on retry), throttling and 5xx (become TransientBackendError for the Retry).
 */
import { TransientBackendError } from '../../backend';

interface SdkError {
  readonly name?: string;
  readonly Code?: string;
  readonly code?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly $fault?: 'client' | 'server';
  readonly message?: string;
}

export function errorCode(e: unknown): string {
  const err = e as SdkError | null;
  return err?.name ?? err?.Code ?? err?.code ?? '';
}

/**
 * RDS: DBClusterNotFoundFault, DBInstanceNotFoundFault, DBParameterGroupNotFound(Fault),
 * DBClusterParameterGroupNotFoundFault; EC2: InvalidInstanceID.NotFound; S3: NoSuchKey, NotFound;
 * SSM: InvocationDoesNotExist, InvalidCommandId.
 */
export function isNotFound(e: unknown): boolean {
  const code = errorCode(e);
  return /NotFound|NoSuchKey|NoSuchBucket|DoesNotExist/.test(code);
}

/** DBClusterAlreadyExistsFault, DBInstanceAlreadyExistsFault, DBParameterGroupAlreadyExists(Fault). */
export function isAlreadyExists(e: unknown): boolean {
  return /AlreadyExists/.test(errorCode(e));
}

const THROTTLING = new RegExp(
  /Throttl|RequestLimitExceeded|TooManyRequests|SlowDown|RequestTimeout|ServiceUnavailable/.source +
    /|InternalError|InternalFailure/.source,
);

function isTransient(e: unknown): boolean {
  const err = e as SdkError | null;
  if (THROTTLING.test(errorCode(e))) return true;
  const status = err?.$metadata?.httpStatusCode;
  return (
    err?.$fault === 'server' ||
    (status !== undefined && status >= 500) ||
    /ECONNRESET|ETIMEDOUT|socket hang up/.test(err?.message ?? '')
  );
}

/** Rethrow throttling/5xx as TransientBackendError (the ASL retries it), anything else unchanged. */
export function rethrow(e: unknown, what: string): never {
  // The message keeps the SDK error's text: a Lambda's error crosses the state machine as name and message only.
  if (isTransient(e))
    throw new TransientBackendError(`${what}: ${errorCode(e) || 'error'}: ${(e as Error).message}`, { cause: e });
  throw e;
}

/** Run an AWS call; map transient failures to TransientBackendError with what was being done. */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    return rethrow(e, what);
  }
}
