import { lakeKeys } from '../../../lake/rows';
import type { AwsClients } from '../clients';
import type { AwsBackendConfig } from '../config';
import { publishVerdicts } from '../verdict-alerts';
import type { BackendOperations } from './compose';

export interface VerdictAlertsPartOptions {
  readonly clients: Pick<AwsClients, 'cloudwatch' | 'events' | 'sns'>;
  readonly config: Pick<AwsBackendConfig, 'bucket' | 'lakePrefix' | 'eventBusName' | 'alertTopicArn'>;
  readonly now: () => Date;
}

export function verdictAlertsPart(options: VerdictAlertsPartOptions): Pick<BackendOperations, 'publishVerdicts'> {
  const { clients, config, now } = options;
  return {
    publishVerdicts: (run, verdicts) =>
      publishVerdicts(
        {
          cloudwatch: clients.cloudwatch,
          events: clients.events,
          sns: clients.sns,
          eventBusName: config.eventBusName ?? 'default',
          ...(config.alertTopicArn !== undefined ? { topicArn: config.alertTopicArn } : {}),
          now,
        },
        run,
        verdicts,
        `s3://${config.bucket}/${config.lakePrefix}${lakeKeys.verdicts(run.dt, run.runId)}`,
      ),
  };
}
