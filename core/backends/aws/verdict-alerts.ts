/**
 * Tells the people watching the runs about a finished run's verdicts.
 * Verdicts become CloudWatch datapoints. A regression also sends an EventBridge event and an SNS message.
 * The limits below come from the botocore service models and the guides they point to.
 */
import { PutMetricDataCommand, type CloudWatchClient, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { TransientBackendError, type RunContext, type VerdictPublication } from '../../backend';
import { AuroraBenchError } from '../../errors';
import type { VerdictsRow } from '../../lake/rows';
import { call } from './aws-errors';

export const VERDICT_METRIC_NAMESPACE = 'AuroraBench/Verdicts';
/**
 * Per verdict: 1 when regressed, 0 when judged otherwise.
 * @internal exported for its tests
 */
export const REGRESSED_METRIC = 'Regressed';
/**
 * Per run: how many of its verdicts regressed. The stack's alarm watches it without dimensions.
 * An alarm names one metric, and CloudWatch aggregates only datapoints of the same dimensions.
 */
export const REGRESSIONS_METRIC = 'Regressions';
const VERDICT_EVENT_SOURCE = 'aurora-bench';
/** @internal exported for its tests */
export const VERDICT_EVENT_DETAIL_TYPE = 'aurora-bench regression';

/** PutMetricData takes at most 1000 metrics and 1 MB per request. See botocore, cloudwatch/2010-08-01. */
const MAX_METRICS_PER_REQUEST = 1000;
/**
 * PutEvents takes 1 to 10 entries, each smaller than 256 KB. See botocore, events/2015-10-07.
 * @internal exported for its tests
 */
export const MAX_EVENT_ENTRY_BYTES = 256 * 1024 - 1;
/**
 * SNS Publish takes a message of at most 256 KB and a one-line subject under 100 characters.
 * See botocore, sns/2010-03-31.
 * @internal exported for its tests
 */
export const MAX_SNS_MESSAGE_BYTES = 256 * 1024;
const MAX_SNS_SUBJECT_CHARS = 99;
const MAX_DIMENSION_VALUE_CHARS = 1024;

class VerdictPublishError extends AuroraBenchError {
  override readonly name = 'VerdictPublishError';
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * A dimension value CloudWatch accepts. PutMetricData wants 1 to 1024 ASCII characters.
 * They must not all be whitespace, and none may be a control character.
 * @internal exported for its tests
 */
export function dimensionValue(text: string): string {
  // Control characters go, including DEL. Other non-ASCII characters become "?".
  let ascii = '';
  for (const c of text) if (c >= ' ' && c !== '\x7f') ascii += c > '\x7e' ? '?' : c;
  ascii = ascii.trim();
  return (ascii === '' ? '-' : ascii).slice(0, MAX_DIMENSION_VALUE_CHARS);
}

/** "r6g-large/oltp_read_write/t16/max/writer": a step by what it ran, in ASCII. */
function stepName(v: Pick<VerdictsRow, 'variant' | 'workload' | 'threads' | 'rate' | 'target'>): string {
  return `${v.variant}/${v.workload}/t${v.threads}/${v.rate > 0 ? `${v.rate}per-s` : 'max'}/${v.target}`;
}

const isJudged = (v: VerdictsRow): boolean =>
  v.verdict === 'regressed' || v.verdict === 'improved' || v.verdict === 'within-noise';

/**
 * The datapoints of a run's verdicts, in requests of at most 1000 metrics.
 * Values must be finite, since CloudWatch rejects NaN and infinities.
 * @internal exported for its tests
 */
export function verdictMetricRequests(
  experiment: string,
  verdicts: readonly VerdictsRow[],
  timestamp: Date,
): MetricDatum[][] {
  const exp = { Name: 'Experiment', Value: dimensionValue(experiment) };
  const regressions = verdicts.filter((v) => v.verdict === 'regressed').length;
  const data: MetricDatum[] = [
    { MetricName: REGRESSIONS_METRIC, Timestamp: timestamp, Value: regressions, Unit: 'Count' },
    { MetricName: REGRESSIONS_METRIC, Dimensions: [exp], Timestamp: timestamp, Value: regressions, Unit: 'Count' },
    ...verdicts.filter(isJudged).map((v): MetricDatum => ({
      MetricName: REGRESSED_METRIC,
      Dimensions: [
        exp,
        { Name: 'Step', Value: dimensionValue(stepName(v)) },
        { Name: 'Metric', Value: dimensionValue(v.metric) },
      ],
      Timestamp: timestamp,
      Value: v.verdict === 'regressed' ? 1 : 0,
      Unit: 'Count',
    })),
  ];
  const out: MetricDatum[][] = [];
  for (let i = 0; i < data.length; i += MAX_METRICS_PER_REQUEST) out.push(data.slice(i, i + MAX_METRICS_PER_REQUEST));
  return out;
}

/** One regression as the event and the message list it. */
interface RegressionLine {
  readonly step: string;
  readonly metric: string;
  readonly value: number | null;
  readonly baselineMean: number | null;
  readonly baselineRuns: number;
  /** value / baseline mean. */
  readonly ratio: number | null;
  readonly sinceRunId: string | null;
  readonly reason: string;
}

const regressionLines = (verdicts: readonly VerdictsRow[]): RegressionLine[] =>
  verdicts
    .filter((v) => v.verdict === 'regressed')
    .map((v) => ({
      step: stepName(v),
      metric: v.metric_label,
      value: v.value,
      baselineMean: v.baseline_mean,
      baselineRuns: v.baseline_runs,
      ratio: v.ratio,
      sinceRunId: v.since_run_id,
      reason: v.reason,
    }));

function countsOf(verdicts: readonly VerdictsRow[]): Record<string, number> {
  const counts: Record<string, number> = { regressed: 0, improved: 0, 'within-noise': 0, unknown: 0, 'not-judged': 0 };
  for (const v of verdicts) counts[v.verdict] = (counts[v.verdict] ?? 0) + 1;
  return counts;
}

/**
 * PutEvents entry size as EventBridge computes it. It counts UTF-8 bytes, plus 14 bytes for Time.
 * See the EventBridge User Guide, "Calculating PutEvents event entry size".
 * @internal exported for its tests
 */
export function eventEntrySize(entry: PutEventsRequestEntry): number {
  return (
    (entry.Time !== undefined ? 14 : 0) +
    utf8Bytes(entry.Source ?? '') +
    utf8Bytes(entry.DetailType ?? '') +
    utf8Bytes(entry.Detail ?? '') +
    (entry.Resources ?? []).reduce((n, r) => n + utf8Bytes(r), 0)
  );
}

/**
 * The regression event of a run: the counts and as many regressed steps as fit in an entry.
 * `regressionsNotListed` counts the rest. The lake's verdicts table has them all.
 * @internal exported for its tests
 */
export function regressionEvent(
  run: RunContext,
  verdicts: readonly VerdictsRow[],
  lakeKey: string,
  eventBusName: string,
  time: Date,
): PutEventsRequestEntry {
  const all = regressionLines(verdicts);
  const entryWith = (listed: number): PutEventsRequestEntry => ({
    Source: VERDICT_EVENT_SOURCE,
    DetailType: VERDICT_EVENT_DETAIL_TYPE,
    EventBusName: eventBusName,
    Time: time,
    Detail: JSON.stringify({
      experiment: run.specName,
      runId: run.runId,
      region: run.region,
      counts: countsOf(verdicts),
      regressions: all.slice(0, listed),
      regressionsNotListed: all.length - listed,
      verdictsKey: lakeKey,
    }),
  });
  // Halve the list until the entry fits, then grow it back one by one. Lists are short in practice.
  let listed = all.length;
  while (listed > 0 && eventEntrySize(entryWith(listed)) > MAX_EVENT_ENTRY_BYTES) listed = Math.floor(listed / 2);
  while (listed < all.length && eventEntrySize(entryWith(listed + 1)) <= MAX_EVENT_ENTRY_BYTES) listed++;
  return entryWith(listed);
}

/**
 * "aurora-bench: 3 regressions in nightly-regression": ASCII, one line, under 100 characters.
 * @internal exported for its tests
 */
export function regressionSubject(experiment: string, regressions: number): string {
  const head = `aurora-bench: ${regressions} regression${regressions === 1 ? '' : 's'} in `;
  const name = experiment.replace(/[^\x20-\x7e]/g, '?');
  const room = MAX_SNS_SUBJECT_CHARS - head.length;
  return head + (name.length <= room ? name : name.slice(0, room - 3) + '...');
}

const fmt = (x: number | null, digits = 1): string => (x === null ? '-' : x.toFixed(digits));

/**
 * The e-mail text of a regression: each regressed step and metric, then where the rest is.
 * @internal exported for its tests
 */
export function regressionMessage(run: RunContext, verdicts: readonly VerdictsRow[], lakeKey: string): string {
  const lines = regressionLines(verdicts);
  const counts = countsOf(verdicts);
  const head = [
    `Run ${run.runId} of experiment ${run.specName} (${run.region}) regressed on ${lines.length} step metric(s).`,
    `Verdicts: ${counts['regressed']} regressed, ${counts['improved']} improved, ${counts['within-noise']} ` +
      `within the noise, ${counts['unknown']} noise unknown, ${counts['not-judged']} not judged.`,
    '',
  ];
  const tail = [
    '',
    `All verdicts: the lake's verdicts table (${lakeKey}), the verdict_history view, or \`aurora-bench ` +
      `report ${run.runId} --aws\`.`,
  ];
  const body: string[] = [];
  let bytes = utf8Bytes([...head, ...tail].join('\n')) + 200;
  for (const [i, l] of lines.entries()) {
    const line =
      `- ${l.step} ${l.metric}: ${fmt(l.value, 2)} vs ${fmt(l.baselineMean, 2)} ` +
      `over ${l.baselineRuns} runs ` +
      `(` +
      (l.ratio === null ? '-' : `${(l.ratio * 100).toFixed(1)}%`) +
      `)` +
      (l.sinceRunId ? `, since ${l.sinceRunId}` : '') +
      `. ${l.reason}`;
    if (bytes + utf8Bytes(line) + 1 > MAX_SNS_MESSAGE_BYTES) {
      body.push(`... and ${lines.length - i} more`);
      break;
    }
    body.push(line);
    bytes += utf8Bytes(line) + 1;
  }
  return [...head, ...body, ...tail].join('\n');
}

export interface VerdictAlertsOptions {
  readonly cloudwatch: CloudWatchClient;
  readonly events: EventBridgeClient;
  readonly sns: SNSClient;
  /** The bus regression events go to; "default" is the account's default bus. */
  readonly eventBusName: string;
  /** The SNS topic of regression notifications. Without it, no notification goes out. */
  readonly topicArn?: string;
  readonly now: () => Date;
}

export async function publishVerdicts(
  options: VerdictAlertsOptions,
  run: RunContext,
  verdicts: readonly VerdictsRow[],
  lakeKey: string,
): Promise<VerdictPublication> {
  const now = options.now();
  let metricDatapoints = 0;
  for (const data of verdictMetricRequests(run.specName, verdicts, now)) {
    await call('CloudWatch PutMetricData', () =>
      options.cloudwatch.send(new PutMetricDataCommand({ Namespace: VERDICT_METRIC_NAMESPACE, MetricData: data })),
    );
    metricDatapoints += data.length;
  }
  if (!verdicts.some((v) => v.verdict === 'regressed'))
    return { channel: 'aws', metricDatapoints, eventId: null, notificationId: null };

  const entry = regressionEvent(run, verdicts, lakeKey, options.eventBusName, now);
  const put = await call('EventBridge PutEvents', () =>
    options.events.send(new PutEventsCommand({ Entries: [entry] })),
  );
  const result = put.Entries?.[0];
  if ((put.FailedEntryCount ?? 0) > 0 || result?.ErrorCode) {
    const text =
      `EventBridge PutEvents refused the regression event of ` +
      `run ${run.runId}: ${result?.ErrorCode ?? 'failed'}: ${result?.ErrorMessage ?? 'no message'}`;
    // EventBridge reports a failed entry in its ErrorCode, not as an exception.
    // It documents these two codes as retryable.
    if (result?.ErrorCode === 'InternalFailure' || result?.ErrorCode === 'ThrottlingException')
      throw new TransientBackendError(text);
    throw new VerdictPublishError(text);
  }
  let notificationId: string | null = null;
  if (options.topicArn !== undefined) {
    const regressions = verdicts.filter((v) => v.verdict === 'regressed').length;
    const published = await call('SNS Publish', () =>
      options.sns.send(
        new PublishCommand({
          TopicArn: options.topicArn,
          Subject: regressionSubject(run.specName, regressions),
          Message: regressionMessage(run, verdicts, lakeKey),
        }),
      ),
    );
    notificationId = published.MessageId ?? null;
  }
  return { channel: 'aws', metricDatapoints, eventId: result?.EventId ?? null, notificationId };
}
