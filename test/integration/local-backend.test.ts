/**
 * The local backend through the Backend port, end to end on a tiny cell: real mariadbd writer +
 * reader, client/runner.js running real sysbench, the sampler's CloudWatch-named rows, teardown,
 * and cleanup after the process that owned a run was killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { CellResources, JobHandle, RunContext, RunnerJob } from '../../core/backend';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { isAlive } from '../../core/backends/local/processes';
import { processesMentioning } from '../../core/backends/local/registry';
import { lakeKeys, SERVER_METRICS, type ServerMetricRow } from '../../core/lake/rows';
import type { CellPlan } from '../../core/plan/types';
import type { RunnerResult } from '../../core/sysbench/types';

const REPO = join(__dirname, '..', '..');
const DT = new Date().toISOString().slice(0, 10);

function runContext(runId: string): RunContext {
  return {
    runId,
    specName: 'local-backend-test',
    backend: 'local',
    region: 'us-east-1',
    engineVersion: '3.04.0',
    dt: DT,
    ttlHours: 1,
  };
}

const CELL: CellPlan = {
  cellId: 'tiny-r1',
  index: 0,
  repeat: 1,
  variant: {
    name: 'tiny',
    instanceClass: 'db.t3.medium',
    readers: 1,
    clusterParameters: { aurora_replica_read_consistency: 'SESSION', max_prepared_stmt_count: 100000 },
    instanceParameters: { thread_handling: 'pool-of-threads' },
    performanceInsights: false,
    clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
  },
  data: { tables: 1, tableSize: 200, reuse: 'cell', prepareThreads: 1 },
  steps: [],
};

function job(
  run: RunContext,
  resources: CellResources,
  phase: 'prepare' | 'run',
  stepId: string,
  sysbenchArgs: string[],
): RunnerJob {
  return {
    jobId: `${CELL.cellId}/${stepId}/${phase}/client-1`,
    phase,
    clientId: 'client-1',
    endpoint: resources.writer!,
    workload: 'oltp_read_write',
    sysbenchArgs,
    outputPrefix: lakeKeys.raw(run.dt, run.runId, CELL.cellId, stepId, phase, 'client-1'),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function waitDone(backend: LocalBackend, run: RunContext, handles: JobHandle[]) {
  return until('jobs to finish', async () => {
    const state = await backend.checkJobs(run, handles);
    return state.done ? state : undefined;
  });
}

async function result(backend: LocalBackend, handle: JobHandle): Promise<RunnerResult | undefined> {
  const text = await backend.lake.get(handle.outputPrefix + 'result.json');
  return text === undefined ? undefined : (JSON.parse(text) as RunnerResult);
}

let lakeDir: string;
let runRoot: string;
let backend: LocalBackend;

beforeAll(() => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-lb-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-lb-runs-'));
  backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
});

afterAll(async () => {
  await backend.cleanupAll({ includeLive: true });
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

describe('LocalBackend', () => {
  const run = runContext('lb-e2e');
  let resources: CellResources;

  it('provisions a writer and a reader with the parameters it can apply and notes for the rest', async () => {
    // Act
    resources = await backend.provisionCell(run, CELL);

    // Assert
    expect(resources.writer).toMatchObject({ instanceId: 'tiny-r1-w', role: 'writer', host: '127.0.0.1' });
    expect(resources.readers).toEqual([
      expect.objectContaining({ instanceId: 'tiny-r1-r1', role: 'reader', host: '127.0.0.1' }),
    ]);
    expect(resources.credentials).toEqual({ user: 'sbtest', secretRef: 'local:sbtest' });
    expect(resources.notes).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        path: 'variants[name=tiny].clusterParameters.aurora_replica_read_consistency',
        message: expect.stringMatching(/^not applicable locally/),
      }),
    );
    expect(Number(resources.backendState['provisionMs'])).toBeGreaterThan(0);
  });

  it('is ready once the reader replicates, and provisioning again returns the same cell', async () => {
    // Act
    const ready = await until('cell ready', async () => {
      const s = await backend.checkCellReady(run, CELL, resources);
      return s.ready ? s : undefined;
    });
    const again = await backend.provisionCell(run, CELL);

    // Assert
    expect(ready.detail).toMatch(/1 reader\(s\) replicating/);
    expect(again).toEqual(resources);
  });

  it('has one local client per configured client, ready at once', async () => {
    // Act
    resources = await backend.startClients(run, CELL, resources);
    const ready = await backend.checkClientsReady(run, CELL, resources);

    // Assert
    expect(resources.clients).toEqual([{ clientId: 'client-1' }]);
    expect(ready.ready).toBe(true);
  });

  it('prepares data and runs a 3 s step through client/runner.js, server metrics under CloudWatch names', async () => {
    // Arrange
    const prepare = job(run, resources, 'prepare', 'rw-t2', ['--tables=1', '--table-size=200', '--threads=1']);
    const step = job(run, resources, 'run', 'rw-t2', [
      '--tables=1',
      '--table-size=200',
      '--threads=2',
      '--time=3',
      '--report-interval=1',
    ]);

    // Act
    const prepared = await backend.startJobs(run, CELL, resources, [prepare]);
    const preparedState = await waitDone(backend, run, prepared);
    const ran = await backend.startJobs(run, CELL, resources, [step]);
    const ranState = await waitDone(backend, run, ran);
    const runResult = (await result(backend, ran[0]!))!;
    const collected = await backend.collectServerMetrics(run, CELL, resources, {
      stepId: 'rw-t2',
      start: runResult.startedAt,
      end: runResult.endedAt,
    });
    const again = await backend.collectServerMetrics(run, CELL, resources, {
      stepId: 'rw-t2',
      start: runResult.startedAt,
      end: runResult.endedAt,
    });
    const rows = collected.rows;

    // Assert
    expect(preparedState.jobs).toEqual([{ jobId: prepare.jobId, state: 'exited' }]);
    expect((await result(backend, prepared[0]!))?.exitCode).toBe(0);
    expect(ranState.jobs).toEqual([{ jobId: step.jobId, state: 'exited' }]);
    expect(runResult.exitCode).toBe(0);
    expect(await backend.lake.get(ran[0]!.outputPrefix + 'output.log')).toMatch(/transactions:/);

    const byMetric = (instance: string, metric: string) =>
      rows.filter((r) => r.instance_id === instance && r.metric === metric);
    const metrics = new Set(rows.map((r) => r.metric));
    for (const name of [
      'CPUUtilization',
      'SelectThroughput',
      'DMLThroughput',
      'CommitThroughput',
      'NetworkTransmitThroughput',
      'NetworkReceiveThroughput',
      'DatabaseConnections',
      'BufferCacheHitRatio',
      'Deadlocks',
      'AuroraReplicaLag',
    ]) {
      expect(metrics).toContain(name);
    }
    expect(
      rows.every(
        (r: ServerMetricRow) =>
          r.source === 'local' &&
          r.step_id === 'rw-t2' &&
          r.cell_id === 'tiny-r1' &&
          r.unit === SERVER_METRICS[r.metric as keyof typeof SERVER_METRICS],
      ),
    ).toBe(true);
    expect(Math.max(...byMetric('tiny-r1-w', 'SelectThroughput').map((r) => r.value))).toBeGreaterThan(0);
    expect(Math.max(...byMetric('tiny-r1-w', 'CommitThroughput').map((r) => r.value))).toBeGreaterThan(0);
    expect(Math.max(...byMetric('tiny-r1-w', 'DatabaseConnections').map((r) => r.value))).toBe(2);
    expect(Math.max(...byMetric('tiny-r1-w', 'CPUUtilization').map((r) => r.value))).toBeGreaterThan(0);
    expect(byMetric('tiny-r1-r1', 'AuroraReplicaLag').length).toBeGreaterThan(0);
    expect(byMetric('tiny-r1-w', 'AuroraReplicaLag')).toEqual([]);
    // The reader serves no client: its SELECT rate is the sampler's own polls, subtracted.
    expect(byMetric('tiny-r1-r1', 'SelectThroughput').every((r) => r.value === 0)).toBe(true);
    // Sampled live, nothing comes late: each instance's metric window is complete with what it has,
    // and asking again answers the same (the workflow may).
    const cpuWindow = collected.windows.find((w) => w.instanceId === 'tiny-r1-w' && w.metric === 'CPUUtilization');
    expect(cpuWindow).toMatchObject({
      source: 'local',
      received: byMetric('tiny-r1-w', 'CPUUtilization').length,
      expected: byMetric('tiny-r1-w', 'CPUUtilization').length,
    });
    expect(collected.windows.every((w) => w.received === w.expected && w.received > 0)).toBe(true);
    expect(backend.metricsPublishDelayS).toBe(0);
    expect(again).toEqual(collected);
  });

  it("runs a custom Lua workload the plan put in the lake, from the cell's scripts dir", async () => {
    // Arrange: PlanRun writes custom scripts to scripts/<runId>/<name>.
    await backend.lake.put(
      lakeKeys.script(run.runId, 'select_one.lua'),
      [
        'function thread_init() drv = sysbench.sql.driver(); con = drv:connect() end',
        'function event() con:query("SELECT 1") end',
        'function thread_done() con:disconnect() end',
      ].join('\n') + '\n',
    );
    const custom: RunnerJob = {
      ...job(run, resources, 'run', 'custom-t1', ['--threads=1', '--time=1']),
      workload: 'select_one.lua',
    };

    // Act
    const handles = await backend.startJobs(run, CELL, resources, [custom]);
    const state = await waitDone(backend, run, handles);
    await backend.collectServerMetrics(run, CELL, resources, {
      stepId: 'custom-t1',
      start: handles[0]!.startedAt,
      end: new Date().toISOString(),
    });

    // Assert
    expect(state.jobs).toEqual([{ jobId: custom.jobId, state: 'exited' }]);
    expect((await result(backend, handles[0]!))?.exitCode).toBe(0);
    expect(await backend.lake.get(handles[0]!.outputPrefix + 'output.log')).toMatch(/transactions:/);
    expect(existsSync(join(resources.backendState['cellDir']!, 'scripts', 'select_one.lua'))).toBe(true);
  });

  it('stops a running job; the runner still leaves result.json', async () => {
    // Arrange
    const long = job(run, resources, 'run', 'long-t1', [
      '--tables=1',
      '--table-size=200',
      '--threads=1',
      '--time=120',
      '--report-interval=1',
    ]);
    const handles = await backend.startJobs(run, CELL, resources, [long]);
    // Running means sysbench itself is running (the runner has set up its signal handling by then).
    await until(
      'sysbench running',
      async () =>
        ((await backend.lake.get(handles[0]!.outputPrefix + 'output.log')) ?? '').includes('Threads started') ||
        undefined,
    );

    // Act
    await backend.stopJobs(run, handles);
    const state = await backend.checkJobs(run, handles);
    await backend.stopJobs(run, handles); // idempotent

    // Assert
    expect(state).toMatchObject({ done: true, running: 0 });
    expect(await result(backend, handles[0]!)).toMatchObject({ phase: 'run', exitCode: 143 });
    expect(isAlive(Number(handles[0]!.ref))).toBe(false);
  });

  it('tears the cell down completely, and a second teardown finds it already gone', async () => {
    // Arrange
    const pids = resources.backendState['pids']!.split(',').map((p) => Number(p.split(':')[1]));
    const cellDir = resources.backendState['cellDir']!;

    // Act
    const first = await backend.teardownCell(run, CELL, resources);
    const second = await backend.teardownCell(run, CELL, resources);

    // Assert
    expect(first.deleted).toEqual(expect.arrayContaining(['mariadbd tiny-r1-w', 'mariadbd tiny-r1-r1']));
    expect(second).toEqual({ deleted: [], alreadyGone: ['cell tiny-r1'] });
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(cellDir)).toBe(false);
    expect(readdirSync(runRoot)).toEqual([]);
  });
});

describe('cleanup after the owning process crashed', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child?.pid && isAlive(child.pid)) child.kill('SIGKILL');
  });

  /** Provisions a cell and starts a 2-minute job in a separate node process, which is then SIGKILLed. */
  async function crashAfterProvisioning(runId: string): Promise<{ resources: CellResources; handles: JobHandle[] }> {
    const dir = mkdtempSync(join(tmpdir(), 'ab-lb-crash-'));
    try {
      const entry = join(dir, 'owner.ts');
      writeFileSync(
        entry,
        `import { LocalBackend } from ${JSON.stringify(join(REPO, 'core/backends/local/local-backend'))};
         const [lakeDir, runRoot, runId, cellJson, repoRoot, dt] = process.argv.slice(2);
         const cell = JSON.parse(cellJson);
         const run = {
           runId, specName: 'crash', backend: 'local', region: 'us-east-1', engineVersion: '3', dt, ttlHours: 1,
         };
         (async () => {
           const backend = new LocalBackend({ lakeDir, runRoot, repoRoot });
           const resources = await backend.provisionCell(run, cell);
           const job = (phase, args) => ({
             jobId: cell.cellId + '/long/' + phase + '/client-1', phase, clientId: 'client-1',
             endpoint: resources.writer,
             workload: 'oltp_point_select', sysbenchArgs: ['--tables=1', '--table-size=10', '--threads=1', ...args],
             outputPrefix: 'raw/crash/' + runId + '/' + phase + '/',
           });
           const prepared = await backend.startJobs(run, cell, resources, [job('prepare', [])]);
           while (!(await backend.checkJobs(run, prepared)).done) await new Promise((r) => setTimeout(r, 100));
           const handles = await backend.startJobs(run, cell, resources, [job('run', ['--time=120'])]);
           process.stdout.write(JSON.stringify({ resources, handles }) + '\\n');
           setInterval(() => undefined, 1000);
         })().catch((e) => { console.error(e); process.exit(1); });`,
      );
      // DuckDB (the lake's compaction) is a native module: left out of the bundle, found in the repo's node_modules.
      buildSync({
        entryPoints: [entry],
        bundle: true,
        platform: 'node',
        outfile: join(dir, 'owner.js'),
        logLevel: 'silent',
        external: ['@duckdb/*'],
      });
      child = spawn(
        process.execPath,
        [join(dir, 'owner.js'), lakeDir, runRoot, runId, JSON.stringify(CELL), REPO, DT],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NODE_PATH: join(REPO, 'node_modules') },
        },
      );
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const line = await until('the owner to provision', () => {
        if (child!.exitCode !== null) return Promise.reject(new Error(`owner exited early: ${err}`));
        return Promise.resolve(out.includes('\n') ? out.split('\n')[0] : undefined);
      });
      child.kill('SIGKILL');
      await until('the owner to die', () =>
        Promise.resolve(child!.exitCode !== null || child!.signalCode !== null ? true : undefined),
      );
      return JSON.parse(line) as { resources: CellResources; handles: JobHandle[] };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('cleanupRun removes the servers, the runner and every directory the dead owner left', async () => {
    // Arrange
    const { resources, handles } = await crashAfterProvisioning('lb-crash-1');
    const runDir = resources.backendState['runDir']!;
    const pids = resources.backendState['pids']!.split(',').map((p) => Number(p.split(':')[1]));
    const left = [...pids, Number(handles[0]!.ref)].filter(isAlive);

    // Act
    const fresh = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
    await fresh.cleanupRun('lb-crash-1');
    await fresh.cleanupRun('lb-crash-1'); // nothing left: no error

    // Assert
    expect(left.length).toBe(3); // writer, reader and runner outlived their owner
    expect([...pids, Number(handles[0]!.ref)].filter(isAlive)).toEqual([]);
    expect(processesMentioning(runDir + '/')).toEqual([]);
    expect(existsSync(runDir)).toBe(false);
  });

  it('the sweeper cleans runs of dead owners and leaves runs of live ones alone', async () => {
    // Arrange: one crashed run, one live run of this process.
    const crashed = await crashAfterProvisioning('lb-crash-2');
    const liveRun = runContext('lb-live');
    const live = await backend.provisionCell(liveRun, CELL);

    // Act
    const removed = await new LocalBackend({ lakeDir, runRoot, repoRoot: REPO }).cleanupAll();

    // Assert
    try {
      expect(removed.some((r) => r.startsWith('lb-crash-2'))).toBe(true);
      expect(existsSync(crashed.resources.backendState['runDir']!)).toBe(false);
      expect(existsSync(live.backendState['runDir']!)).toBe(true);
      expect((await backend.checkCellReady(liveRun, CELL, live)).resources.cellId).toBe('tiny-r1');
    } finally {
      await backend.cleanupRun('lb-live');
    }
    expect(existsSync(live.backendState['runDir']!)).toBe(false);
  });
});
