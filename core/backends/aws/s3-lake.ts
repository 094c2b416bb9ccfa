/**
 * The results lake over S3, with the same keys as the local lake.
 * Before a store's first write, it checks the lake's schema version and refuses a newer lake.
 * Every Task Lambda writes through this store, so an older release never writes into a lake a newer one laid out.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { LakeStore } from '../../backend';
import {
  LAKE_SCHEMA_VERSION,
  LAKE_VERSION_KEY,
  LakeVersionError,
  lakeVersionOf,
  type LakeVersionRecord,
} from '../../lake/schema';
import { call, isNotFound, rethrow } from './aws-errors';

export class S3LakeStore implements LakeStore {
  private readonly prefix: string;
  /** Once per store. A failed check is tried again. */
  private versionChecked: Promise<void> | undefined;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    prefix: string,
    /** ListObjectsV2 MaxKeys. Tests use a small page to exercise pagination. */
    private readonly pageSize?: number,
  ) {
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : prefix + '/';
  }

  /** Where a lake key lives, as the runner's --out and --script-uri take it. */
  uri(key: string): string {
    return `s3://${this.bucket}/${this.prefix}${key}`;
  }

  objectKey(key: string): string {
    if (key.startsWith('/') || key.split('/').includes('..'))
      throw new Error(`lake key "${key}" must be relative without ".."`);
    return this.prefix + key;
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    await this.assertWritableVersion();
    await this.putObject(key, body);
  }

  private async putObject(key: string, body: string | Uint8Array): Promise<void> {
    const Key = this.objectKey(key);
    await call(`S3 PutObject s3://${this.bucket}/${Key}`, () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key,
          Body: body,
          ContentType: key.endsWith('.json')
            ? 'application/json'
            : key.endsWith('.jsonl')
              ? 'application/x-ndjson'
              : 'text/plain; charset=utf-8',
        }),
      ),
    );
  }

  /**
   * PutObject with If-None-Match "*". S3 answers 412 when an object is at the key.
   * It answers 409 to a concurrent conditional write of the same key. Either way the key was taken.
   * See the S3 User Guide, "Add preconditions to S3 operations with conditional requests".
   */
  async createOnce(key: string, body: string): Promise<boolean> {
    await this.assertWritableVersion();
    const Key = this.objectKey(key);
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key,
          Body: body,
          IfNoneMatch: '*',
          ContentType: 'application/json',
        }),
      );
      return true;
    } catch (e) {
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || status === 409) return false;
      return rethrow(e, `S3 PutObject (If-None-Match) s3://${this.bucket}/${Key}`);
    }
  }

  async get(key: string): Promise<string | undefined> {
    const Key = this.objectKey(key);
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key }));
      return out.Body ? await out.Body.transformToString('utf-8') : '';
    } catch (e) {
      if (isNotFound(e)) return undefined;
      return rethrow(e, `S3 GetObject s3://${this.bucket}/${Key}`);
    }
  }

  /** ListObjectsV2 gives at most 1,000 keys per response, so it pages with ContinuationToken. */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const out = await call(`S3 ListObjectsV2 s3://${this.bucket}/${this.prefix}${prefix}`, () =>
        this.s3.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            ...(this.pageSize ? { MaxKeys: this.pageSize } : {}),
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const o of out.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key.slice(this.prefix.length));
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  describe(): string {
    return `s3://${this.bucket}/${this.prefix}`;
  }

  /** The lake's recorded schema version. Undefined for a version-1 lake, or no lake yet. */
  async schemaVersion(): Promise<number | undefined> {
    const text = await this.get(LAKE_VERSION_KEY);
    return text === undefined ? undefined : lakeVersionOf(text, this.uri(LAKE_VERSION_KEY));
  }

  /** A reader refuses a lake a newer aurora-bench wrote, since its columns may mean other things. */
  async assertReadable(): Promise<void> {
    const version = await this.schemaVersion();
    if (version !== undefined && version > LAKE_SCHEMA_VERSION)
      throw this.newerLake(version, `reads versions up to ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench`);
  }

  /**
   * A writer's check, before this store's first write. A newer lake is refused.
   * An older or empty lake is brought to LAKE_SCHEMA_VERSION, so the first writer of a lake writes the record.
   */
  assertWritableVersion(): Promise<void> {
    this.versionChecked ??= this.upgradeSchema().catch((e: unknown) => {
      this.versionChecked = undefined;
      throw e;
    });
    return this.versionChecked;
  }

  private async upgradeSchema(): Promise<void> {
    const version = await this.schemaVersion();
    if (version === LAKE_SCHEMA_VERSION) return;
    if (version !== undefined && version > LAKE_SCHEMA_VERSION) {
      throw this.newerLake(
        version,
        `writes version ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench (redeploy the stack with it)`,
      );
    }
    // From version 1 to 2 no object changes, so only the version is recorded.
    // Two first writers at once write the same record.
    const record: LakeVersionRecord = { schemaVersion: LAKE_SCHEMA_VERSION };
    await this.putObject(LAKE_VERSION_KEY, JSON.stringify(record) + '\n');
  }

  private newerLake(version: number, what: string): LakeVersionError {
    const file = this.uri(LAKE_VERSION_KEY);
    return new LakeVersionError(
      `the results lake ${this.describe()} is of schema version ${version} (${file}), written by a newer ` +
        `aurora-bench; this one ${what}`,
      {
        source: file,
      },
    );
  }
}
