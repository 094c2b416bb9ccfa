/**
 * `aurora-bench report --aws` (athenaReportText) against moto: it finds the deployed stack's Athena
 * work group and Glue database from the stack outputs, and builds the report from what Athena returns.
 *
 * moto's Athena runs no SQL: each query takes the next result set queued through
 * /moto-api/static/athena/query-results. The result sets queued here are what a local DuckDB lake
 * holding the same run answers to the same queries, so the Athena report must equal the local one.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AthenaClient,
  CreateWorkGroupCommand,
  GetQueryExecutionCommand,
  ListQueryExecutionsCommand,
} from '@aws-sdk/client-athena';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { S3Client } from '@aws-sdk/client-s3';
import { athenaReportText } from '../../core/cli/report-aws';
import { withLake, type LakeReader, type LakeRowObject } from '../../core/lake/duckdb';
import { athenaViewSql } from '../../core/lake/athena-storage';
import { reportFromLake } from '../../core/report/report';
import { writeRunFromSpec } from '../helpers/report-fixtures';
import { athenaTable, CREDENTIALS, queueAthenaResults, REGION, type MotoAthenaResult } from './fixtures';
import { startMoto, type MotoServer } from './moto';

const REPO = join(__dirname, '..', '..');
const STACK = 'aurora-bench-report-moto';
const WORK_GROUP = 'aurora-bench-report-wg';
const DATABASE = 'aurora_bench_report';

let moto: MotoServer;
let cfn: CloudFormationClient;
let athena: AthenaClient;
let s3: S3Client;
let tempDir: string;

/** Athena's column type for a column of JS values (the first non-null one decides). */
function athenaType(rows: readonly LakeRowObject[], column: string): string {
  const value = rows.map((r) => r[column]).find((v) => v !== null && v !== undefined);
  if (typeof value === 'number') return 'double';
  if (typeof value === 'boolean') return 'boolean';
  return 'varchar';
}

/** A lake reader that also keeps each query and its result, as a moto Athena result set. */
function recordingLake(
  lake: LakeReader & { queryWithColumns(sql: string): Promise<{ columns: string[]; rows: LakeRowObject[] }> },
) {
  const queries: string[] = [];
  const results: MotoAthenaResult[] = [];
  const reader: LakeReader = {
    lakeDir: lake.lakeDir,
    async query<T extends object = LakeRowObject>(sql: string): Promise<T[]> {
      const { columns, rows } = await lake.queryWithColumns(sql);
      queries.push(sql);
      const text = (v: unknown): string | null =>
        v === null || v === undefined
          ? null
          : typeof v === 'object'
            ? JSON.stringify(v)
            : `${v as string | number | boolean}`;
      results.push(
        athenaTable(
          columns.map((name) => ({ name, type: athenaType(rows, name) })),
          rows.map((r) => columns.map((c) => text(r[c]))),
        ),
      );
      return rows as T[];
    },
  };
  return { reader, queries, results };
}

async function athenaQueries(): Promise<string[]> {
  const ids = (await athena.send(new ListQueryExecutionsCommand({ WorkGroup: WORK_GROUP }))).QueryExecutionIds ?? [];
  return Promise.all(
    ids.map(
      async (id) =>
        (await athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution?.Query ?? '',
    ),
  );
}

beforeAll(async () => {
  moto = startMoto();
  const common = { region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 };
  cfn = new CloudFormationClient(common);
  athena = new AthenaClient(common);
  s3 = new S3Client({ ...common, forcePathStyle: true });
  tempDir = mkdtempSync(join(tmpdir(), 'ab-report-aws-'));
  await athena.send(
    new CreateWorkGroupCommand({
      Name: WORK_GROUP,
      Configuration: { ResultConfiguration: { OutputLocation: 's3://ab-results/athena/' } },
    }),
  );
  // The outputs core/backends/aws/stack-outputs.ts STACK_OUTPUTS reads, as lib/aurora-bench-stack.ts exports them.
  const template = {
    Resources: { ResultsBucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'ab-report-results' } } },
    Outputs: {
      StateMachineArn: { Value: 'arn:aws:states:us-east-1:123456789012:stateMachine:aurora-bench' },
      ResultsBucketName: { Value: { Ref: 'ResultsBucket' } },
      AthenaWorkGroupName: { Value: WORK_GROUP },
      GlueDatabaseName: { Value: DATABASE },
    },
  };
  await cfn.send(new CreateStackCommand({ StackName: STACK, TemplateBody: JSON.stringify(template) }));
}, 300_000);

afterAll(() => {
  cfn.destroy();
  athena.destroy();
  s3.destroy();
  rmSync(tempDir, { recursive: true, force: true });
  moto.stop();
});

describe('athenaReportText against moto Athena', () => {
  it('prints the report of the run Athena returns, as a local lake with that run does, and the HTML', async () => {
    // Arrange: a two-variant run in a local lake; what it answers to the report's queries is queued in moto.
    const lakeDir = join(tempDir, 'lake');
    const spec = JSON.parse(readFileSync(join(REPO, 'experiments', 'quickstart.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    delete spec['$schema'];
    const { runId } = writeRunFromSpec(
      lakeDir,
      spec,
      (cell) => ({ tps: cell.variant.instanceClass.includes('r6g') ? 930 : 1000, latPctMs: 12 }),
      { runId: 'report-aws-run' },
    );
    const local = await withLake(lakeDir, async (lake) => {
      const recording = recordingLake(lake);
      const { text } = await reportFromLake(recording.reader, { repoRoot: REPO });
      return { text, queries: recording.queries, results: recording.results };
    });
    await queueAthenaResults(moto.endpoint, [
      ...athenaViewSql().map(() => ({ column_info: [], rows: [] })),
      ...local.results,
    ]);
    const htmlFile = join(tempDir, 'report.html');

    // Act
    const text = await athenaReportText({
      stackName: STACK,
      repoRoot: REPO,
      html: htmlFile,
      athena,
      cfn,
      s3,
      pollMs: 20,
    });

    // Assert: the same report, from the stack's work group and database, asking the same queries.
    expect(local.text).toContain(`run: ${runId}`);
    expect(local.text).toContain('r6g-large');
    expect(text).toBe(`${local.text}\nHTML report written to ${htmlFile}\n`);
    const sent = await athenaQueries();
    expect(sent.filter((q) => /CREATE OR REPLACE VIEW/.test(q))).toHaveLength(athenaViewSql().length);
    expect(sent.filter((q) => !/CREATE OR REPLACE VIEW/.test(q))).toEqual(local.queries);
    expect(existsSync(htmlFile)).toBe(true);
    expect(readFileSync(htmlFile, 'utf8')).toContain(`<dd>${runId}</dd>`);
  });

  it('says clearly that the stack is missing, and queries nothing', async () => {
    // Arrange
    const before = (await athenaQueries()).length;

    // Act
    const report = athenaReportText({ stackName: 'no-such-stack', repoRoot: REPO, athena, cfn, s3, pollMs: 20 });

    // Assert
    await expect(report).rejects.toMatchObject({
      name: 'NotFoundError',
      message: expect.stringMatching(/^stack "no-such-stack" not found .*pass --stack NAME$/),
    });
    expect((await athenaQueries()).length).toBe(before);
  });
});
