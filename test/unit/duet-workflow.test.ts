/**
 * A duet through the whole workflow definition (core/workflow/tasks/group.ts under the local runner), on
 * the in-process backend of bench/workflow-scale.ts, which records no database but every call the
 * Tasks make: the order of the calls shows the barrier, and an injected failure shows that a step
 * that cannot start on every member runs on none and that every member is torn down.
 */
import type { CellResources, JobHandle, JobsState, RunContext, RunnerJob, TeardownReport } from '../../core/backend';
import { lakeKeys } from '../../core/lake/rows';
import type { CellPlan } from '../../core/plan/types';
import type { SpecInput } from '../../core/experiment/schema';
import { executeLocally } from '../../core/workflow/local-runner';
import type { RunStepOutput } from '../../core/workflow/tasks/step-types';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import { InProcessBenchBackend } from '../../bench/in-process-backend';

const spec: SpecInput = {
  name: 'duet-unit',
  engine: { version: '3.04.0' },
  variants: [
    { name: 'a', instanceClass: 'db.r6g.large' },
    { name: 'b', instanceClass: 'db.r6g.large' },
  ],
  data: { tables: 1, tableSize: 100 },
  defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1, 2] }],
  order: 'duet',
};

/** The in-process backend, logging the calls that matter here in the order they were made, and every job started. */
class RecordingBackend extends InProcessBenchBackend {
  readonly log: string[] = [];
  readonly jobs: RunnerJob[] = [];
  constructor(private readonly failStart?: (cell: CellPlan, jobs: readonly RunnerJob[]) => boolean) {
    super();
  }
  override async startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    const what = `${cell.cellId} ${jobs[0]!.jobId.split('/')[1]} ${jobs[0]!.phase}`;
    if (this.failStart?.(cell, jobs)) {
      this.log.push(`start failed ${what}`);
      throw new Error(`no client answered for ${cell.cellId}`);
    }
    this.log.push(`start ${what}`);
    this.jobs.push(...jobs);
    return super.startJobs(run, cell, resources, jobs);
  }
  override async checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const state = await super.checkJobs(run, handles);
    if (state.done) this.log.push(`done ${handles[0]!.jobId.split('/').slice(0, 3).join(' ')}`);
    return state;
  }
  override stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    this.log.push(`stop ${handles.map((h) => h.jobId.split('/').slice(0, 3).join(' ')).join(', ')}`);
    return super.stopJobs(run, handles);
  }
  override teardownCell(run: RunContext, cell: CellPlan): Promise<TeardownReport> {
    this.log.push(`teardown ${cell.cellId}`);
    return super.teardownCell(run, cell);
  }
}

function deps(backend: RecordingBackend): TaskDeps {
  return {
    backend,
    now: () => new Date(),
    toolVersion: 'test',
    gitSha: null,
    serverVersion: null,
    readyTimeoutS: 60,
    judgeRun: () => Promise.resolve([]),
  };
}

describe('a duet through the workflow', () => {
  it('starts each step on both members before collecting either; the next only after both are done', async () => {
    // Arrange
    const backend = new RecordingBackend();
    // Act
    const result = await executeLocally({ deps: deps(backend), input: { spec }, pollMs: 0, retryMs: 0 });
    // Assert
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({ status: 'succeeded', steps: 4, failedSteps: 0 });
    const runs = backend.log.filter((l) => l.startsWith('start ') || (l.startsWith('done ') && !l.includes('prepare')));
    expect(runs.filter((l) => !l.includes('prepare'))).toEqual([
      'start a-r1 ro-t1 run',
      'start b-r1 ro-t1 run',
      'done a-r1 ro-t1 run',
      'done b-r1 ro-t1 run',
      'start a-r1 ro-t2 run',
      'start b-r1 ro-t2 run',
      'done a-r1 ro-t2 run',
      'done b-r1 ro-t2 run',
    ]);
    expect(backend.log.filter((l) => l.startsWith('teardown')).sort()).toEqual(['teardown a-r1', 'teardown b-r1']);
  });

  it("stops a member's jobs when another member cannot start the step; tears every member down", async () => {
    // Arrange: b's clients fail to start the second step's run.
    const backend = new RecordingBackend(
      (cell, jobs) => cell.cellId === 'b-r1' && jobs[0]!.phase === 'run' && jobs[0]!.jobId.includes('/ro-t2/'),
    );
    // Act
    const result = await executeLocally({ deps: deps(backend), input: { spec }, pollMs: 0, retryMs: 0 });
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.cause).toMatch(/cell a-r1 failed: Error: no client answered for b-r1/);
    expect(result.cause).toMatch(/cell b-r1 failed: Error: no client answered for b-r1/);
    const afterFailure = backend.log.slice(backend.log.indexOf('start failed b-r1 ro-t2 run'));
    expect(afterFailure.slice(1, 2)).toEqual(['stop a-r1 ro-t2 run']);
    expect(afterFailure.filter((l) => l.startsWith('teardown')).sort()).toEqual(['teardown a-r1', 'teardown b-r1']);
    const outcomes = await Promise.all(
      ['a-r1', 'b-r1'].map((c) => backend.lake.get(lakeKeys.workflow.cellOutcome(result.runId!, c))),
    );
    expect(outcomes.map((o) => (JSON.parse(o!) as { status: string }).status)).toEqual(['failed', 'failed']);
  });
});

