/**
 * Where a cell goes: the AZ its writer, readers and clients share.
 * Provisioning, client start and the preflight all use it, so they agree on it.
 */
import { UnsupportedOnBackendError, type RunContext } from '../../backend';
import type { CellPlan, ResolvedVariant } from '../../plan/types';
import type { AwsBackendConfig } from './config';

/**
 * The AZ a variant's servers and clients go to: its own letter in the region, else the first configured AZ.
 * Undefined when none is configured. Whether a subnet exists there is the caller's question.
 */
export function variantAz(
  region: string,
  variant: Pick<ResolvedVariant, 'az'>,
  subnetIdsByAz: Readonly<Record<string, string>>,
): string | undefined {
  if (variant.az !== undefined) return `${region}${variant.az}`;
  return Object.keys(subnetIdsByAz).sort()[0];
}

/**
 * The AZ name a cell's cluster and clients go to. It is refused without a configured subnet there.
 */
export function cellAz(config: Pick<AwsBackendConfig, 'subnetIdsByAz'>, run: RunContext, cell: CellPlan): string {
  const configured = Object.keys(config.subnetIdsByAz).sort();
  const az = variantAz(run.region, cell.variant, config.subnetIdsByAz);
  if (az === undefined) throw new UnsupportedOnBackendError('no subnets are configured (subnetIdsByAz is empty)');
  if (!(az in config.subnetIdsByAz)) {
    throw new UnsupportedOnBackendError(
      `variant "${cell.variant.name}": AZ ${az} has no configured subnet ` +
        `(configured: ${configured.join(', ') || 'none'})`,
    );
  }
  return az;
}
