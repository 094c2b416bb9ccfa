/**
 * Where the runner reads and writes, and the secret holding the password.
 * S3 and Secrets Manager go through the bundled AWS SDK v3, so there is no AWS CLI process per call.
 * The SDK takes its endpoint from AWS_ENDPOINT_URL. The rehearsal points it at moto.
 * See AWS SDKs and Tools Reference Guide, "Service-specific endpoints".
 * The client role allows exactly these calls. test/cdk/permissions.test.ts collects them from this bundle.
 */
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** s3://bucket/key as bucket and key. */
function parseS3Uri(uri: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (m === null) throw new Error(`${uri} is not an s3:// location`);
  return { bucket: m[1]!, key: m[2]! };
}

/** `location` + `/` + name, for a directory or an s3:// prefix. */
export function under(location: string, name: string): string {
  return `${location.replace(/\/+$/, '')}/${name}`;
}

/**
 * The region of the SDK clients.
 * It is the environment's, else the secret ARN's, else the SDK's own chain.
 */
export function regionOf(
  env: Readonly<Record<string, string | undefined>>,
  secretArn: string | undefined,
): string | undefined {
  const fromEnv = env['AWS_REGION'] || env['AWS_DEFAULT_REGION'];
  if (fromEnv) return fromEnv;
  const m = secretArn === undefined ? null : /^arn:[^:]+:secretsmanager:([^:]+):/.exec(secretArn);
  return m?.[1];
}

export class Storage {
  private s3Client: S3Client | undefined;
  private secretsClient: SecretsManagerClient | undefined;

  constructor(
    private readonly region: string | undefined,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  private regionConfig() {
    return this.region !== undefined ? { region: this.region } : {};
  }

  private s3Config() {
    // An S3-compatible emulator resolves no virtual-hosted bucket names, so it gets path-style requests.
    // See S3 User Guide, "Virtual hosting of buckets". AWS's own endpoint keeps its default.
    const custom = Boolean(this.env['AWS_ENDPOINT_URL_S3'] || this.env['AWS_ENDPOINT_URL']);
    return { ...this.regionConfig(), forcePathStyle: custom };
  }

  private get s3(): S3Client {
    this.s3Client ??= new S3Client(this.s3Config());
    return this.s3Client;
  }

  /** The text of location/name. Undefined when it is not there yet or cannot be read. */
  async readText(location: string, name: string): Promise<string | undefined> {
    try {
      if (!location.startsWith('s3://')) return await readFile(under(location, name), 'utf8');
      const { bucket, key } = parseS3Uri(under(location, name));
      const got = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return await got.Body?.transformToString();
    } catch {
      // Not there yet. S3 answers 404, or 403 without s3:ListBucket.
      // See Amazon S3 API Reference, GetObject, "Permissions". The next look retries anything else.
      return undefined;
    }
  }

  /** Downloads s3://…/name to a local file. */
  async download(uri: string, dest: string): Promise<void> {
    if (!uri.startsWith('s3://')) return copyFile(uri, dest);
    const { bucket, key } = parseS3Uri(uri);
    const got = await this.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    await writeFile(dest, await got.Body!.transformToByteArray());
  }

  /**
   * For an s3:// location, uploads the files first and result.json last.
   * So a reader polling the prefix never sees result.json before the files it describes.
   */
  async uploadDir(dir: string, location: string): Promise<void> {
    if (!location.startsWith('s3://')) return;
    const names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
    const put = async (name: string) => {
      const { bucket, key } = parseS3Uri(under(location, name));
      await this.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: await readFile(join(dir, name)) }));
    };
    await Promise.all(names.filter((n) => n !== 'result.json' && n !== '.result.json.tmp').map(put));
    if (names.includes('result.json')) await put('result.json');
  }

  /** The password of an RDS-managed secret. */
  async secretPassword(secretId: string): Promise<string> {
    this.secretsClient ??= new SecretsManagerClient(this.regionConfig());
    const got = await this.secretsClient.send(new GetSecretValueCommand({ SecretId: secretId }));
    let password: unknown;
    try {
      password = (JSON.parse(got.SecretString ?? '') as { password?: unknown }).password;
    } catch {
      password = undefined;
    }
    if (typeof password !== 'string') throw new SecretFormatError(`secret ${secretId} has no "password" string`);
    return password;
  }

  destroy(): void {
    this.s3Client?.destroy();
    this.secretsClient?.destroy();
  }
}

/** The secret was read but holds no password string. */
export class SecretFormatError extends Error {
  override readonly name = 'SecretFormatError';
}
