/**
 * The rehearsal's AWS: a moto server, the rehearsal's clients of it, and the backend's configuration.
 */
import type { AwsBackendConfig } from '../backends/aws/config';
import type { AwsClientOptions } from '../backends/aws/client-config';
import { motoClientOptions, motoClients, type MotoClients } from './moto-clients';
import { sharedMotoServer, startMotoServer, type MotoServer } from './moto-server';
import type { Preflight } from './rehearsal-preflight';
import type { RehearsalOptions } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import type { RunClaim } from './run-claim';
import { standingConfig } from './standing-config';

export interface ControlPlane {
  readonly moto: MotoServer;
  readonly common: AwsClientOptions;
  readonly raw: MotoClients;
  readonly config: AwsBackendConfig;
}

export async function startControlPlane(
  options: RehearsalOptions,
  { plan, spec }: Preflight,
  { dir, recorder }: RunClaim,
  state: RehearsalState,
  lagS: number,
  log: (line: string) => void,
): Promise<ControlPlane> {
  const account = options.account?.take();
  if (account) state.held = true;
  const moto = (state.moto = options.account
    ? await sharedMotoServer(options.account.motoEndpoint, { reset: account!.first })
    : options.motoEndpoint
      ? await sharedMotoServer(options.motoEndpoint)
      : await startMotoServer(options.repoRoot));
  if (moto.pid > 0) recorder.addProcess({ pid: moto.pid, marker: 'moto_server', group: false }, moto.logFile);
  log(`moto server on ${moto.endpoint}${moto.pid > 0 ? ` (pid ${moto.pid})` : ''}; rehearsal files in ${dir}`);
  const common = motoClientOptions(plan.region, moto.endpoint);
  const raw = (state.raw = motoClients(common));
  const config = await standingConfig(options, plan, spec, common, raw, lagS);
  return { moto, common, raw, config };
}
