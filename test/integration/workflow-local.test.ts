/**
 * Every path of state-machines/benchmark.asl.json, executed locally with aws-local-stepfunctions
 * against the real local backend (mariadbd writer + reader, real sysbench): success, a retried
 * transient error, a failure injected at each Task (each must end in teardown and a failed
 * execution with the cause), and a failing step that does not stop the other cells.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TransientBackendError, type Backend } from '../../core/backend';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { lakeKeys, type MetricWindowRow, type RunRow, type StepRow, type VerdictsRow } from '../../core/lake/rows';
import type { SpecInput } from '../../core/experiment/schema';
import { executeLocally, type ExecutionEvent, type LocalExecutionResult } from '../../core/workflow/local-runner';
import { withInjectedFailures } from '../helpers/injected-failures';
import type { RunStepOutput } from '../../core/workflow/tasks/step-types';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import { budgetRefusal } from '../helpers/budget';
import { runLocal } from '../../core/cli/run-local';
import { localJudge } from '../../core/regression/judge-local';
import { SWEEP_ON_STATUSES } from '../../lib/safety-net';
import { serverProcessesUnder } from '../helpers/server-processes';

const REPO = join(__dirname, '..', '..');

function tinySpec(over: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'wf-test',
    engine: { version: '3.04.0' },
    variants: [{ name: 'small', instanceClass: 'db.t3.medium', readers: 1 }],
    data: { tables: 1, tableSize: 200, prepareThreads: 1 },
    defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
    workloads: [
      { name: 'rw', test: 'oltp_read_write', threads: [2] },
      { name: 'ro', test: 'oltp_read_only', threads: [2], target: 'reader' },
    ],
    ...over,
  };
}

/**
 * One cell with no reader and one 1-s writer step: enough for a path of the workflow that fails or
 * retries a Task (the servers, jobs and rows are what tinySpec makes, fewer of them).
 */
