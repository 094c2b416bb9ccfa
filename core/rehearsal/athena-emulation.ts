/** moto's Athena runs no SQL, so Trino answers it over moto's Glue and S3. */
import type { AthenaClient } from '@aws-sdk/client-athena';
import { AthenaOnTrino } from './athena-on-trino';
import type { ControlPlane } from './control-plane';
import type { Preflight } from './rehearsal-preflight';
import type { RehearsalOptions } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import { sharedTrinoServer, startTrinoServer } from './trino-server';

export async function startAthena(
  options: RehearsalOptions,
  { plan, definition }: Preflight,
  { moto, config }: ControlPlane,
  athena: AthenaClient,
  state: RehearsalState,
  log: (line: string) => void,
): Promise<void> {
  const trino = (state.trino = options.trinoEndpoint
    ? await sharedTrinoServer(options.trinoEndpoint)
    : await startTrinoServer(options.repoRoot));
  log(`Athena on Trino ${trino.version} at ${trino.endpoint} (moto's Glue and S3 behind it)`);
  const athenaOnTrino = (state.athenaOnTrino = new AthenaOnTrino({
    trinoEndpoint: trino.endpoint,
    bucket: config.bucket,
    lakePrefix: config.lakePrefix,
    motoEndpoint: moto.endpoint,
    region: plan.region,
    template: definition.template,
    // The lake holds nothing older than the run's own day.
    projectionRange: `${plan.dt},NOW`,
    log,
  }));
  athenaOnTrino.install(athena);
}
