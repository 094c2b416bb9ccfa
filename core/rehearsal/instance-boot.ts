/** How an emulated instance boots: this machine's install steps, or the real user data in a Debian root. */
import type { S3Client } from '@aws-sdk/client-s3';
import type { AwsBackendConfig } from '../backends/aws/config';
import { CLIENT_INSTALL_DIR, clientReadyKey, shellQuote } from '../backends/aws/runner-command';
import { ensureBaseRoot, ensurePackageLayer, serveAgentPackage } from './instance-root';
import type { RehearsalOptions } from './rehearsal-options';
import type { BootContext, SsmAgentEmulation } from './ssm-agent';

/**
 * What an emulated instance runs at boot without `boot`.
 * These are the user data's install steps that do not change the machine.
 * client/client-ready.sh then proves this machine's sysbench works and writes the ready marker.
 * It writes it locally and to S3, where checkClientsReady reads it.
 */
export function bootCommands(config: AwsBackendConfig) {
  return (ctx: BootContext): string[] => [
    'set -euo pipefail',
    `RUNNER_S3_URI=${shellQuote(config.runnerS3Uri)}`,
    `ready_marker_uri=${shellQuote(`s3://${config.bucket}/${clientReadyKey(ctx.instanceId)}`)}`,
    `mkdir -p "${CLIENT_INSTALL_DIR}"`,
    `aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "${CLIENT_INSTALL_DIR}/"`,
    `chmod +x "${CLIENT_INSTALL_DIR}"/*.sh`,
    // A server finds this machine's mariadbd instead of installing one.
    // It still writes the marker client/server-setup.sh waits for.
    ctx.role === 'server'
      ? `"${CLIENT_INSTALL_DIR}/server-install.sh"`
      : `"${CLIENT_INSTALL_DIR}/client-ready.sh" --marker-uri "$ready_marker_uri"`,
  ];
}

/**
 * The Debian machines the instances boot.
 * The rehearsal's SSM agent package goes to moto's S3, where the user data downloads AWS's.
 */
export async function bootMachines(
  boot: ReturnType<NonNullable<RehearsalOptions['boot']>>,
  s3: S3Client,
  region: string,
  packageDir: string,
  log: (line: string) => void,
): Promise<NonNullable<ConstructorParameters<typeof SsmAgentEmulation>[0]['machines']>> {
  const base = await ensureBaseRoot({ log });
  const layers = {
    client: [await ensurePackageLayer(base, boot.client.packages, { log }), base],
    server: [await ensurePackageLayer(base, boot.server.packages, { log }), base],
  };
  await serveAgentPackage(s3, region, packageDir);
  return { layers: (role) => layers[role], userData: (role) => boot[role].userData };
}
