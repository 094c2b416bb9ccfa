/**
 * Order "duet" on real servers (core/workflow/tasks/group.ts): both variants' MariaDB servers run at once
 * on this machine, each step starts on both together and the next only when both are done (the
 * barrier), and the A/B report computes the ratio from time-paired intervals. One lean run (two
 * variants, two 6-second steps, a 1,000-row table) serves every assertion. Its data is prepared
 * afresh for every step (data.reuse "step"): each member's client prepares its own server's data in
 * its run job, waits for the other member's prepare, and both runs start at the same moment after
 * the later one (core/workflow/tasks/group.ts, client/runner.js --prepare-out / --await-prepare).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackend } from '../../core/backends/local/local-backend';
import type { SpecInput } from '../../core/experiment/schema';
import { withLake } from '../../core/lake/duckdb';
import { stepResults, type StepResult } from '../../core/lake/results';
import { loadPrices } from '../../core/plan/cost';
import { loadRun } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import type { Report } from '../../core/report/model';
import { localJudge } from '../../core/regression/judge-local';
import { executeLocally, type LocalExecutionResult } from '../../core/workflow/local-runner';
import type { RunStepOutput } from '../../core/workflow/tasks/step-types';

const REPO = join(__dirname, '..', '..');

const spec: SpecInput = {
  name: 'duet-test',
  engine: { version: '3.04.0' },
  variants: [
    { name: 'a', instanceClass: 'db.t3.medium' },
    { name: 'b', instanceClass: 'db.t3.medium' },
  ],
  data: { tables: 1, tableSize: 1000, prepareThreads: 1, reuse: 'step' },
  defaults: { durationS: 6, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1, 2] }],
  order: 'duet',
};

let lakeDir: string;
let runRoot: string;
let result: LocalExecutionResult;
let steps: StepResult[];
let report: Report;

beforeAll(async () => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-duet-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-duet-runs-'));
  const backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
  result = await executeLocally({
    deps: {
      backend,
      now: () => new Date(),
      toolVersion: 'test',
      gitSha: null,
      serverVersion: 'test',
      readyTimeoutS: 60,
      judgeRun: localJudge(lakeDir),
    },
    input: { spec },
    pollMs: 100,
    retryMs: 10,
  });
  await withLake(lakeDir, async (lake) => {
    steps = await stepResults(lake, result.runId!);
    report = buildReport(await loadRun(lake, result.runId), loadPrices(REPO));
  });
}, 180_000);

afterAll(() => {
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

const at = (s: string): number => Date.parse(s);

describe('a duet run on local servers', () => {
  it('runs one duet item whose steps start on both variants in the same call', () => {
    expect(result.status).toBe('SUCCEEDED');
    const provisioned = result.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'ProvisionCell');
    expect(provisioned).toHaveLength(1);
    const runsStarted = result.events
      .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
      .map((e) => (e.state?.output as { step?: RunStepOutput }).step!)
      .filter((s) => s.started?.phase === 'run');
    expect(runsStarted.map((s) => s.started!.step.stepId)).toEqual(['ro-t1', 'ro-t2']);
    expect(runsStarted.every((s) => s.startSpreadMs !== null)).toBe(true);
  });

  it("prepares each step's data in the members' run jobs, a phase per step, and starts both runs together", () => {
    const started = result.events
      .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
      .map((e) => (e.state?.output as { step?: RunStepOutput }).step?.started)
      .filter((s) => s !== null && s !== undefined);
    expect(started.map((s) => `${s.step.stepId} ${s.phase} ${s.withPrepare === true}`)).toEqual([
      'ro-t1 run true',
      'ro-t2 run true',
    ]);
    for (const stepId of ['ro-t1', 'ro-t2']) {
      const [a, b] = ['a', 'b'].map((variant) => steps.find((s) => s.variant === variant && s.step_id === stepId)!);
      // The runs' own starts (the runner's result.json), 2 s after the
      // later prepare: the same moment, up to the processes' wake-up.
      expect(Math.abs(at(a!.started_at) - at(b!.started_at))).toBeLessThan(1000);
    }
  });

  it('measures both variants in the same seconds; a step starts only when both finished the last one', () => {
    const row = (variant: string, stepId: string) => steps.find((s) => s.variant === variant && s.step_id === stepId)!;
    expect(steps.map((s) => `${s.cell_id}/${s.step_id}:${s.status}`).sort()).toEqual([
      'a-r1/ro-t1:ok',
      'a-r1/ro-t2:ok',
      'b-r1/ro-t1:ok',
      'b-r1/ro-t2:ok',
    ]);
    for (const stepId of ['ro-t1', 'ro-t2']) {
      const [a, b] = [row('a', stepId), row('b', stepId)];
      // The measured windows overlap: each started before the other ended.
      expect(at(a.started_at)).toBeLessThan(at(b.ended_at));
      expect(at(b.started_at)).toBeLessThan(at(a.ended_at));
    }
    const secondStarts = Math.min(at(row('a', 'ro-t2').started_at), at(row('b', 'ro-t2').started_at));
    expect(secondStarts).toBeGreaterThanOrEqual(
      Math.max(at(row('a', 'ro-t1').ended_at), at(row('b', 'ro-t1').ended_at)),
    );
  });

  it('reports the order and ratios from time-paired intervals with their interval width', () => {
    const ab = report.sections.find((s) => s.id === 'ab')!;
    expect(ab.tables[0]!.notes![0]).toMatch(/^Order: duet\./);
    const ratioRows = ab.tables[0]!.rows.filter((r) => r[1] === 'b/a');
    expect(ratioRows).toHaveLength(2);
    for (const r of ratioRows) {
      // One round: 5 or 6 one-second intervals a side (sysbench may not print the last), paired by time.
      const pairs = Number(/^time-paired: (\d+) intervals, 1 round, interval batches$/.exec(r[7]!)?.[1]);
      expect(pairs).toBeGreaterThanOrEqual(4);
      expect(pairs).toBeLessThanOrEqual(6);
      // Four noisy pairs can put an end past the printed range; the width is then only a lower bound.
      expect(r[6]).toMatch(/^QPS CI width (\d+\.\d|> \d{3}) pts$/);
    }
  });
});

describe('a duet whose data is prepared once (data.reuse "cell", the default) on local servers', () => {
  // The other path of a duet's first step: a prepare phase on both members (separate prepare jobs),
  // then the run phase. One 3-second step.
  let once: LocalExecutionResult;
  let onceSteps: StepResult[];
  let onceLake: string;
  let onceRuns: string;

  beforeAll(async () => {
    onceLake = mkdtempSync(join(tmpdir(), 'ab-duet-once-lake-'));
    onceRuns = mkdtempSync(join(tmpdir(), 'ab-duet-once-runs-'));
    const backend = new LocalBackend({ lakeDir: onceLake, runRoot: onceRuns, repoRoot: REPO });
    once = await executeLocally({
      deps: {
        backend,
        now: () => new Date(),
        toolVersion: 'test',
        gitSha: null,
        serverVersion: 'test',
        readyTimeoutS: 60,
        judgeRun: localJudge(onceLake),
      },
      input: {
        spec: {
          ...spec,
          name: 'duet-once',
          data: { tables: 1, tableSize: 1000, prepareThreads: 1 },
          defaults: { durationS: 3, warmupS: 0, reportIntervalS: 1 },
          workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
        },
      },
      pollMs: 100,
      retryMs: 10,
    });
    await withLake(onceLake, async (lake) => {
      onceSteps = await stepResults(lake, once.runId!);
    });
  }, 120_000);

  afterAll(() => {
    rmSync(onceLake, { recursive: true, force: true });
    rmSync(onceRuns, { recursive: true, force: true });
  });

  it('prepares both members in a phase of its own, then runs the step on both in the same seconds', () => {
    // Act
    const started = once.events
      .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
      .map((e) => (e.state?.output as { step?: RunStepOutput }).step?.started)
      .filter((s) => s !== null && s !== undefined);
    // Assert
    expect(once.status).toBe('SUCCEEDED');
    expect(started.map((s) => `${s.step.stepId} ${s.phase} ${s.withPrepare === true}`)).toEqual([
      'ro-t1 prepare false',
      'ro-t1 run false',
    ]);
    expect(onceSteps.map((s) => `${s.cell_id}/${s.step_id}:${s.status}`).sort()).toEqual([
      'a-r1/ro-t1:ok',
      'b-r1/ro-t1:ok',
    ]);
    const [a, b] = ['a', 'b'].map((variant) => onceSteps.find((s) => s.variant === variant)!);
    expect(at(a!.started_at)).toBeLessThan(at(b!.ended_at));
    expect(at(b!.started_at)).toBeLessThan(at(a!.ended_at));
  });
});
