/**
 * How an SDK client is configured (region, endpoint, credentials, retries), apart from the clients
 * themselves: each Lambda constructs only the clients its own Task uses (lambdas/<task>/handler.ts),
 * and a module that imported every client package would have the runtime load all of them (esbuild
 * keeps an external package's require even where nothing of it is used, as its loading may have
 * side effects).
 */
export interface AwsClientOptions {
  readonly region: string;
  /** A single endpoint for every service (moto server); undefined for real AWS. */
  readonly endpoint?: string;
  /** Static credentials (tests); undefined uses the default provider chain (the Lambda role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** SDK retry attempts for throttling and 5xx (the state machine retries on top). */
  readonly maxAttempts?: number;
  /**
   * How long one request may take before it fails with a TimeoutError, which the SDK's retry
   * strategy retries as transient; undefined: no limit (the SDK's default, bounded on Lambda by the
   * function's timeout).
   */
  readonly requestTimeoutMs?: number;
}

/** The configuration every client of these options is constructed with. */
export function sdkClientConfig(options: AwsClientOptions) {
  return {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    // throwOnRequestTimeout: without it the Node.js handler only logs a warning when requestTimeout
    // passes (@smithy/types NodeHttpHandlerOptions).
    ...(options.requestTimeoutMs !== undefined
      ? { requestHandler: { requestTimeout: options.requestTimeoutMs, throwOnRequestTimeout: true } }
      : {}),
  };
}

/**
 * An S3 client's own configuration: moto (and any single-endpoint server) serves buckets by path, not by virtual host.
 */
export function s3ClientConfig(options: AwsClientOptions) {
  return { ...sdkClientConfig(options), ...(options.endpoint ? { forcePathStyle: true } : {}) };
}
