/**
 * The Backend port on one machine. A cell is MariaDB or PostgreSQL servers with replication on 127.0.0.1.
 * State lives in memory and in the run registry on disk.
 * Teardown, cleanupRun and the sweeper use the registry, so they still work after a crash or from a second process.
 */
import type {
  Backend,
  CellResources,
  ClientRef,
  JobHandle,
  JobsState,
  MetricsWindow,
  ReadyState,
  ReplicaHealth,
  RunContext,
  RunnerJob,
  ServerMetricsCollection,
  TeardownReport,
  VerdictPublication,
} from '../../backend';
import type { CellPlan } from '../../plan/types';
import { HostRuns, type HostRunOverlap } from './host-runs';
import { currentHost, type HostResources } from './instance-classes';
import { LocalLakeStore } from './local-lake';
import { CellStates } from './parts/cell-states';
import { teardownLocalCell } from './parts/cell-teardown';
import type { LocalPartContext } from './parts/context';
import { checkLocalCellReady, localReplicationHealth, provisionLocalCell } from './parts/databases';
import { assertRunnerBuilt, LocalRunnerJobs, runnerPathOf } from './parts/runner-jobs';
import { collectLocalServerMetrics } from './parts/server-metrics';
import { untrackEnded } from './parts/started-here';
import { checkLocalDependencies, type LocalVersions } from './preflight';
import { claimRunDir, cleanupAllRuns, cleanupRunDir, defaultRunRoot, RunRegistry } from './registry';

export interface LocalBackendOptions {
  /** The results lake directory, created as needed. */
  readonly lakeDir: string;
  /** Where run directories go. By default, <tmpdir>/aurora-bench-runs. */
  readonly runRoot?: string;
  /** The checkout, to find client/runner.js. */
  readonly repoRoot: string;
  /** Pin each server to min(vCPU, host CPUs) CPUs with taskset. On by default. */
  readonly cpuAffinity?: boolean;
  /** Template cache root. By default, ~/.cache/aurora-bench/templates. */
  readonly templateRoot?: string;
  /** Host CPUs and memory for the instance class mapping. By default, this machine's. */
  readonly host?: HostResources;
  /** Metrics sampling period. By default, 1000 ms. */
  readonly sampleIntervalMs?: number;
  /** The host-wide directory where runs note their time, to find runs that overlapped. */
  readonly hostRunsDir?: string;
}

export class LocalBackend implements Backend {
  readonly kind = 'local' as const;
  readonly lake: LocalLakeStore;
  /** The sampler's values are there as soon as it is stopped, so nothing is published late. */
  readonly metricsPublishDelayS = 0;
  /** Writes sent to a reader run as a client-side emulation. */
  readonly writeForwarding = 'emulated' as const;
  readonly runRoot: string;
  private readonly parts: LocalPartContext;
  private readonly jobs: LocalRunnerJobs;
  private readonly hostRuns: HostRuns;

  constructor(options: LocalBackendOptions) {
    this.lake = new LocalLakeStore(options.lakeDir);
    const runRoot = options.runRoot ?? defaultRunRoot();
    this.runRoot = runRoot;
    this.parts = {
      lake: this.lake,
      runRoot,
      repoRoot: options.repoRoot,
      cpuAffinity: options.cpuAffinity ?? true,
      templateRoot: options.templateRoot,
      host: options.host ?? currentHost(),
      sampleIntervalMs: options.sampleIntervalMs ?? 1000,
      cells: new CellStates(),
      registry: (runId) => new RunRegistry(runRoot, runId),
    };
    this.jobs = new LocalRunnerJobs(this.parts);
    this.hostRuns = new HostRuns(options.hostRunsDir);
  }

  /** The client runner bundle, run with this process's node. */
  get runnerPath(): string {
    return runnerPathOf(this.parts.repoRoot);
  }

  /** Versions and tools. Throws MissingDependencyError with install instructions. */
  versions(): Promise<LocalVersions> {
    return checkLocalDependencies();
  }

  provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    return provisionLocalCell(this.parts, run, cell);
  }

  checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return checkLocalCellReady(this.parts, run, cell, resources);
  }

  replicationHealth(run: RunContext, cell: CellPlan): Promise<readonly ReplicaHealth[]> {
    return localReplicationHealth(this.parts, run, cell);
  }

  /** Local clients are process slots on this machine. The runner starts per job. */
  startClients(_run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    const clients: ClientRef[] = Array.from({ length: cell.variant.clients.count }, (_, i) => ({
      clientId: `client-${i + 1}`,
    }));
    return Promise.resolve({ ...resources, clients });
  }

  async checkClientsReady(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    assertRunnerBuilt(this.runnerPath);
    const versions = await checkLocalDependencies();
    return {
      ready: true,
      resources,
      detail:
        `${resources.clients.length} local client process slot(s); runner ${this.runnerPath}, ` +
        `sysbench ${versions.sysbenchVersion}`,
    };
  }

  startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    return this.jobs.startJobs(run, cell, resources, jobs);
  }

  checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    return this.jobs.checkJobs(run, handles);
  }

  stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    return this.jobs.stopJobs(run, handles);
  }

  collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    _resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection> {
    return collectLocalServerMetrics(this.parts, run, cell, window);
  }

  /** No notification channel locally. The verdicts are in the lake, and `run` prints them. */
  publishVerdicts(): Promise<VerdictPublication> {
    return Promise.resolve({ channel: 'none', metricDatapoints: 0, eventId: null, notificationId: null });
  }

  teardownCell(run: RunContext, cell: CellPlan, _resources: CellResources | undefined): Promise<TeardownReport> {
    return teardownLocalCell(this.parts, run, cell);
  }

  /** Everything of one run, whatever state it is in, so no process, port or directory is left. */
  async cleanupRun(runId: string): Promise<void> {
    await this.cleanupRunReport(runId);
  }

  /** cleanupRun, saying what it removed. */
  async cleanupRunReport(runId: string): Promise<string[]> {
    for (const state of this.parts.cells.ofRun(runId)) {
      await state.sampler?.stop();
      this.parts.cells.delete(runId, state.cellId);
    }
    const removed = await cleanupRunDir(this.runRoot, runId);
    untrackEnded();
    return removed;
  }

  /**
   * Claims `runId` in the run root before the run starts. An id that exists or is live is refused.
   * It records where the run row will be, so `cleanup` can settle a run this process never ends.
   */
  async claimRun(runId: string, runKey: string, endReason?: string): Promise<void> {
    // A run that starts learns now that its lake is read-only, before anything exists.
    if (endReason === undefined) await this.lake.assertWritable();
    await claimRunDir(this.runRoot, runId, {
      lakeRoot: this.lake.root,
      runKey,
      ...(endReason !== undefined ? { endReason } : {}),
    });
    if (endReason === undefined) this.hostRuns.register(runId);
  }

  /** The run is over on this host. Returns the other runs whose time overlapped its own, since they shared its load. */
  endHostRun(runId: string): HostRunOverlap[] {
    return this.hostRuns.end(runId);
  }

  /** The sweeper for this backend's run root: runs whose owner process is gone. */
  async cleanupAll(options: { includeLive?: boolean } = {}): Promise<string[]> {
    return (await cleanupAllRuns(this.runRoot, options)).removed;
  }
}
