/**
 * A duet through the whole workflow definition (core/workflow/duet.ts under the local runner), on
 * the in-process backend of bench/workflow-scale.ts, which records no database but every call the
 * Tasks make: the order of the calls shows the barrier, and an injected failure shows that a step
 * that cannot start on every member runs on none and that every member is torn down.
 */
import type { CellResources, JobHandle, JobsState, RunContext, RunnerJob, TeardownReport } from '../../core/backend';
import { lakeKeys } from '../../core/lake/rows';
import type { CellPlan } from '../../core/plan/types';
import type { SpecInput } from '../../core/experiment/schema';
import { executeLocally } from '../../core/workflow/local-runner';
import type { TaskDeps } from '../../core/workflow/tasks';
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

/** The in-process backend, logging the calls that matter here in the order they were made. */
class RecordingBackend extends InProcessBenchBackend {
  readonly log: string[] = [];
  constructor(private readonly failStart?: (cell: CellPlan, jobs: readonly RunnerJob[]) => boolean) {
    super();
  }
  override async startJobs(run: RunContext, cell: CellPlan, resources: CellResources, jobs: readonly RunnerJob[]): Promise<JobHandle[]> {
    const what = `${cell.cellId} ${jobs[0]!.jobId.split('/')[1]} ${jobs[0]!.phase}`;
    if (this.failStart?.(cell, jobs)) {
      this.log.push(`start failed ${what}`);
      throw new Error(`no client answered for ${cell.cellId}`);
    }
    this.log.push(`start ${what}`);
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
  return { backend, now: () => new Date(), toolVersion: 'test', gitSha: null, serverVersion: null, readyTimeoutS: 60, judgeRun: () => Promise.resolve([]) };
}

describe('a duet through the workflow', () => {
  it('starts each step on both members before collecting either, and the next step only after both are done', async () => {
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

  it('stops the jobs a member started when another member cannot start the step, and tears every member down', async () => {
    // Arrange: b's clients fail to start the second step's run.
    const backend = new RecordingBackend((cell, jobs) => cell.cellId === 'b-r1' && jobs[0]!.phase === 'run' && jobs[0]!.jobId.includes('/ro-t2/'));
    // Act
    const result = await executeLocally({ deps: deps(backend), input: { spec }, pollMs: 0, retryMs: 0 });
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.cause).toMatch(/cell a-r1 failed: Error: no client answered for b-r1/);
    expect(result.cause).toMatch(/cell b-r1 failed: Error: no client answered for b-r1/);
    const afterFailure = backend.log.slice(backend.log.indexOf('start failed b-r1 ro-t2 run'));
    expect(afterFailure.slice(1, 2)).toEqual(['stop a-r1 ro-t2 run']);
    expect(afterFailure.filter((l) => l.startsWith('teardown')).sort()).toEqual(['teardown a-r1', 'teardown b-r1']);
    const outcomes = await Promise.all(['a-r1', 'b-r1'].map((c) => backend.lake.get(lakeKeys.workflow.cellOutcome(result.runId!, c))));
    expect(outcomes.map((o) => (JSON.parse(o!) as { status: string }).status)).toEqual(['failed', 'failed']);
  });
});
