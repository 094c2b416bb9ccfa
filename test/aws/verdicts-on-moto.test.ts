/**
 * The ComputeVerdicts Task as its Lambda runs it (test/helpers/aws-task-deps.ts: the AWS deps, the
 * judge reading the lake through Athena), on moto: the experiment's history is in moto's S3 in the
 * lake's layout; Athena's answers come from core/rehearsal/athena-on-trino.ts (the same SQL on
 * Trino over moto's Glue and that S3 lake, queued in moto, since moto's Athena runs no SQL); the verdicts go to
 * the S3 lake, CloudWatch, and on a regression to an EventBridge rule's queue and the SNS topic's
 * subscribed queue, which moto delivers to.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { GetMetricStatisticsCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { RunContext } from '../../core/backend';
import { awsConfigToEnv } from '../../core/backends/aws/config';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import {
  REGRESSED_METRIC,
  REGRESSIONS_METRIC,
  VERDICT_EVENT_DETAIL_TYPE,
  VERDICT_METRIC_NAMESPACE,
} from '../../core/backends/aws/verdict-alerts';
import { compareCommand, historyCommand } from '../../core/cli/regression-command';
import { lakeKeys, type VerdictsRow } from '../../core/lake/rows';
import { AthenaOnTrino } from '../../core/rehearsal/athena-on-trino';
import { bindTask } from '../../core/workflow/task-registry';
import { buildAwsTaskDeps } from '../helpers/aws-task-deps';
import { tracer } from '../../lambdas/runtime/aws-runtime';
import { DT } from '../helpers/lake-fixtures';
import { writeLakeRun } from '../helpers/regression-fixtures';
import {
  createStandingInfrastructure,
  createVerdictTargets,
  CREDENTIALS,
  destroyRawClients,
  drainQueue,
  rawClients,
  REGION,
  type RawClients,
  type VerdictTargets,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';
import { stackTemplate, startTrino, type TrinoServer } from './trino';

let moto: MotoServer;
let raw: RawClients;
let targets: VerdictTargets;
let clients: AwsClients;
let athena: AthenaOnTrino;
let trino: TrinoServer;
let tempDir: string;

/** Night i of the history (its TPS and p95 latency wobble a little; night 9 is 30% slower). */
const night = (i: number) => ({
  runId: `nightly-${String(i).padStart(3, '0')}`,
  startedAt: new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString(),
});
const WOBBLE = [4, -6, 2, 7, -3, -5, 1, 3];

