/**
 * Where a run's regressions go (the ComputeVerdicts Task, core/backends/aws/verdict-alerts.ts):
 *  - an SNS topic the Task publishes each regression's notification to, with the e-mail
 *    subscriptions of the CDK context (aurora-bench.alerts.emails); encrypted with the AWS managed
 *    key alias/aws/sns and reachable only over TLS (cdk-nag AwsSolutions-SNS2, -SNS3);
 *  - an alarm on the run's count of regressions (namespace VERDICT_METRIC_NAMESPACE, metric
 *    REGRESSIONS_METRIC, published without dimensions): in ALARM from a run with a regression until
 *    a run without one. Missing data (no run in a period) keeps its state, so it always shows the
 *    latest run. It has no action of its own: the Task's notification already carries which steps
 *    regressed and by how much, and a second, detail-less e-mail per regression would be noise; a
 *    dashboard or a composite alarm reads its state.
 * EventBridge events go to the account's default bus, which exists in every account and Region.
 *
 * CloudFormation/CDK: AWS::SNS::Topic KmsMasterKeyId, AWS::SNS::Subscription Protocol "email"
 * (aws-cdk-lib aws-sns Topic, aws-sns-subscriptions EmailSubscription); AWS::CloudWatch::Alarm with
 * Statistic Maximum, ComparisonOperator GreaterThanOrEqualToThreshold, TreatMissingData "ignore"
 * ("the alarm state does not change", CloudWatch User Guide, "Configuring how CloudWatch alarms treat
 * missing data").
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