function oneStepSpec(): SpecInput {
  return tinySpec({
    variants: [{ name: 'small', instanceClass: 'db.t3.medium', readers: 0 }],
    defaults: { durationS: 1, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
  });
}

let lakeDir: string;
let runRoot: string;

beforeEach(() => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-wf-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-wf-runs-'));
});
afterEach(() => {
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

function newBackend(): LocalBackend {
  return new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
}

function deps(backend: Backend): TaskDeps {
  return {
    backend,
    now: () => new Date(),
    toolVersion: 'test',
    gitSha: null,
    serverVersion: 'test',
    readyTimeoutS: 60,
    judgeRun: localJudge(lakeDir),
  };
}

async function run(backend: Backend, spec: SpecInput = tinySpec()): Promise<LocalExecutionResult> {
  return executeLocally({ deps: deps(backend), input: { spec }, pollMs: 100, retryMs: 10 });
}

function entered(events: readonly ExecutionEvent[], state: string): number {
  return events.filter((e) => e.type === 'StateEntered' && e.state?.name === state).length;
}

/** The phases RunStep started, in order (its output says what it started). */
function startedPhases(events: readonly ExecutionEvent[]): string[] {
  return events
    .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
    .map((e) => (e.state?.output as { step?: RunStepOutput } | undefined)?.step?.started?.phase)
    .filter((p) => p !== undefined);
}

const serversLeft = (): string[] => serverProcessesUnder('mariadbd', runRoot);

async function runRow(backend: Backend, result: LocalExecutionResult): Promise<RunRow> {
  const dt = new Date().toISOString().slice(0, 10);
  const text = await backend.lake.get(lakeKeys.run(dt, result.runId!));
  return JSON.parse(text!.trim()) as RunRow;
}

async function stepRows(
  backend: Backend,
  result: LocalExecutionResult,
  cellId: string,
  stepId: string,
): Promise<StepRow[]> {
  const dt = new Date().toISOString().slice(0, 10);
  const text = await backend.lake.get(lakeKeys.stepTable('steps', dt, result.runId!, cellId, stepId));
  return text!
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as StepRow);
}

describe('benchmark workflow, locally', () => {
  it('succeeds end to end: provisions, prepares once, runs each step, collects, tears down', async () => {
    // Arrange
    const backend = newBackend();
    // Act
    const result = await run(backend);
    // Assert
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({ status: 'succeeded', steps: 2, failedSteps: 0 });
    expect(entered(result.events, 'ProvisionCell')).toBe(1);
    // The cell Map hands its child only the item's position (ProvisionCell
    // reads which group it is), and the child returns its status alone.
    const stateOf = (type: string, name: string) =>
      result.events.find((e) => e.type === type && e.state?.name === name)?.state;
    expect(stateOf('StateEntered', 'ProvisionCell')?.input).toEqual({
      run: expect.objectContaining({ runId: result.runId }) as unknown,
      group: { index: 0 },
    });
    expect(stateOf('StateExited', 'ProvisionCell')?.output).toMatchObject({
      group: { groupId: 'small-r1', index: 0, members: [{ cellId: 'small-r1' }] },
      resources: { groupId: 'small-r1', members: [{ cellId: 'small-r1' }] },
    });
    expect(stateOf('StateExited', 'TeardownCell')?.output).toBe('succeeded');
    expect(startedPhases(result.events)).toEqual(['prepare', 'run', 'run']);
    expect(entered(result.events, 'TeardownCell')).toBe(1);
    expect(entered(result.events, 'TeardownCellOnError')).toBe(0);
    // The sampler's metrics are never late: the cell asks once and does not wait.
    expect(entered(result.events, 'CollectLateMetrics')).toBe(1);
    expect(entered(result.events, 'WaitForLateMetrics')).toBe(0);
    const dt = new Date().toISOString().slice(0, 10);
    const windows = (await backend.lake.get(
      lakeKeys.stepTable('metric_windows', dt, result.runId!, 'small-r1', 'rw-t2'),
    ))!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as MetricWindowRow);
    expect(windows.find((w) => w.instance_id === 'small-r1-w' && w.metric === 'CPUUtilization')).toMatchObject({
      source: 'local',
      complete: true,
    });
    expect(windows.every((w) => w.complete && w.received === w.expected)).toBe(true);
    // InnoDB's file reads and writes stand in for Aurora's IOPS; what cannot be measured locally is said in the notes.
    const serverMetrics = (await backend.lake.get(
      lakeKeys.stepTable('server_metrics', dt, result.runId!, 'small-r1', 'rw-t2'),
    ))!;
    expect(serverMetrics).toContain('"metric":"WriteIOPS"');
    expect(serverMetrics).toContain('"metric":"ReadIOPS"');
    const rw = await stepRows(backend, result, 'small-r1', 'rw-t2');
    expect(rw).toHaveLength(1);
    expect(rw[0]).toMatchObject({ status: 'ok', threads: 2, target: 'writer', error: null });
    expect(rw[0]!.tps).toBeGreaterThan(0);
    // The latency distribution from the run's histogram: ordered, and within the step's min and max.
    const distribution = [
      rw[0]!.lat_p50_ms,
      rw[0]!.lat_p90_ms,
      rw[0]!.lat_p95_ms,
      rw[0]!.lat_p99_ms,
      rw[0]!.lat_p999_ms,
    ];
    expect(distribution.every((v) => typeof v === 'number' && v > 0)).toBe(true);
    expect([...(distribution as number[])].sort((x, y) => x - y)).toEqual(distribution);
    expect(distribution[0]!).toBeGreaterThanOrEqual(rw[0]!.lat_min_ms! * 0.9);
    expect(distribution[4]!).toBeLessThanOrEqual(rw[0]!.lat_max_ms! * 1.1);
    const ro = await stepRows(backend, result, 'small-r1', 'ro-t2');
    expect(ro[0]!.endpoint_instance).toMatch(/-r1$/);
    const manifest = await runRow(backend, result);
    expect(manifest).toMatchObject({ status: 'succeeded', backend: 'local', error: null });
    expect(manifest.sysbench_version).toMatch(/^1\.0\.\d+$/);
    // After FinishRun the run is judged against its experiment's history: a first run has no
    // earlier runs to judge against, so each step's four metrics are "unknown", in the lake.
    expect(entered(result.events, 'ComputeVerdicts')).toBe(1);
    const verdicts = (await backend.lake.get(lakeKeys.verdicts(dt, result.runId!)))!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as VerdictsRow);
    expect(verdicts.map((v) => [v.experiment, v.run_id, v.workload, v.verdict])).toEqual(
      ['rw', 'ro'].flatMap((w) =>
        ['tps', 'qps', 'latency', 'errors'].map(() => ['wf-test', result.runId, w, 'unknown']),
      ),
    );
    expect(manifest.notes).toMatch(
      /not measured locally: CommitLatency, DMLLatency, SelectLatency \(MariaDB keeps no statement durations/,
    );
    // A MariaDB cell's note names no Aurora PostgreSQL metric.
    expect(manifest.notes).not.toMatch(/PostgreSQL|AuroraForwarding/);
    expect(serversLeft()).toEqual([]);
  });

  it('data.reuse "step": a job per step prepares, runs; a failed prepare fails the cell, no run rows', async () => {
    // Arrange: two clients, so the second one's job waits for the first one's prepare; the second
    // step's prepare fails (MariaDB refuses an unknown storage engine under its default sql_mode,
    // NO_ENGINE_SUBSTITUTION), its run never starts.
    const backend = newBackend();
    const spec = tinySpec({
      variants: [{ name: 'small', instanceClass: 'db.t3.medium', readers: 0, clients: { count: 2 } }],
      data: { tables: 1, tableSize: 200, prepareThreads: 1, reuse: 'step' },
      workloads: [
        { name: 'rw', test: 'oltp_read_write', threads: [1] },
        { name: 'bad', test: 'oltp_read_only', threads: [1], options: { mysql_storage_engine: 'NoSuchEngine' } },
      ],
    });
    // Act
    const result = await run(backend, spec);
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.cause).toContain('DataPrepareFailedError');
    expect(result.cause).toMatch(/sysbench prepare for cell small-r1 failed on client-1: .*NoSuchEngine/);
    const started = result.events
      .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
      .map((e) => (e.state?.output as { step?: RunStepOutput } | undefined)?.step)
      .filter((o) => o?.started);
    expect(started.map((o) => [o!.started!.phase, o!.started!.withPrepare, o!.started!.step.stepId])).toEqual([
      ['run', true, 'rw-t1'],
      ['run', true, 'bad-t1'],
    ]);
    const dt = new Date().toISOString().slice(0, 10);
    const raw = (stepId: string, phase: string, client: string) =>
      lakeKeys.raw(dt, result.runId!, 'small-r1', stepId, phase, client);
    const prepared = JSON.parse((await backend.lake.get(raw('rw-t1', 'prepare', 'client-1') + 'result.json'))!) as {
      phase: string;
      exitCode: number;
      startedAt: string;
      endedAt: string;
    };
    expect([prepared.phase, prepared.exitCode]).toEqual(['prepare', 0]);
    // The next step's first look waits for a prepare as long as the cell's last one, the 2 s after
    // it at which both clients' runs start, and the run.
    const lastPrepareS = Math.ceil((Date.parse(prepared.endedAt) - Date.parse(prepared.startedAt)) / 1000);
    expect(started[1]!.waitS).toBe(lastPrepareS + 2 + 2 + 1);
    expect(await backend.lake.get(raw('rw-t1', 'prepare', 'client-2') + 'result.json')).toBeUndefined();
    const rw = await stepRows(backend, result, 'small-r1', 'rw-t1');
    expect(rw.map((r) => [r.status, r.client_id])).toEqual([
      ['ok', 'client-1'],
      ['ok', 'client-2'],
    ]);
    // Both runs started 2 s after the prepare ended (the run's own times, not the job's).
    for (const row of rw)
      expect(Date.parse(row.started_at)).toBeGreaterThanOrEqual(Date.parse(prepared.endedAt) + 2000);
    expect(
      await backend.lake.get(lakeKeys.stepTable('server_config', dt, result.runId!, 'small-r1', 'rw-t1')),
    ).toBeDefined();
    // The failed prepare is the cell's failure, not a failed run: no step rows; both runs say they did not run.
    expect(
      await backend.lake.get(lakeKeys.stepTable('steps', dt, result.runId!, 'small-r1', 'bad-t1')),
    ).toBeUndefined();
    for (const client of ['client-1', 'client-2'])
      expect(await backend.lake.get(raw('bad-t1', 'run', client) + 'output.log')).toContain(
        "aurora-bench runner: not run: the data's prepare",
      );
    expect((await runRow(backend, result)).status).toBe('failed');
    expect(entered(result.events, 'TeardownCellOnError')).toBe(1);
    expect(serversLeft()).toEqual([]);
  });

  it('runs cells at once up to maxConcurrency, each on its own servers', async () => {
    // Arrange
    const backend = newBackend();
    const spec = tinySpec({
      variants: [
        { name: 'one', instanceClass: 'db.t3.medium', readers: 0 },
        { name: 'two', instanceClass: 'db.t3.medium', readers: 0 },
      ],
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1], durationS: 3 }],
      maxConcurrency: 2,
    });
    // Act
    const result = await run(backend, spec);
    // Assert: both cells succeeded and their steps overlapped in time
    expect(result.status).toBe('SUCCEEDED');
    const one = (await stepRows(backend, result, 'one-r1', 'rw-t1'))[0]!;
    const two = (await stepRows(backend, result, 'two-r1', 'rw-t1'))[0]!;
    expect([one.status, two.status]).toEqual(['ok', 'ok']);
    expect(one.endpoint_instance).not.toBe(two.endpoint_instance);
    expect(Date.parse(one.started_at)).toBeLessThan(Date.parse(two.ended_at));
    expect(Date.parse(two.started_at)).toBeLessThan(Date.parse(one.ended_at));
    expect(serversLeft()).toEqual([]);
  });

  it("carries a custom Lua workload's read-after-write checks into the lake (rw_consistency.lua)", async () => {
    // Arrange
    const backend = newBackend();
    const body = readFileSync(join(REPO, 'experiments', 'workloads', 'rw_consistency.lua'), 'utf8');
    const spec = tinySpec({
      variants: [{ name: 'one', instanceClass: 'db.t3.medium', readers: 0 }],
      // No --consistency: MariaDB has no aurora_replica_read_consistency, and the script refuses to pretend.
      workloads: [{ name: 'raw', script: 'rw_consistency.lua', threads: [2] }],
    });
    // Act
    const result = await executeLocally({
      deps: deps(backend),
      input: { spec, scripts: { 'rw_consistency.lua': body } },
      pollMs: 100,
      retryMs: 10,
    });
    // Assert: every transaction checked its own write; on the writer none is stale
    const row = (await stepRows(backend, result, 'one-r1', 'raw-t2'))[0]!;
    expect(row.error).toBeNull();
    expect(result.status).toBe('SUCCEEDED');
    expect(row.status).toBe('ok');
    expect(row.read_back_checks).toBeGreaterThan(0);
    expect(row.stale_reads).toBe(0);
    expect(serversLeft()).toEqual([]);
  });

  it('retries a transient backend error and still succeeds', async () => {
    const backend = withInjectedFailures(newBackend(), {
      checkJobs: { error: new TransientBackendError('throttled'), times: 1 },
    });
    const result = await run(backend, tinySpec({ workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }] }));
    expect(result.status).toBe('SUCCEEDED');
    // A step still running is not retried (RunStep returns done false): the only retry is the injected error's.
    const retried = result.events.filter((e) => e.type === 'StateRetried');
    expect(new Set(retried.map((e) => e.state?.name))).toEqual(new Set(['RunStep']));
    expect(retried).toHaveLength(1);
    // The looks that found the step's jobs still running are RunStep's answers, not failures.
    const stillRunning = result.events
      .filter((e) => e.type === 'StateExited' && e.state?.name === 'RunStep')
      .map((e) => (e.state?.output as { step?: RunStepOutput } | undefined)?.step)
      .filter((step) => step?.running !== undefined);
    expect(stillRunning.length).toBeGreaterThan(0);
    expect(
      stillRunning.every((step) => !step!.done && step!.running! > 0 && step!.waitS >= 10 && step!.started === null),
    ).toBe(true);
    expect(backend.calls['checkJobs']).toBeGreaterThan(1);
    expect(serversLeft()).toEqual([]);
  });

  it('fails at PlanRun on an invalid spec without creating anything', async () => {
    const backend = withInjectedFailures(newBackend(), {});
    const result = await run(backend, tinySpec({ data: { tables: 0, tableSize: 1 } }));
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('InvalidSpecError');
    expect(result.cause).toContain('data.tables');
    expect(backend.calls['provisionCell']).toBeUndefined();
  });

  it('fails at PlanRun when the preflight refuses (a budget below the estimate), creating nothing', async () => {
    // Arrange: the preflight the AWS Lambda uses for budgets, with a budget no cluster fits in.
    const backend = withInjectedFailures(newBackend(), {});
    const d: TaskDeps = {
      ...deps(backend),
      preflight: (plan, spec) => Promise.resolve([budgetRefusal(plan, spec.budget)].filter((n) => n !== null)),
    };
    // Act
    const result = await executeLocally({
      deps: d,
      input: { spec: tinySpec({ budget: { maxUsd: 0.0001 } }) },
      pollMs: 100,
      retryMs: 10,
    });
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('InvalidSpecError');
    expect(result.cause).toMatch(/budget\.maxUsd: estimated cost .* exceeds budget\.maxUsd/);
    expect(backend.calls['provisionCell']).toBeUndefined();
  });

  // Which phase a startJobs(run, cell, resources, jobs) or checkJobs(run, handles) call is for.
  const phaseOf = (args: unknown[]) => ((args[3] ?? args[1]) as { phase: string }[])[0]?.phase;
  const runPhase = (args: unknown[]) => phaseOf(args) === 'run';
  const preparePhase = (args: unknown[]) => phaseOf(args) === 'prepare';
  const injected: [keyof Backend, string, ((args: unknown[]) => boolean) | undefined][] = [
    ['provisionCell', 'ProvisionCell', undefined],
    ['checkCellReady', 'CheckCellReady', undefined],
    ['startClients', 'StartClients', undefined],
    ['checkClientsReady', 'CheckClientsReady', undefined],
    ['startJobs', 'RunStep', preparePhase],
    ['checkJobs', 'RunStep', preparePhase],
    ['startJobs', 'RunStep', runPhase],
    ['checkJobs', 'RunStep', runPhase],
    ['collectServerMetrics', 'RunStep', undefined],
  ];
  it.each(injected)(
    'a failure in %s (state %s) is caught, the cell torn down, the execution failed with the cause',
    async (method, state, when) => {
      // Arrange
      const backend = withInjectedFailures(newBackend(), {
        [method]: { error: new Error(`injected ${method} failure`), ...(when ? { when } : {}) },
      });
      // Act
      const result = await run(backend, oneStepSpec());
      // Assert
      expect(result.status).toBe('FAILED');
      expect(result.error).toBe('BenchmarkFailed');
      expect(result.cause).toContain(`injected ${method} failure`);
      const failedStates = result.events.filter((e) => e.type === 'StateFailed').map((e) => e.state?.name);
      expect(failedStates).toContain(state);
      const caught = result.events.filter((e) => e.type === 'StateCaught').map((e) => e.state?.name);
      // RunStep fails its segment, whose Map's Catch routes the cell to teardown.
      expect(caught).toContain(state === 'RunStep' ? 'RunStepSegments' : state);
      expect(entered(result.events, 'TeardownCellOnError')).toBe(1);
      expect(backend.calls['teardownCell']).toBe(1);
      expect(serversLeft()).toEqual([]);
      expect((await runRow(backend, result)).status).toBe('failed');
    },
  );

  it('a FinishRun failure ends the execution in RunFailed with the cause, after the cells were torn down', async () => {
    // Arrange: the lake refuses reads of the run manifest, which only FinishRun makes.
    const real = newBackend();
    const lake = new Proxy(real.lake, {
      get(target, prop, receiver) {
        if (prop === 'get') {
          return async (key: string) => {
            if (key.startsWith('tables/runs/')) throw new Error('lake unavailable');
            return target.get(key);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const backend = new Proxy(real, {
      get: (t, p, r) => (p === 'lake' ? lake : (Reflect.get(t, p, r) as unknown)),
    }) as Backend;
    // Act
    const result = await run(backend, oneStepSpec());
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('Error');
    expect(result.cause).toContain('lake unavailable');
    expect(entered(result.events, 'TeardownCell')).toBe(1);
    expect(entered(result.events, 'RunFailed')).toBe(1);
    expect(serversLeft()).toEqual([]);
  });

  it('a verdict failure is recorded and changes nothing: run succeeds, cells torn down, manifest final', async () => {
    // Arrange: the judging fails (as an unreachable Athena would)
    const backend = newBackend();
    const judgeRun = () => Promise.reject(new Error('history unavailable'));

    // Act
    const result = await executeLocally({
      deps: { ...deps(backend), judgeRun },
      input: { spec: oneStepSpec() },
      pollMs: 100,
      retryMs: 10,
    });

    // Assert
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({ status: 'succeeded', failedSteps: 0 });
    const verdictsExit = result.events.find((e) => e.type === 'StateEntered' && e.state?.name === 'DidRunSucceed');
    expect(verdictsExit?.state?.input).toMatchObject({
      verdictsError: { Error: 'Error', Cause: expect.stringContaining('history unavailable') as unknown },
    });
    expect(entered(result.events, 'TeardownCell')).toBe(1);
    expect((await runRow(backend, result)).status).toBe('succeeded');
    expect(
      await backend.lake.get(lakeKeys.verdicts(new Date().toISOString().slice(0, 10), result.runId!)),
    ).toBeUndefined();
    expect(serversLeft()).toEqual([]);
  });

  it('a failed cell does not stop the next one: it runs, and the run fails naming only the failed cell', async () => {
    // Arrange: provisioning fails for the first cell only
    const backend = withInjectedFailures(newBackend(), {
      provisionCell: {
        error: new Error('no capacity for one-r1'),
        when: (args) => (args[1] as { cellId: string }).cellId === 'one-r1',
      },
    });
    const spec = tinySpec({
      variants: [
        { name: 'one', instanceClass: 'db.t3.medium', readers: 0 },
        { name: 'two', instanceClass: 'db.t3.medium', readers: 0 },
      ],
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
    });
    // Act
    const result = await run(backend, spec);
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.cause).toMatch(/cell one-r1 failed: .*no capacity for one-r1/);
    expect(result.cause).not.toMatch(/two-r1/);
    expect((await stepRows(backend, result, 'two-r1', 'rw-t1'))[0]!.status).toBe('ok');
    expect(entered(result.events, 'TeardownCellOnError')).toBe(1);
    expect(entered(result.events, 'TeardownCell')).toBe(1);
    expect(serversLeft()).toEqual([]);
  });

  it('a teardown that keeps failing is recorded and fails the run (the sweeper is the safety net)', async () => {
    const real = newBackend();
    const backend = withInjectedFailures(real, { teardownCell: { error: new Error('cannot delete') } });
    const result = await run(backend, oneStepSpec());
    expect(result.status).toBe('FAILED');
    expect(entered(result.events, 'TeardownFailed')).toBe(1);
    expect(result.cause).toMatch(/teardown-failed.*cannot delete/);
    await real.cleanupRun(result.runId!);
    expect(serversLeft()).toEqual([]);
  });

  it('an execution past its TimeoutSeconds ends TIMED_OUT; the run is torn down and recorded timed out', async () => {
    // Arrange: a step far longer than the execution may run, whatever the machine's speed.
    const backend = newBackend();
    const specFile = join(lakeDir, 'long.json');
    writeFileSync(
      specFile,
      JSON.stringify(
        tinySpec({
          variants: [{ name: 'one', instanceClass: 'db.t3.medium', readers: 1 }],
          workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1], durationS: 3600 }],
        }),
      ),
    );
    const lines: string[] = [];
    // Act
    const result = await runLocal({
      specFile,
      repoRoot: REPO,
      lakeDir,
      backend,
      serverVersion: 'test',
      executionTimeoutS: 4,
      pollMs: 100,
      log: (l) => lines.push(l),
    });
    // Assert: the status AWS gives it, what the safety net's rule matches (SWEEP_ON_STATUSES)...
    expect(result.status).toBe('TIMED_OUT');
    expect(SWEEP_ON_STATUSES).toContain(result.status);
    expect(result.error).toBe('States.Timeout');
    expect(result.cause).toContain('did not finish within 4 s');
    expect(result.events.map((e) => e.type)).toContain('ExecutionTimeout');
    // ...and the local counterpart of the sweeper left nothing behind, and the lake says why.
    expect(serversLeft()).toEqual([]);
    expect(readdirSync(runRoot)).toEqual([]);
    const manifest = JSON.parse(
      (await backend.lake.get(lakeKeys.run(result.plan.dt, result.plan.runId)))!.trim(),
    ) as RunRow;
    expect(manifest.status).toBe('timed-out');
    expect(manifest.error).toMatch(/did not finish within 4 s .*everything was torn down/);
  });

  it('a step the database refuses (too many connections) is recorded with why; the rest still runs', async () => {
    // Arrange: max_connections 10 and a step with 24 threads: MariaDB refuses the connections past it.
    const backend = newBackend();
    const spec = tinySpec({
      variants: [
        { name: 'one', instanceClass: 'db.t3.medium', readers: 1, instanceParameters: { max_connections: 10 } },
        { name: 'two', instanceClass: 'db.t3.medium', readers: 1, instanceParameters: { max_connections: 10 } },
      ],
      workloads: [
        { name: 'broken', test: 'oltp_read_only', threads: [24] },
        { name: 'fine', test: 'oltp_read_only', threads: [1] },
      ],
    });
    // Act
    const result = await run(backend, spec);
    // Assert
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('BenchmarkStepsFailed');
    expect(entered(result.events, 'TeardownCell')).toBe(2);
    for (const cell of ['one-r1', 'two-r1']) {
      const broken = await stepRows(backend, result, cell, 'broken-t24');
      expect(broken[0]!.status).toBe('failed');
      expect(broken[0]!.error).toMatch(/too many connections/i);
      const fine = await stepRows(backend, result, cell, 'fine-t1');
      expect(fine[0]!.status).toBe('ok');
    }
    expect(serversLeft()).toEqual([]);
  });
});
