/**
 * A Backend that does everything in this process and at once, for bench/workflow-scale.ts: it
 * measures the workflow (how many states, history events and bytes of state a run of N steps
 * costs), not the database, so no server or sysbench runs. What it does instead, deterministically:
 * - provisioning and clients are ready at the first check;
 * - a started job writes a small but complete runner output (output.log in sysbench's format with
 *   the report hook's interval lines, result.json, client_cpu.jsonl) into an in-memory lake (a run
 *   that prepares first, the prepare's files too), and is reported running at its first check and
 *   exited at the second: every job costs one poll beyond the first look, the same for every
 *   workflow design measured;
 * - server metrics come back empty and complete (nothing is re-collected late).
 * Everything the Tasks write (run row, step rows, intervals) goes to the in-memory lake as usual.
 */
import type {
  Backend,
  CellResources,
  JobHandle,
  JobsState,
  LakeStore,
  ReadyState,
  RunContext,
  RunnerJob,
  ServerMetricsCollection,
  TeardownReport,
  VerdictPublication,
} from '../core/backend';
import type { CellPlan } from '../core/plan/types';
import type { RunnerResult } from '../core/sysbench/types';

export class MemoryLakeStore implements LakeStore {
  readonly objects = new Map<string, string>();

  put(key: string, body: string | Uint8Array): Promise<void> {
    this.objects.set(key, typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    return Promise.resolve();
  }
  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.objects.get(key));
  }
  list(prefix: string): Promise<string[]> {
    return Promise.resolve([...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort());
  }
  describe(): string {
    return 'memory://bench';
  }
}

/** sysbench 1.0.20's run output with the report hook's JSON interval lines: what the parser reads. */
function runnerOutput(seconds: number): string {
  const intervals = Array.from(
    { length: seconds },
    (_, i) =>
      `{"aurora_bench":1,"t":${i + 1},"interval_s":1.000,"threads":1,"events":100,"tps":100.000,"qps":2000.000,` +
      `"reads_ps":1400.000,"writes_ps":400.000,"other_ps":200.000,"pct":95,"lat_ms":12.000,"errors_ps":0.000,` +
      `"reconnects_ps":0.000}`,
  );
  return [
    'sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)',
    '',
    'Running the test with following options:',
    'Number of threads: 1',
    'Report intermediate results every 1 second(s)',
    '',
    'Threads started!',
    '',
    ...intervals,
    'SQL statistics:',
    '    queries performed:',
    `        read:                            ${1400 * seconds}`,
    `        write:                           ${400 * seconds}`,
    `        other:                           ${200 * seconds}`,
    `        total:                           ${2000 * seconds}`,
    `    transactions:                        ${100 * seconds}   (100.00 per sec.)`,
    `    queries:                             ${2000 * seconds}  (2000.00 per sec.)`,
    '    ignored errors:                      0      (0.00 per sec.)',
    '    reconnects:                          0      (0.00 per sec.)',
    '',
    'General statistics:',
    `    total time:                          ${seconds}.0001s`,
    `    total number of events:              ${100 * seconds}`,
    '',
    'Latency (ms):',
    '         min:                                    1.00',
    '         avg:                                   10.00',
    '         max:                                   30.00',
    '         95th percentile:                       12.00',
    `         sum:                                 ${1000 * seconds}.00`,
    '',
    'Threads fairness:',
    `    events (avg/stddev):           ${100 * seconds}.0000/0.00`,
    `    execution time (avg/stddev):   ${seconds}.0000/0.00`,
    '',
  ].join('\n');
}

export class InProcessBenchBackend implements Backend {
  readonly kind = 'local' as const;
  readonly lake = new MemoryLakeStore();
  readonly metricsPublishDelayS = 0;
  /** As the local backend it stands in for (its jobs are simulated, whatever their workload). */
  readonly writeForwarding = 'emulated' as const;
  /** How many times each job set (keyed by its first job id) was checked. */
  private readonly checks = new Map<string, number>();

  provisionCell(_run: RunContext, cell: CellPlan): Promise<CellResources> {
    return Promise.resolve({
      cellId: cell.cellId,
      clusterId: `bench-${cell.cellId}`,
      readers: [],
      clients: Array.from({ length: cell.variant.clients.count }, (_, i) => ({ clientId: `client-${i + 1}` })),
      credentials: { user: 'sbtest', secretRef: 'bench' },
      notes: [],
      backendState: {},
    });
  }
  checkCellReady(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return Promise.resolve({
      ready: true,
      resources: {
        ...resources,
        writer: { instanceId: `${resources.clusterId}-w`, role: 'writer', host: '127.0.0.1', port: 1 },
      },
      detail: '',
    });
  }
  startClients(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<CellResources> {
    return Promise.resolve(resources);
  }
  checkClientsReady(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return Promise.resolve({ ready: true, resources, detail: '' });
  }
  async startJobs(
    _run: RunContext,
    _cell: CellPlan,
    _resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    const now = new Date().toISOString();
    const write = async (outputPrefix: string, phase: RunnerJob['phase']) => {
      const result: RunnerResult = {
        phase,
        exitCode: 0,
        startedAt: now,
        endedAt: now,
        sysbenchVersion: '1.0.20',
        hostname: 'bench',
        command: 'sysbench',
      };
      await Promise.all([
        this.lake.put(outputPrefix + 'output.log', runnerOutput(phase === 'run' ? 2 : 0)),
        this.lake.put(outputPrefix + 'result.json', JSON.stringify(result)),
        this.lake.put(outputPrefix + 'client_cpu.jsonl', ''),
      ]);
    };
    for (const job of jobs) {
      // A run that prepares first (data.reuse "step") also leaves the prepare's files, as the runner does.
      if (job.prepareFirst) await write(job.prepareFirst.outputPrefix, 'prepare');
      await write(job.outputPrefix, job.phase);
    }
    return jobs.map((j) => ({
      jobId: j.jobId,
      clientId: j.clientId,
      phase: j.phase,
      outputPrefix: j.outputPrefix,
      ref: j.jobId,
      startedAt: now,
    }));
  }
  checkJobs(_run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const key = handles[0]?.jobId ?? '';
    const seen = (this.checks.get(key) ?? 0) + 1;
    this.checks.set(key, seen);
    const done = seen >= 2;
    return Promise.resolve({
      done,
      running: done ? 0 : handles.length,
      jobs: handles.map((h) => ({ jobId: h.jobId, state: done ? ('exited' as const) : ('running' as const) })),
    });
  }
  stopJobs(_run: RunContext, _handles: readonly JobHandle[]): Promise<void> {
    return Promise.resolve();
  }
  collectServerMetrics(): Promise<ServerMetricsCollection> {
    return Promise.resolve({ rows: [], windows: [] });
  }
  teardownCell(_run: RunContext, _cell: CellPlan): Promise<TeardownReport> {
    return Promise.resolve({ deleted: [], alreadyGone: [] });
  }
  publishVerdicts(): Promise<VerdictPublication> {
    return Promise.resolve({ channel: 'none', metricDatapoints: 0, eventId: null, notificationId: null });
  }
}
