/**
 * Where a run's regressions go.
 * The Task publishes each regression to an SNS topic with e-mail subscriptions from the CDK context.
 * The alarm counts a run's regressions and stays in ALARM until a run without one.
 * Missing data keeps its state, so it always shows the latest run.
 * It has no action. The notification already says what regressed, and a second e-mail would be noise.
 * See CloudWatch User Guide, "Configuring how CloudWatch alarms treat missing data".
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { REGRESSIONS_METRIC, VERDICT_METRIC_NAMESPACE } from '../core/backends/aws/verdict-alerts';
import type { AlertsConfig } from './config';

export interface AlertsProps {
  readonly config: AlertsConfig;
  readonly namePrefix: string;
}

export class Alerts extends Construct {
  readonly topic: sns.Topic;
  readonly regressionAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: AlertsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'RegressionTopic', {
      topicName: `${props.namePrefix}-regressions`,
      displayName: 'aurora-bench regressions',
      masterKey: kms.Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    for (const email of props.config.emails) this.topic.addSubscription(new subscriptions.EmailSubscription(email));

    this.regressionAlarm = new cloudwatch.Alarm(this, 'RegressionAlarm', {
      alarmName: `${props.namePrefix}-regression`,
      alarmDescription:
        'The latest aurora-bench run regressed against its history (aurora-bench report <run> --aws, or the ' +
        'verdict_history view, says where).',
      metric: new cloudwatch.Metric({
        namespace: VERDICT_METRIC_NAMESPACE,
        metricName: REGRESSIONS_METRIC,
        statistic: cloudwatch.Stats.MAXIMUM,
        period: Duration.hours(1),
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
  }
}
