/**
 * What a run's verdicts become on AWS (core/backends/aws/verdict-alerts.ts), within the API limits it
 * cites: PutMetricData at most 1000 metrics a request and ASCII dimension values of 1..1024
 * characters; a PutEvents entry under 256 KB as EventBridge counts it; an SNS subject under 100
 * characters on one line, a message of at most 256 KB.
 */
import type { RunContext } from '../../core/backend';
import {
  dimensionValue,
  eventEntrySize,
  MAX_EVENT_ENTRY_BYTES,
  MAX_SNS_MESSAGE_BYTES,
  REGRESSED_METRIC,
  REGRESSIONS_METRIC,
  regressionEvent,
  regressionMessage,
  regressionSubject,
  verdictMetricRequests,
  VERDICT_EVENT_DETAIL_TYPE,
} from '../../core/backends/aws/verdict-alerts';
import { filesOfRuns } from '../../core/lake/rows';
import { verdictRow } from '../helpers/lake-fixtures';

const run: RunContext = {
  runId: 'n2',
  specName: 'nightly-regression',
  backend: 'aws',
  region: 'eu-west-1',
  engineVersion: '8.0.mysql_aurora.3.08.0',
  dt: '2024-05-02',
  ttlHours: 4,
};
const time = new Date('2024-05-02T03:00:00.000Z');

describe('CloudWatch datapoints of a run', () => {
  it(
    "one Regressed datapoint per judged verdict with experiment, step and metric, and the run's count twice " +
      "(alarm's, experiment's)",
    () => {
      // Arrange
      const verdicts = [
        verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed' }),
        verdictRow({ run_id: 'n2', metric: 'qps', verdict: 'within-noise' }),
        verdictRow({ run_id: 'n2', metric: 'latency', verdict: 'improved' }),
        verdictRow({ run_id: 'n2', metric: 'errors', verdict: 'unknown' }),
      ];

      // Act
      const requests = verdictMetricRequests(run.specName, verdicts, time);

      // Assert
      expect(requests).toHaveLength(1);
      const data = requests[0]!;
      expect(
        data.filter((d) => d.MetricName === REGRESSIONS_METRIC).map((d) => [d.Dimensions?.length ?? 0, d.Value]),
      ).toEqual([
        [0, 1],
        [1, 1],
      ]);
      expect(
        data
          .filter((d) => d.MetricName === REGRESSED_METRIC)
          .map((d) => [d.Dimensions?.map((x) => `${x.Name}=${x.Value}`).join(' '), d.Value]),
      ).toEqual([
        ['Experiment=nightly-regression Step=a/rw/t4/max/writer Metric=tps', 1],
        ['Experiment=nightly-regression Step=a/rw/t4/max/writer Metric=qps', 0],
        ['Experiment=nightly-regression Step=a/rw/t4/max/writer Metric=latency', 0],
      ]);
    },
  );

  it('splits more than 1000 metrics into several requests', () => {
    const verdicts = Array.from({ length: 1200 }, (_, i) =>
      verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'within-noise', threads: i + 1 }),
    );

    const requests = verdictMetricRequests(run.specName, verdicts, time);

    expect(requests.map((r) => r.length)).toEqual([1000, 202]);
  });

  it('makes dimension values ASCII without control characters, 1..1024 characters', () => {
    expect(dimensionValue('r6g → reader\n')).toBe('r6g ? reader');
    expect(dimensionValue('  ')).toBe('-');
    expect(dimensionValue('x'.repeat(2000))).toHaveLength(1024);
  });
});

describe('the regression event', () => {
  it('carries the counts and each regression, on the bus given, with the detail-type rules match', () => {
    const verdicts = [
      verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed', ratio: 0.7 }),
      verdictRow({ run_id: 'n2', metric: 'qps', verdict: 'within-noise' }),
    ];

    const entry = regressionEvent(run, verdicts, 's3://b/tables/verdicts/dt=2024-05-02/n2.jsonl', 'default', time);

    expect(entry).toMatchObject({
      Source: 'aurora-bench',
      DetailType: VERDICT_EVENT_DETAIL_TYPE,
      EventBusName: 'default',
    });
    expect(JSON.parse(entry.Detail!)).toMatchObject({
      experiment: 'nightly-regression',
      runId: 'n2',
      counts: { regressed: 1, 'within-noise': 1 },
      regressions: [{ step: 'a/rw/t4/max/writer', metric: 'TPS', ratio: 0.7 }],
      regressionsNotListed: 0,
    });
  });

  it('lists only as many regressions as fit under 256 KB and counts the rest', () => {
    // Arrange: 2,000 regressions with long reasons are far more than an entry holds.
    const verdicts = Array.from({ length: 2000 }, (_, i) =>
      verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed', threads: i, reason: 'r'.repeat(300) }),
    );

    // Act
    const entry = regressionEvent(run, verdicts, 'key', 'default', time);
    const detail = JSON.parse(entry.Detail!) as { regressions: unknown[]; regressionsNotListed: number };

    // Assert
    expect(eventEntrySize(entry)).toBeLessThanOrEqual(MAX_EVENT_ENTRY_BYTES);
    expect(detail.regressions.length).toBeGreaterThan(100);
    expect(detail.regressions.length + detail.regressionsNotListed).toBe(2000);
  });

  it('counts entry size as EventBridge does: UTF-8 bytes of Source, DetailType, Detail, Resources; 14 for Time', () => {
    expect(eventEntrySize({ Source: 'ab', DetailType: 'é', Detail: '{}', Resources: ['arn'], Time: time })).toBe(
      2 + 2 + 2 + 3 + 14,
    );
  });
});

describe('the SNS notification', () => {
  it('has a one-line ASCII subject under 100 characters, even for a long experiment name', () => {
    expect(regressionSubject('nightly-regression', 3)).toBe('aurora-bench: 3 regressions in nightly-regression');
    const long = regressionSubject(`exp-${'é'.repeat(200)}`, 1);
    expect(long.length).toBeLessThan(100);
    expect(long).toMatch(/^[\x20-\x7e]+$/);
  });

  it('lists each regression and stays within 256 KB', () => {
    const few = regressionMessage(
      run,
      [verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed', value: 70, baseline_mean: 100, ratio: 0.7 })],
      'key',
    );
    const many = regressionMessage(
      run,
      Array.from({ length: 3000 }, (_, i) =>
        verdictRow({ run_id: 'n2', metric: 'tps', verdict: 'regressed', threads: i, reason: 'r'.repeat(200) }),
      ),
      'key',
    );

    expect(few).toMatch(/- a\/rw\/t4\/max\/writer TPS: 70\.00 vs 100\.00 over 3 runs \(70\.0%\)/);
    expect(Buffer.byteLength(many, 'utf8')).toBeLessThanOrEqual(MAX_SNS_MESSAGE_BYTES);
    expect(many).toMatch(/\.\.\. and \d+ more/);
  });
});

describe('lake files of some runs', () => {
  it("matches a run's file and its step files by name, also for run ids with __ or characters keys replace", () => {
    const ofRuns = filesOfRuns(['r1', 'a__b', 'x/y']);

    expect(
      [
        'tables/runs/dt=2024-05-01/r1.jsonl',
        'tables/steps/dt=2024-05-01/r1__c__s.jsonl',
        'a__b__c__s.jsonl',
        'x_y.jsonl',
      ].map(ofRuns),
    ).toEqual([true, true, true, true]);
    expect(['r10.jsonl', 'r10__c__s.jsonl', 'a.jsonl', 'b__c__s.jsonl'].map(ofRuns)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
