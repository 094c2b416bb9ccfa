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
}

/** The configuration every client of these options is constructed with. */
export function sdkClientConfig(options: AwsClientOptions) {
  return {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  };
}

/**
 * An S3 client's own configuration: moto (and any single-endpoint server) serves buckets by path, not by virtual host.
 */
export function s3ClientConfig(options: AwsClientOptions) {
  return { ...sdkClientConfig(options), ...(options.endpoint ? { forcePathStyle: true } : {}) };
}