const runContext = (runId: string): RunContext => ({
  runId,
  specName: 'nightly',
  backend: 'aws',
  region: REGION,
  engineVersion: '3.10.4',
  dt: DT,
  ttlHours: 4,
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

async function verdictsInS3(runId: string): Promise<VerdictsRow[]> {
  const out = await raw.s3.send(
    new GetObjectCommand({
      Bucket: targets.config.bucket,
      Key: targets.config.lakePrefix + lakeKeys.verdicts(DT, runId),
    }),
  );
  return (await out.Body!.transformToString())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as VerdictsRow);
}

beforeAll(async () => {
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  targets = await createVerdictTargets(
    moto.endpoint,
    await createStandingInfrastructure(moto.endpoint, raw, { bucket: 'ab-verdicts' }),
  );
  // Arrange the history: eight steady nights, then a ninth at 70% of their TPS, in moto's S3 lake.
  tempDir = mkdtempSync(join(tmpdir(), 'ab-verdicts-moto-'));
  const lakeDir = join(tempDir, 'lake');
  for (let i = 1; i <= 9; i++)
    writeLakeRun(
      lakeDir,
      night(i).runId,
      night(i).startedAt,
      [{ tps: i === 9 ? 700 : 1000 + WOBBLE[i - 1]!, latencyMs: i === 9 ? 14.3 : 10 + WOBBLE[i - 1]! / 100 }],
      undefined,
      5,
    );
  for (const file of filesUnder(lakeDir)) {
    await raw.s3.send(
      new PutObjectCommand({
        Bucket: targets.config.bucket,
        Key: targets.config.lakePrefix + relative(lakeDir, file),
        Body: readFileSync(file),
      }),
    );
  }
  clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  trino = startTrino();
  athena = new AthenaOnTrino({
    trinoEndpoint: trino.endpoint,
    bucket: targets.config.bucket,
    lakePrefix: targets.config.lakePrefix,
    motoEndpoint: moto.endpoint,
    region: REGION,
    template: stackTemplate(),
    // The history's one day (DT): a range of years would have Trino list a prefix per day on each query.
    projectionRange: `${DT},2024-05-02`,
  });
  athena.install(clients.athena);
}, 300_000);

afterAll(async () => {
  await athena.close();
  trino.stop();
  destroyAwsClients(clients);
  targets.sqs.destroy();
  destroyRawClients(raw);
  moto.stop();
  rmSync(tempDir, { recursive: true, force: true });
});

describe('ComputeVerdicts on the AWS handlers (moto)', () => {
  it(
    'judges the regressed night through Athena, writes the verdicts table, and puts metrics, the event and ' +
      'the notification',
    async () => {
      // Arrange
      const deps = await buildAwsTaskDeps(awsConfigToEnv(targets.config), tracer, { clients });
      const computeVerdicts = bindTask('compute-verdicts', deps);

      // Act
      const output = await computeVerdicts({ run: runContext('nightly-009') });

      // Assert: the Task's answer and the verdicts table in S3
      // (TPS and QPS down, latency up; no errors before or after).
      expect(output).toMatchObject({
        runId: 'nightly-009',
        verdicts: 4,
        regressed: 3,
        withinNoise: 1,
        lakeKey: lakeKeys.verdicts(DT, 'nightly-009'),
      });
      expect(output.published).toMatchObject({ channel: 'aws', metricDatapoints: 2 + 4 });
      const rows = await verdictsInS3('nightly-009');
      expect(rows.map((r) => [r.metric, r.verdict, r.baseline_runs])).toEqual([
        ['tps', 'regressed', 8],
        ['qps', 'regressed', 8],
        ['latency', 'regressed', 8],
        ['errors', 'within-noise', 8],
      ]);
      expect(rows[0]!.ratio).toBeCloseTo(0.7, 2);
      // Athena was asked: the views first (the lake reader's CREATE OR REPLACE VIEW), then the history.
      expect(
        athena.queries.filter((q) => /^CREATE OR REPLACE VIEW verdict_history/m.test(q.replace(/^--.*\n/gm, ''))),
      ).toHaveLength(1);
      expect(athena.queries.some((q) => /FROM step_summary WHERE run_id IN \('nightly-001'/.test(q))).toBe(true);

      // Assert: the event, matched by a rule on the default bus by its detail-type.
      const events = (await drainQueue(targets.sqs, targets.eventsQueueUrl)).map(
        (b) => JSON.parse(b) as { source: string; 'detail-type': string; detail: Record<string, unknown> },
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        source: 'aurora-bench',
        'detail-type': VERDICT_EVENT_DETAIL_TYPE,
        detail: { experiment: 'nightly', runId: 'nightly-009', regressionsNotListed: 0 },
      });
      expect((events[0]!.detail['regressions'] as { metric: string }[]).map((r) => r.metric)).toEqual([
        'TPS',
        'QPS',
        'p95 latency',
      ]);

      // Assert: the notification, as the topic's SQS subscriber receives it.
      const notes = (await drainQueue(targets.sqs, targets.notificationsQueueUrl)).map(
        (b) => JSON.parse(b) as { Subject: string; Message: string },
      );
      expect(notes.map((n) => n.Subject)).toEqual(['aurora-bench: 3 regressions in nightly']);
      expect(notes[0]!.Message).toMatch(/nightly-009 of experiment nightly .* regressed on 3 step metric/);

      // Assert: CloudWatch has the run's count (no dimensions: what
      // the alarm watches) and a datapoint per judged verdict.
      const listed = await raw.cw.send(new ListMetricsCommand({ Namespace: VERDICT_METRIC_NAMESPACE }));
      expect(
        new Set(
          (listed.Metrics ?? []).map((m) => `${m.MetricName}:${(m.Dimensions ?? []).map((d) => d.Name).join(',')}`),
        ),
      ).toEqual(
        new Set([
          `${REGRESSIONS_METRIC}:`,
          `${REGRESSIONS_METRIC}:Experiment`,
          `${REGRESSED_METRIC}:Experiment,Step,Metric`,
        ]),
      );
      const count = await raw.cw.send(
        new GetMetricStatisticsCommand({
          Namespace: VERDICT_METRIC_NAMESPACE,
          MetricName: REGRESSIONS_METRIC,
          StartTime: new Date(Date.now() - 3_600_000),
          EndTime: new Date(Date.now() + 3_600_000),
          Period: 60,
          Statistics: ['Maximum'],
        }),
      );
      expect(Math.max(...(count.Datapoints ?? []).map((d) => d.Maximum ?? 0))).toBe(3);
    },
    120_000,
  );

  it('judges a steady night within the noise: metrics only, no event, no notification', async () => {
    // Arrange
    const deps = await buildAwsTaskDeps(awsConfigToEnv(targets.config), tracer, { clients });

    // Act: night 8 judged as of itself (night 9 started later and is left out)
    const output = await bindTask('compute-verdicts', deps)({ run: runContext('nightly-008') });

    // Assert
    expect(output).toMatchObject({
      regressed: 0,
      withinNoise: 4,
      published: { channel: 'aws', eventId: null, notificationId: null },
    });
    expect((await verdictsInS3('nightly-008')).map((r) => r.verdict)).toEqual([
      'within-noise',
      'within-noise',
      'within-noise',
      'within-noise',
    ]);
    expect(await drainQueue(targets.sqs, targets.eventsQueueUrl)).toEqual([]);
    expect(await drainQueue(targets.sqs, targets.notificationsQueueUrl)).toEqual([]);
  }, 120_000);

  it('says which settings are missing when the Task environment has no Athena work group', async () => {
    const { athenaWorkGroup: _w, glueDatabase: _d, ...withoutAthena } = targets.config;
    const deps = await buildAwsTaskDeps(awsConfigToEnv(withoutAthena), tracer, { clients });

    await expect(bindTask('compute-verdicts', deps)({ run: runContext('nightly-009') })).rejects.toThrow(
      /AURORA_BENCH_ATHENA_WORK_GROUP.*redeploy the stack/,
    );
  });
});

describe("compare and history --aws (Athena over the deployed stack's lake)", () => {
  it('print what the same commands print over a local lake holding the same runs', async () => {
    // Arrange: the stack's outputs (core/backends/aws/stack-outputs.ts) naming the work group and database.
    const cfn = new CloudFormationClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
    const template = {
      Resources: { Bucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'ab-verdicts-stack' } } },
      Outputs: {
        StateMachineArn: { Value: 'arn:aws:states:us-east-1:123456789012:stateMachine:aurora-bench' },
        ResultsBucketName: { Value: targets.config.bucket },
        AthenaWorkGroupName: { Value: targets.config.athenaWorkGroup },
        GlueDatabaseName: { Value: targets.config.glueDatabase },
      },
    };
    await cfn.send(new CreateStackCommand({ StackName: 'ab-verdicts', TemplateBody: JSON.stringify(template) }));
    const aws = { stackName: 'ab-verdicts', athena: clients.athena, cfn, s3: clients.s3, pollMs: 10 };
    const local = { lakeDir: join(tempDir, 'lake'), builtinWorkloads: '' };

    try {
      // Act
      const viaAthena = await historyCommand({ ...local, aws, experiment: 'nightly', json: true });
      const viaDuckDb = await historyCommand({ ...local, experiment: 'nightly', json: true });
      const compared = await compareCommand({ ...local, aws, runA: 'nightly-008', runB: 'nightly-009', json: true });
      const comparedLocally = await compareCommand({ ...local, runA: 'nightly-008', runB: 'nightly-009', json: true });

      // Assert
      expect(viaAthena.history.latestRunId).toBe('nightly-009');
      expect(viaAthena.text).toBe(viaDuckDb.text);
      expect(viaAthena.history.steps[0]!.metrics.find((m) => m.metric === 'tps')!.latest!.verdict).toBe('regressed');
      expect(compared.text).toBe(comparedLocally.text);
      expect(compared.comparison.regressions).toBeGreaterThan(0);
    } finally {
      cfn.destroy();
    }
  }, 120_000);
});
