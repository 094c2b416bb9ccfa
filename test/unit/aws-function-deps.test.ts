/**
 * A Task Lambda's deps (lambdas/<task>/handler.ts): the AWS backend composed of only its Task's parts
 * (core/backends/aws/parts/compose.ts) and the TaskDeps around it (core/task-deps/aws-function-deps.ts).
 * An operation of a part the function was not built with, or judging in a function that does not
 * judge, is a wiring error that names the function and what it lacks.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { CellPlan } from '../../core/plan/types';
import type { RunContext } from '../../core/backend';
import { composeAwsBackend, NotBuiltForThisFunctionError } from '../../core/backends/aws/parts/compose';
import { GIT_SHA_ENV, TOOL_VERSION_ENV } from '../../core/backends/aws/config';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';

const run: RunContext = {
  runId: 'run-1',
  specName: 's',
  backend: 'aws',
  region: 'eu-west-1',
  engineVersion: '8.0.mysql_aurora.3.08.0',
  dt: '2026-11-27',
  ttlHours: 4,
};
const s3 = new S3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
afterAll(() => s3.destroy());

describe("a backend composed of one Task function's parts", () => {
  const lake = new S3LakeStore(s3, 'bucket', '');
  const stopped: string[] = [];
  const backend = composeAwsBackend(
    { metricsPublishDelayS: 180 },
    lake,
    {
      startJobs: () => Promise.resolve([]),
      checkJobs: () => Promise.resolve({ done: true, running: 0, jobs: [] }),
      stopJobs: (_run, handles) => {
        stopped.push(...handles.map((h) => h.jobId));
        return Promise.resolve();
      },
    },
    'run-step',
  );

  test('is the AWS backend over the lake, with the parts it was given', async () => {
    expect(backend.kind).toBe('aws');
    expect(backend.lake).toBe(lake);
    expect(backend.metricsPublishDelayS).toBe(180);
    await expect(backend.checkJobs(run, [])).resolves.toEqual({ done: true, running: 0, jobs: [] });
    await backend.stopJobs(run, [
      {
        jobId: 'j1',
        clientId: 'i-1',
        phase: 'run',
        outputPrefix: 'raw/',
        ref: 'c-1',
        startedAt: '2026-11-27T00:00:00Z',
      },
    ]);
    expect(stopped).toEqual(['j1']);
  });

  test("refuses another part's operation, naming the function and the operation", async () => {
    const provision = backend.provisionCell(run, {} as CellPlan);

    await expect(provision).rejects.toBeInstanceOf(NotBuiltForThisFunctionError);
    await expect(provision).rejects.toThrow(/^run-step was built without the AWS backend part that does provisionCell/);
    await expect(backend.publishVerdicts(run, [])).rejects.toThrow(/publishVerdicts/);
  });
});

describe("a Task function's TaskDeps", () => {
  const backend = composeAwsBackend({ metricsPublishDelayS: 0 }, new S3LakeStore(s3, 'bucket', ''), {}, 'finish-run');

  test('carry the versions of the environment and only the deps the Task was given', () => {
    const compactRun = () => Promise.resolve('compacted');

    const deps = awsFunctionTaskDeps(
      { [TOOL_VERSION_ENV]: '1.2.3', [GIT_SHA_ENV]: 'abc' },
      { backend, compactRun },
      'finish-run',
    );

    expect(deps).toMatchObject({ backend, toolVersion: '1.2.3', gitSha: 'abc', serverVersion: null, compactRun });
    expect(deps.preflight).toBeUndefined();
    expect(deps.readyTimeoutS).toBe(90 * 60);
  });

  test('refuse judging in a function that does not judge', async () => {
    const deps = awsFunctionTaskDeps({}, { backend }, 'finish-run');

    expect(deps.toolVersion).toBe('unknown');
    await expect(deps.judgeRun(run)).rejects.toThrow(NotBuiltForThisFunctionError);
    await expect(deps.judgeRun(run)).rejects.toThrow(/^finish-run was built without the run's judging/);
  });
});
