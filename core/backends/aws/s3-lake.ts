/**
 * The results lake over S3: the same keys as the local directory lake, under `s3://bucket/prefix`.
 * GetObject's NoSuchKey is `undefined` (LakeStore contract); ListObjectsV2 is paginated with
 * ContinuationToken (s3 service-2.json: at most 1,000 keys per response).
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { LakeStore } from '../../backend';
import { call, isNotFound, rethrow } from './aws-errors';

export class S3LakeStore implements LakeStore {
  private readonly prefix: string;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    prefix: string,
    /** ListObjectsV2 MaxKeys (tests use a small page to exercise pagination). */
    private readonly pageSize?: number,
  ) {
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : prefix + '/';
  }

  /** s3://bucket/<prefix><key>: where a lake key lives (what the runner's --out and --script-uri take). */
  uri(key: string): string {
    return `s3://${this.bucket}/${this.prefix}${key}`;
  }

  objectKey(key: string): string {
    if (key.startsWith('/') || key.split('/').includes('..')) throw new Error(`lake key "${key}" must be relative without ".."`);
    return this.prefix + key;
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    const Key = this.objectKey(key);
    await call(`S3 PutObject s3://${this.bucket}/${Key}`, () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key,
          Body: body,
          ContentType: key.endsWith('.json') ? 'application/json' : key.endsWith('.jsonl') ? 'application/x-ndjson' : 'text/plain; charset=utf-8',
        }),
      ),
    );
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
}
