/**
 * The rehearsal's side of the SDK bridge.
 * A call a function made in its sandbox is sent again through the rehearsal's own client of that service.
 * That client carries the emulations and goes on to moto.
 * Every service takes this path, so the client adjustments of RehearsalOptions see every call.
 *
 * The answer keeps what the function would read.
 * The IPC channel is a structured clone, so Dates and bytes survive.
 * A streaming Body is read into bytes that the bridge streams again.
 * An error travels by name and fields, and the bridge raises the SDK's own class of that name.
 */
import * as athena from '@aws-sdk/client-athena';
import * as cloudwatch from '@aws-sdk/client-cloudwatch';
import * as ec2 from '@aws-sdk/client-ec2';
import * as eventbridge from '@aws-sdk/client-eventbridge';
import * as iam from '@aws-sdk/client-iam';
import * as pi from '@aws-sdk/client-pi';
import * as rds from '@aws-sdk/client-rds';
import * as s3 from '@aws-sdk/client-s3';
import * as secrets from '@aws-sdk/client-secrets-manager';
import * as quotas from '@aws-sdk/client-service-quotas';
import * as sns from '@aws-sdk/client-sns';
import * as ssm from '@aws-sdk/client-ssm';
import type { AwsClients } from '../backends/aws/clients';
import type { SdkAnswer, SdkCall } from './lambda-sandbox';

/** Each client class the functions build, by name, with the package that defines its commands. */
const PACKAGES: Readonly<
  Record<string, { readonly key: keyof AwsClients; readonly exports: Readonly<Record<string, unknown>> }>
> = {
  AthenaClient: { key: 'athena', exports: athena },
  CloudWatchClient: { key: 'cloudwatch', exports: cloudwatch },
  EC2Client: { key: 'ec2', exports: ec2 },
  EventBridgeClient: { key: 'events', exports: eventbridge },
  IAMClient: { key: 'iam', exports: iam },
  PIClient: { key: 'pi', exports: pi },
  RDSClient: { key: 'rds', exports: rds },
  S3Client: { key: 's3', exports: s3 },
  SecretsManagerClient: { key: 'secrets', exports: secrets },
  ServiceQuotasClient: { key: 'serviceQuotas', exports: quotas },
  SNSClient: { key: 'sns', exports: sns },
  SSMClient: { key: 'ssm', exports: ssm },
};

type CommandClass = new (input: Record<string, unknown>) => unknown;

/** Fields of an SDK error that travel: its modelled members, not the response, stack or cause. */
function errorFields(e: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) {
    if (['name', 'message', 'stack', 'cause', '$fault', '$metadata', '$response', '$retryable'].includes(k)) continue;
    if (v === undefined || typeof v === 'function') continue;
    try {
      fields[k] = structuredClone(v);
    } catch {
      // Not plain data.
    }
  }
  return fields;
}

/** An SdkCall's answer from the rehearsal's client of that service. */
export async function answerSdkCall(clients: AwsClients, call: SdkCall): Promise<SdkAnswer> {
  const pkg = PACKAGES[call.client];
  if (!pkg) {
    return {
      ok: false,
      error: {
        name: 'Error',
        message:
          `the rehearsal has no ${call.client} (service ${call.service ?? '?'}): a function ` +
          `called ${call.command} through a client aurora-bench does not build`,
        fields: {},
      },
    };
  }
  const Command = pkg.exports[call.command];
  if (typeof Command !== 'function') {
    return {
      ok: false,
      error: { name: 'Error', message: `${call.client} has no ${call.command} in the SDK installed here`, fields: {} },
    };
  }
  const client = clients[pkg.key] as { send(command: unknown): Promise<Record<string, unknown>> };
  try {
    const output = { ...(await client.send(new (Command as CommandClass)(call.input))) };
    const body = output['Body'] as { transformToByteArray?: () => Promise<Uint8Array> } | undefined;
    if (body && typeof body.transformToByteArray === 'function')
      output['Body'] = { bridgedBytes: await body.transformToByteArray() };
    return { ok: true, output: structuredClone(output) };
  } catch (e) {
    const err = e as Error & { $fault?: string; $metadata?: unknown };
    const metadata = err.$metadata === undefined ? {} : { $metadata: structuredClone(err.$metadata) };
    return {
      ok: false,
      error: {
        name: typeof err.name === 'string' ? err.name : 'Error',
        message: typeof err.message === 'string' ? err.message : String(e),
        ...(typeof err.$fault === 'string' ? { $fault: err.$fault } : {}),
        ...metadata,
        fields: err instanceof Error ? errorFields(err as unknown as Record<string, unknown>) : {},
      },
    };
  }
}
