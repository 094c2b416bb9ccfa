/**
 * How an SDK client is configured, apart from the clients themselves. Each Lambda constructs only its Task's clients.
 * esbuild keeps an external package's require even where nothing of it is used.
 * So a module importing every client package would make the runtime load all of them.
 */
export interface AwsClientOptions {
  readonly region: string;
  /** A single endpoint for every service, as moto serves. Undefined for real AWS. */
  readonly endpoint?: string;
  /** Static credentials for tests. Undefined uses the default provider chain. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** SDK retry attempts for throttling and 5xx. The state machine retries on top. */
  readonly maxAttempts?: number;
  /**
   * How long one request may take before it fails with a TimeoutError. The SDK retries that as transient.
   * Undefined means no limit. On Lambda, the function's timeout still bounds it.
   */
  readonly requestTimeoutMs?: number;
}

export function sdkClientConfig(options: AwsClientOptions) {
  return {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    // Without throwOnRequestTimeout, the Node.js handler only logs a warning when requestTimeout passes.
    // See @smithy/types, NodeHttpHandlerOptions.
    ...(options.requestTimeoutMs !== undefined
      ? { requestHandler: { requestTimeout: options.requestTimeoutMs, throwOnRequestTimeout: true } }
      : {}),
  };
}

/**
 * An S3 client's own configuration. Moto and any single-endpoint server serve buckets by path, not by virtual host.
 */
export function s3ClientConfig(options: AwsClientOptions) {
  return { ...sdkClientConfig(options), ...(options.endpoint ? { forcePathStyle: true } : {}) };
}