describe('a duet with data.reuse "step"', () => {
  const reuseStep: SpecInput = {
    ...spec,
    variants: spec.variants.map((v) => ({ ...v, clients: { count: 2 } })),
    data: { ...spec.data, reuse: 'step' },
  };
  /** A member's step's prepare output, as its first client's run job writes it (step-jobs.ts prepareOutputPrefix). */
  const prepareOf = (job: RunnerJob, member: string) =>
    job.outputPrefix.replace(/\/[^/]+\/([^/]+)\/run\/client-\d+\/$/, `/${member}/$1/prepare/client-1/`);

  it(
    "prepares each member's data in its first client's run job; every job awaits every member's prepare and " +
      'starts its run 2 s after the last',
    async () => {
      // Arrange
      const backend = new RecordingBackend();
      // Act
      const result = await executeLocally({ deps: deps(backend), input: { spec: reuseStep }, pollMs: 0, retryMs: 0 });
      // Assert
      expect(result.status).toBe('SUCCEEDED');
      expect(result.output).toMatchObject({ status: 'succeeded', steps: 4, failedSteps: 0 });
      expect(backend.jobs.filter((j) => j.phase !== 'run')).toEqual([]);
      expect(backend.jobs).toHaveLength(2 * 2 * 2);
      for (const job of backend.jobs) {
        const [member, stepId, , clientId] = job.jobId.split('/');
        const other = member === 'a-r1' ? 'b-r1' : 'a-r1';
        const own = prepareOf(job, member!);
        expect(own).toContain(`/${member}/${stepId}/prepare/client-1/`);
        if (clientId === 'client-1') {
          expect(job.prepareFirst?.outputPrefix).toBe(own);
          expect(job.prepareFirst?.endpoint.instanceId).toBe(`bench-${member}-w`);
          expect(job.awaitPrepareOf).toEqual([prepareOf(job, other)]);
        } else {
          expect(job.prepareFirst).toBeUndefined();
          expect([...job.awaitPrepareOf!].sort()).toEqual([own, prepareOf(job, other)].sort());
        }
        expect(job.startAfterPrepareS).toBe(2);
      }
      // One phase per step: every RunStep that starts a step starts its runs with their prepares.
      const started = result.events
        .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
        .map((e) => (e.state?.output as { step?: RunStepOutput }).step?.started)
        .filter((s) => s !== null && s !== undefined);
      expect(started.map((s) => `${s.step.stepId} ${s.phase} ${s.withPrepare === true}`)).toEqual([
        'ro-t1 run true',
        'ro-t2 run true',
      ]);
    },
  );

  it(
    "fails the duet with the member's DataPrepareFailedError when one member's prepare fails, and writes no " +
      "member's rows of the step",
    async () => {
      // Arrange: b's prepare of the first step exits 1, as the runner records a failed sysbench prepare.
      const backend = new (class extends RecordingBackend {
        override async startJobs(
          run: RunContext,
          cell: CellPlan,
          resources: CellResources,
          jobs: readonly RunnerJob[],
        ): Promise<JobHandle[]> {
          const handles = await super.startJobs(run, cell, resources, jobs);
          const preparer = jobs.find((j) => j.prepareFirst !== undefined);
          if (cell.cellId === 'b-r1' && preparer?.jobId.includes('/ro-t1/') === true) {
            const prefix = preparer.prepareFirst!.outputPrefix;
            const result = JSON.parse((await this.lake.get(prefix + 'result.json'))!) as Record<string, unknown>;
            await this.lake.put(prefix + 'result.json', JSON.stringify({ ...result, exitCode: 1 }));
            await this.lake.put(prefix + 'output.log', "FATAL: error 1049: Unknown database 'sbtest'\n");
          }
          return handles;
        }
      })();
      // Act
      const result = await executeLocally({ deps: deps(backend), input: { spec: reuseStep }, pollMs: 0, retryMs: 0 });
      // Assert
      expect(result.status).toBe('FAILED');
      expect(result.cause).toMatch(
        /cell b-r1 failed: DataPrepareFailedError: sysbench prepare for cell b-r1 failed on client-1/,
      );
      expect(result.cause).toMatch(/cell a-r1 failed: DataPrepareFailedError: sysbench prepare for cell b-r1 failed/);
      const keys = await backend.lake.list('tables/');
      expect(keys.filter((k) => k.startsWith('tables/steps/') || k.startsWith('tables/intervals/'))).toEqual([]);
      expect(backend.log.filter((l) => l.startsWith('start ')).map((l) => l.split(' ').slice(1, 3).join(' '))).toEqual([
        'a-r1 ro-t1',
        'b-r1 ro-t1',
      ]);
      expect(backend.log.filter((l) => l.startsWith('teardown')).sort()).toEqual(['teardown a-r1', 'teardown b-r1']);
    },
  );
});
