/**
 * Classifying AWS SDK errors. Teardown treats not-found as done, and provision treats already-exists as done.
 * Throttling and 5xx become TransientBackendError for the Retry.
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
 * Not-found as the services name it, e.g. DBInstanceNotFoundFault, InvalidInstanceID.NotFound, NoSuchKey.
 * SSM says InvocationDoesNotExist.
 */
export function isNotFound(e: unknown): boolean {
  const code = errorCode(e);
  return /NotFound|NoSuchKey|NoSuchBucket|DoesNotExist/.test(code);
}

/** Already-exists as RDS names it, e.g. DBClusterAlreadyExistsFault. */
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

/** Rethrow throttling and 5xx as TransientBackendError, which the ASL retries. Anything else is unchanged. */
export function rethrow(e: unknown, what: string): never {
  // A Lambda's error crosses the state machine as name and message only, so the message keeps the SDK's text.
  if (isTransient(e))
    throw new TransientBackendError(`${what}: ${errorCode(e) || 'error'}: ${(e as Error).message}`, { cause: e });
  throw e;
}

/** Run an AWS call, mapping transient failures to TransientBackendError with what was being done. */
export async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    return rethrow(e, what);
  }
}
