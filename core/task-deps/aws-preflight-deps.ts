/** TaskDeps.preflight on AWS. A console-started execution gets the same checks as `aurora-bench preflight`. */
import type { AwsClients } from '../backends/aws/clients';
import type { AwsBackendConfig } from '../backends/aws/config';
import { preflightNotes, runAwsPreflight } from '../backends/aws/preflight';
import { bundledPrices } from '../plan/cost';
import type { TaskDeps } from '../workflow/tasks/types';

export function awsPreflight(config: AwsBackendConfig, clients: AwsClients): NonNullable<TaskDeps['preflight']> {
  return async (plan, spec) =>
    preflightNotes(await runAwsPreflight({ plan, spec, clients, deployment: { config }, prices: bundledPrices() }));
}
