/**
 * The backend's configuration in the rehearsal, with the rehearsal's shorter timings.
 * A shared account creates it once per key.
 */
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import type { AwsBackendConfig } from '../backends/aws/config';
import { sdkClientConfig, type AwsClientOptions } from '../backends/aws/client-config';
import type { Plan } from '../plan/types';
import type { Spec } from '../experiment/schema';
import type { MotoClients } from './moto-clients';
import type { RehearsalOptions } from './rehearsal-options';
import { createStandingInfrastructure } from './standing-infrastructure';
import {
  REHEARSAL_METRICS_PERIOD_S,
  REHEARSAL_PARAMETER_GROUP_SETTLE_S,
  REHEARSAL_VOLUME_PERIOD_S,
} from './rehearsal-timings';

/** AZ letters a shared account has a subnet in. us-east-1 has six AZs. */
const ACCOUNT_AZ_LETTERS: readonly string[] = ['a', 'b', 'c', 'd', 'e', 'f'];

/**
 * What the stack gives the ComputeVerdicts Task, in moto.
 * moto keeps what is published to the regression topic.
 */
async function verdictInfrastructure(common: AwsClientOptions, config: AwsBackendConfig): Promise<AwsBackendConfig> {
  const clientConfig = sdkClientConfig(common);
  const athena = new AthenaClient(clientConfig);
  const sns = new SNSClient(clientConfig);
  try {
    const workGroup = 'aurora-bench';
    await athena.send(
      new CreateWorkGroupCommand({
        Name: workGroup,
        Configuration: { ResultConfiguration: { OutputLocation: `s3://${config.bucket}/athena-results/` } },
      }),
    );
    const topic = await sns.send(new CreateTopicCommand({ Name: 'aurora-bench-regressions' }));
    return {
      ...config,
      athenaWorkGroup: workGroup,
      glueDatabase: 'aurora_bench',
      alertTopicArn: topic.TopicArn!,
      eventBusName: 'default',
    };
  } finally {
    athena.destroy();
    sns.destroy();
  }
}

export async function standingConfig(
  options: RehearsalOptions,
  plan: Plan,
  spec: Spec,
  common: AwsClientOptions,
  raw: MotoClients,
  lagS: number,
): Promise<AwsBackendConfig> {
  // The backend collects a window again once its datapoints are due.
  // That is the publisher's lag plus its 0.5 s tick and the sampler's 1 s.
  const createStanding = async (azLetters: readonly string[]): Promise<AwsBackendConfig> => ({
    ...(await verdictInfrastructure(
      common,
      await createStandingInfrastructure(raw, {
        region: plan.region,
        azLetters,
        repoRoot: options.repoRoot,
        metricsPublishDelayS: lagS + 2,
      }),
    )),
    parameterGroupSettleS: REHEARSAL_PARAMETER_GROUP_SETTLE_S,
    volumeMetricsPeriodS: REHEARSAL_VOLUME_PERIOD_S,
    metricsPeriodS: REHEARSAL_METRICS_PERIOD_S,
  });
  const specLetters = spec.variants.flatMap((v) => (v.az ? [v.az] : []));
  // A shared account has a subnet in each usual AZ, as a stack's VPC spans its AZs.
  // So the functions get the same environment in every rehearsal.
  const accountLetters = [...new Set([...ACCOUNT_AZ_LETTERS, ...specLetters])].sort();
  const config = options.account
    ? await options.account.standing(`${plan.region} ${lagS} ${options.repoRoot} ${accountLetters.join('')}`, () =>
        createStanding(accountLetters),
      )
    : await createStanding(specLetters);
  return config;
}
