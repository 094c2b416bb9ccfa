/**
 * The Backend port on one machine: a cell is a writer mariadbd plus N reader mariadbds with GTID
 * replication on 127.0.0.1 (cluster.ts), its clients are client/runner.js processes, server
 * metrics come from the local sampler (metrics.ts) and the lake is a directory (local-lake.ts).
 *
 * State lives in memory (child processes, samplers) and in the run registry on disk
 * (registry.ts), which is what teardown, cleanupRun and the sweeper (cleanupAllLocalRuns) use, so
 * they also work after this process lost its memory (crash, second process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  MissingDependencyError,
  type Backend,
  type MetricWindowCount,
  type ServerMetricsCollection,
  type CellResources,
  type ClientRef,
  type Endpoint,
  type JobHandle,
  type JobsState,
  type MetricsWindow,
  type ReadyState,
  type ReplicaHealth,
  type RunContext,
  type RunnerJob,
  type TeardownReport,
  type VerdictPublication,
} from '../../backend';
import { AuroraBenchError } from '../../errors';
import { lakeKeys, LOCAL_UNMEASURED_METRICS } from '../../lake/rows';
import type { CellPlan, PlanNote } from '../../plan/types';
import { prepareRunnerArgv } from '../../sysbench/command';
import { formatRunnerArgv } from '../../sysbench/runner-argv';
import { replicaHealth, replicationStatus, startCluster, waitForReplicas, type ClusterInfo } from './cluster';

/** How long an emulated write-forwarding step waits for the replicas to apply the writer's backlog before it starts. */
const REPLICA_CATCH_UP_S = 300;

/** The client-side emulation of write forwarding (client/workloads/wf_emulation.lua), this backend's own script. */
const WF_EMULATION_SCRIPT = 'wf_emulation.lua';

/**
 * A job as this backend runs it: with the emulation, a second connection to the writer (client/runner.js --extra-port).
 */
type LocalRunnerJob = RunnerJob & { readonly extraPort?: number };

/**
 * MariaDB replicas cannot forward writes: a job whose writes go to a reader of a write-forwarding
 * variant (RunnerJob.writeForwarding) runs as the client-side emulation instead, reads on the
 * reader and writes on a second connection to the writer, the consistency level's GTID waits
 * (client/workloads/wf_emulation.lua); the step's own consistency option, if it sets one, stays.
 * @internal exported for its tests (a test seam)
 */
export function emulatingForwarding(job: RunnerJob, resources: CellResources): LocalRunnerJob {
  if (job.writeForwarding === undefined || job.phase !== 'run') return job;
  if (!resources.writer) throw new Error(`cell ${resources.cellId} has no writer endpoint yet`);
  const base =
    job.workload === 'oltp_write_only'
      ? 'oltp_write_only'
      : job.workload === 'rw_consistency.lua'
        ? 'rw_consistency'
        : 'oltp_read_write';
  const ownLevel = job.sysbenchArgs.some((a) => a.startsWith('--consistency='));
  return {
    ...job,
    workload: WF_EMULATION_SCRIPT,
    sysbenchArgs: [
      ...job.sysbenchArgs,
      `--wf_base=${base}`,
      `--wf_writer_port=${resources.writer.port}`,
      ...(ownLevel ? [] : [`--consistency=${job.writeForwarding.consistency}`]),
    ],
    extraPort: resources.writer.port,
  };
}
import {
  cpuListFor,
  currentHost,
  formatBytes,
  LOCAL_MEMORY_DIVISOR,
  localShape,
  type HostResources,
  type LocalInstanceShape,
} from './instance-classes';
import { HostRuns, type HostRunOverlap } from './host-runs';
import { LocalLakeStore } from './local-lake';
import { isServerRunning, type ServerInfo } from './mariadb-server';
import { ServerMetricsSampler, toServerMetricRows, type MetricSample } from './metrics';
import { ENGINES, engineName } from '../../aurora/engines';
import {
  planPostgresParameters,
  PostgresMetricsSampler,
  postgresReplicationStatus,
  startPostgresCluster,
  verifyPostgresParameters,
  type PostgresCluster,
} from './postgres-cluster';
import { ensurePostgresTemplate, findPostgresTools, isPostgresRunning, type PostgresServer } from './postgres-server';
import { applyDynamicParameters, dedupeNotes, planParameters, verifyParameters } from './parameters';
import { checkLocalDependencies, type LocalVersions } from './preflight';
import { isAlive, isOurProcess, isStopped, terminate } from './processes';
import {
  claimRunDir,
  cleanupAllRuns,
  cleanupRunDir,
  defaultRunRoot,
  destroyCell,
  RunRegistry,
  type CellRecord,
  type JobRecord,
} from './registry';
import { ensureTemplate, LOCAL_LOGINS } from './template';

export interface LocalBackendOptions {
  /** The results lake directory (created as needed). */
  readonly lakeDir: string;
  /** Where run directories (registry, datadirs, sockets) go; default <tmpdir>/aurora-bench-runs. */
  readonly runRoot?: string;
  /** The checkout, to find client/runner.js. */
  readonly repoRoot: string;
  /** Pin each server to min(vCPU, host CPUs) CPUs with taskset (default true). */
  readonly cpuAffinity?: boolean;
  /** Template cache root (default ~/.cache/aurora-bench/templates). */
  readonly templateRoot?: string;
  /** Host CPUs/memory used for the instance class mapping (default: this machine). */
  readonly host?: HostResources;
  /** Metrics sampling period (default 1000 ms). */
  readonly sampleIntervalMs?: number;
  /** The host-wide directory where runs note their time, to find runs that overlapped (default HOST_RUNS_DIR). */
  readonly hostRunsDir?: string;
}

/** Environment variable the runner reads the database password from (--password-env). */
const PASSWORD_ENV = 'AURORA_BENCH_DB_PASSWORD';

/** Replication broke (an IO or SQL thread stopped with an error): the cell cannot become ready. */
class LocalReplicationError extends AuroraBenchError {
  override readonly name = 'LocalReplicationError';
}

interface JobProcess {
  readonly handle: JobHandle;
  readonly child: ChildProcess;
  readonly stderrFile: string;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

interface CellState {
  readonly runId: string;
  readonly cellId: string;
  readonly dir: string;
  /** The MariaDB servers of a MySQL-family engine's cell. */
  readonly cluster?: ClusterInfo;
  /** The PostgreSQL servers of a PostgreSQL engine's cell. */
  readonly pg?: PostgresCluster;
  readonly resources: CellResources;
  readonly jobs: Map<string, JobProcess>;
  sampler?: { stop(): Promise<readonly MetricSample[]>; readonly unresponsive?: ReadonlyMap<string, string> };
  /** When each of the cell's servers was first seen stopped (SIGSTOP), by instance id. */
  readonly stoppedSince: Map<string, number>;
  /** What collectServerMetrics returned per step: asked again, it answers the same. */
  readonly collected: Map<string, ServerMetricsCollection>;
}

/** Pids this process started, killed synchronously if it exits without tearing down. */
const startedHere = new Map<number, { group: boolean; dir?: string }>();
let exitHookInstalled = false;
function track(pid: number, entry: { group: boolean; dir?: string }): void {
  startedHere.set(pid, entry);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [pid, e] of startedHere) {
        try {
          process.kill(e.group ? -pid : pid, 'SIGKILL');
        } catch {
          // already gone
        }
        if (e.dir) rmSync(e.dir, { recursive: true, force: true });
      }
    });
  }
}

function endpointOf(s: ServerInfo): Endpoint {
  return { instanceId: s.instanceId, role: s.role, host: s.host, port: s.port };
}

function shapeNote(
  variantName: string,
  shape: LocalInstanceShape,
  cpuLists: readonly (string | undefined)[],
  serverVersion: string,
): PlanNote {
  const pinned = cpuLists.some((c) => c !== undefined)
    ? `taskset CPUs ${cpuLists.map((c) => c ?? 'all').join(' | ')}`
    : 'no CPU pinning';
  return {
    level: 'info',
    path: `variants[name=${variantName}].instanceClass`,
    message:
      `${shape.instanceClass} (${shape.vcpu} vCPU, ${shape.memoryGiB} GiB) runs locally as ` +
      `MariaDB ${serverVersion} with ${shape.cores} CPU(s) (${pinned}), ` +
      `memory ` +
      formatBytes(shape.localMemoryBytes) +
      ` (class memory / ${LOCAL_MEMORY_DIVISOR}), innodb_buffer_pool_size ` +
      formatBytes(shape.bufferPoolBytes) +
      ` ` +
      `unless set, max_connections ${shape.maxConnections} (Aurora's default for the class) unless set`,
  };
}

function tail(file: string, lines = 10): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** A PostgreSQL server in the registry's server shape (destroyCell stops it by its engine). */
function postgresServerRecord(s: PostgresServer): ServerInfo {
  return {
    instanceId: s.instanceId,
    role: s.role,
    serverId: 0,
    host: s.host,
    port: s.port,
    pid: s.pid,
    dir: s.dir,
    datadir: s.datadir,
    socket: s.socketDir,
    // The datadir is on the postmaster's command line: what tells our process from a reused pid.
    defaultsFile: s.datadir,
    clientDefaultsFile: '',
    errorLog: s.log,
    ...(s.cpuList !== undefined ? { cpuList: s.cpuList } : {}),
    client: join(s.bindir, 'psql'),
    engine: 'postgresql',
  };
}

/** How long a server must stay stopped before its step is failed: a debugger's short pause is not a hang. */
const STOPPED_FOR_MS = 5_000;

/** The cell's servers that answer nothing: stopped for STOPPED_FOR_MS, or past the sampler's statement deadline. */
function hungServers(state: CellState): string[] {
  const servers: { instanceId: string; role: string; pid: number; port: number }[] = state.pg
    ? [state.pg.writer, ...state.pg.readers]
    : state.cluster
      ? [state.cluster.writer, ...state.cluster.readers]
      : [];
  const hung: string[] = [];
  for (const s of servers) {
    const name = `the ${s.role} ${s.instanceId} (pid ${s.pid}, port ${s.port})`;
    if (isStopped(s.pid)) {
      const since = state.stoppedSince.get(s.instanceId) ?? Date.now();
      state.stoppedSince.set(s.instanceId, since);
      if (Date.now() - since >= STOPPED_FOR_MS)
        hung.push(`${name} is stopped (process state T, SIGSTOP) and answers nothing`);
      continue;
    }
    state.stoppedSince.delete(s.instanceId);
    const why = state.sampler?.unresponsive?.get(s.instanceId);
    if (why !== undefined) hung.push(`${name} stopped answering: ${why}`);
    const full = 'errorLog' in s && typeof s.errorLog === 'string' ? diskFullIn(s.errorLog) : undefined;
    if (full !== undefined) hung.push(`${name} has no room on its disk (its error log: ${full})`);
  }
  return hung;
}

/**
 * MariaDB's "Disk is full writing '<file>' (Errcode: 28 ...). Waiting for someone to free space..."
 * in a server's error log (EE_DISK_FULL, MariaDB mysys/errors.c; my_write with MY_WAIT_IF_FULL): the
 * server then waits for space instead of failing the statement, so the step would hang until its deadline.
 */
function diskFullIn(errorLog: string): string | undefined {
  const text = tail(errorLog, 20);
  const line = /Disk is full writing '[^']*'(?: \(Errcode: [^)]*\))?/.exec(text);
  return line?.[0];
}

function cellServersRunning(state: CellState): boolean {
  if (state.pg) return [state.pg.writer, ...state.pg.readers].every(isPostgresRunning);
  return state.cluster !== undefined && [state.cluster.writer, ...state.cluster.readers].every(isServerRunning);
}

/**
 * The server metrics AWS reports that the local sampler cannot,
 * and why: said once per run rather than shown as missing.
 */
function unmeasuredMetricsNote(): PlanNote {
  const byReason = new Map<string, string[]>();
  for (const [metric, why] of Object.entries(LOCAL_UNMEASURED_METRICS))
    byReason.set(why, [...(byReason.get(why) ?? []), metric]);
  return {
    level: 'info',
    path: 'serverMetrics',
    message:
      `not measured locally: ` + [...byReason].map(([why, metrics]) => `${metrics.join(', ')} (${why})`).join('; '),
  };
}

export class LocalBackend implements Backend {
  readonly kind = 'local' as const;
  readonly lake: LocalLakeStore;
  /** The sampler's values are there as soon as it is stopped: nothing is published late. */
  readonly metricsPublishDelayS = 0;
  /** Writes sent to a reader run as a client-side emulation (emulatingForwarding). */
  readonly writeForwarding = 'emulated' as const;
  readonly runRoot: string;
  private readonly repoRoot: string;
  private readonly cpuAffinity: boolean;
  private readonly templateRoot: string | undefined;
  private readonly host: HostResources;
  private readonly sampleIntervalMs: number;
  private readonly cells = new Map<string, CellState>();
  private readonly hostRuns: HostRuns;

  constructor(options: LocalBackendOptions) {
    this.lake = new LocalLakeStore(options.lakeDir);
    this.runRoot = options.runRoot ?? defaultRunRoot();
    this.repoRoot = options.repoRoot;
    this.cpuAffinity = options.cpuAffinity ?? true;
    this.templateRoot = options.templateRoot;
    this.host = options.host ?? currentHost();
    this.sampleIntervalMs = options.sampleIntervalMs ?? 1000;
    this.hostRuns = new HostRuns(options.hostRunsDir);
  }

  private key(runId: string, cellId: string): string {
    return `${runId}\u0000${cellId}`;
  }

  private registry(runId: string): RunRegistry {
    return new RunRegistry(this.runRoot, runId);
  }

  private cellState(run: RunContext, cellId: string): CellState {
    const state = this.cells.get(this.key(run.runId, cellId));
    if (!state)
      throw new Error(
        `cell ${cellId} of run ${run.runId} is not provisioned by this local backend (provisionCell first)`,
      );
    return state;
  }

  /** The client runner bundle (scripts/build-runner.ts), run with this process's node. */
  get runnerPath(): string {
    return join(this.repoRoot, 'client', 'runner.js');
  }

  /** Versions and tools (throws MissingDependencyError with install instructions). */
  versions(): Promise<LocalVersions> {
    return checkLocalDependencies();
  }

  async provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    const key = this.key(run.runId, cell.cellId);
    const existing = this.cells.get(key);
    if (existing && cellServersRunning(existing)) return existing.resources;
    if (existing) await this.teardownCell(run, cell, existing.resources);
    if (ENGINES[cell.variant.engine?.kind ?? 'aurora-mysql'].localServer === 'postgresql')
      return this.provisionPostgresCell(run, cell);

    const started = performance.now();
    // UnsupportedOnBackendError for unknown classes
    const shape = localShape(cell.variant.instanceClass, this.host, cell.variant.serverless?.maxAcu);
    const versions = await checkLocalDependencies();
    const template = await ensureTemplate(versions.tools, versions.serverVersion, this.templateRoot);
    const registry = this.registry(run.runId);

    // A previous attempt this process no longer knows about (e.g. a retried task after a crash): start clean.
    const previous = (await registry.read())?.cells[cell.cellId];
    if (previous) {
      await destroyCell(previous);
      await registry.removeCell(cell.cellId);
    }

    await registry.ensureDir();
    const dir = await mkdtemp(join(registry.dir, 'c-'));
    const clusterId = cell.cellId;
    await registry.setCell({
      cellId: cell.cellId,
      clusterId,
      dir,
      servers: [],
      jobs: [],
      createdAt: new Date().toISOString(),
    });

    const ctx = { variant: cell.variant, shape, catalog: template.catalog, serverVersion: versions.serverVersion };
    const plans = {
      writer: planParameters({ ...ctx, role: 'writer' }),
      reader: planParameters({ ...ctx, role: 'reader' }),
    };
    const cpuTaskset = this.cpuAffinity && versions.tools.taskset !== undefined;
    const cpuList = (slot: number) => (cpuTaskset ? cpuListFor(shape.cores, slot, this.host.cpus) : undefined);

    let cluster: ClusterInfo;
    try {
      cluster = await startCluster({
        tools: versions.tools,
        template,
        clusterId,
        dir,
        readers: cell.variant.readers,
        serverOptions: (role) => plans[role].startup,
        cpuList,
        onServerStarted: async (s) => {
          track(s.pid, { group: false, dir: s.dir });
          await registry.addServer(cell.cellId, s);
        },
      });
    } catch (e) {
      const record = (await registry.read())?.cells[cell.cellId];
      if (record) await destroyCell(record, 5_000);
      await registry.removeCell(cell.cellId);
      throw e;
    }

    const notes: PlanNote[] = [
      shapeNote(
        cell.variant.name,
        shape,
        [cluster.writer, ...cluster.readers].map((s) => s.cpuList),
        versions.serverVersion,
      ),
    ];
    notes.push(...plans.writer.notes, ...(cluster.readers.length > 0 ? plans.reader.notes : []));
    notes.push(unmeasuredMetricsNote());
    if (this.cpuAffinity && !versions.tools.taskset) {
      notes.push({
        level: 'warning',
        path: `variants[name=${cell.variant.name}].instanceClass`,
        message: 'taskset (util-linux) not found: servers are not pinned to CPUs',
      });
    }
    for (const server of [cluster.writer, ...cluster.readers]) {
      const plan = plans[server.role];
      notes.push(...(await applyDynamicParameters(server, plan, template.catalog)));
      notes.push(...(await verifyParameters(server, plan, template.catalog)).notes);
    }

    const provisionMs = Math.round(performance.now() - started);
    const resources: CellResources = {
      cellId: cell.cellId,
      clusterId,
      writer: endpointOf(cluster.writer),
      readers: cluster.readers.map(endpointOf),
      clients: [],
      credentials: { user: LOCAL_LOGINS.sbtest.user, secretRef: LOCAL_LOGINS.sbtest.secretRef },
      notes: dedupeNotes(notes),
      backendState: {
        runDir: registry.dir,
        cellDir: dir,
        serverVersion: versions.serverVersion,
        provisionMs: String(provisionMs),
        pids: [cluster.writer, ...cluster.readers].map((s) => `${s.instanceId}:${s.pid}`).join(','),
        // What the writer was asked to run with in MariaDB's terms (sizes scaled, booleans and enums
        // spelt as MariaDB does): the prepare check compares the server's values with these.
        requestedParameters: JSON.stringify(
          Object.fromEntries(plans.writer.applied.map((a) => [a.name.toLowerCase(), a.value])),
        ),
      },
    };
    this.cells.set(key, {
      runId: run.runId,
      cellId: cell.cellId,
      dir,
      cluster,
      resources,
      jobs: new Map(),
      collected: new Map(),
      stoppedSince: new Map(),
    });
    return resources;
  }

  async checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const state = this.cellState(run, cell.cellId);
    if (state.pg) return this.checkPostgresReady(state.pg, resources);
    const cluster = state.cluster!;
    for (const s of [cluster.writer, ...cluster.readers]) {
      if (!isServerRunning(s))
        throw new LocalReplicationError(
          `${s.instanceId} (pid ${s.pid}) is not running; ${s.errorLog}:\n${tail(s.errorLog, 15)}`,
        );
    }
    if (cluster.readers.length === 0) return { ready: true, resources, detail: 'writer running (no readers)' };
    const status = await replicationStatus(cluster);
    for (const r of status.replicas) {
      if ((r.sqlRunning === 'No' && r.lastSqlError !== '') || (r.ioRunning === 'No' && r.lastIoError !== '')) {
        throw new LocalReplicationError(`replication to ${r.instanceId} stopped: ${r.lastSqlError || r.lastIoError}`);
      }
    }
    const pending = status.replicas.filter((r) => !r.caughtUp);
    return {
      ready: pending.length === 0,
      resources,
      detail:
        pending.length === 0
          ? `${status.replicas.length} reader(s) replicating, caught up at ${status.writerGtidPos || 'an empty binlog'}`
          : pending
              .map(
                (r) =>
                  `${r.instanceId}: IO ${r.ioRunning}, SQL ${r.sqlRunning}, at ${r.gtidSlavePos || '-'} ` +
                  `of ${status.writerGtidPos || '-'}`,
              )
              .join('; '),
    };
  }

  /**
   * A PostgreSQL engine's cell: the version's template (initdb once), a primary and streaming
   * replicas (postgres-cluster.ts), the variant's parameters through aurora_bench.conf, read back.
   */
  private async provisionPostgresCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    const key = this.key(run.runId, cell.cellId);
    const started = performance.now();
    const engine = cell.variant.engine!;
    const shape = localShape(cell.variant.instanceClass, this.host, cell.variant.serverless?.maxAcu);
    const tools = findPostgresTools();
    const template = await ensurePostgresTemplate(tools, this.templateRoot);
    const registry = this.registry(run.runId);
    const previous = (await registry.read())?.cells[cell.cellId];
    if (previous) {
      await destroyCell(previous);
      await registry.removeCell(cell.cellId);
    }
    await registry.ensureDir();
    const dir = await mkdtemp(join(registry.dir, 'c-'));
    const clusterId = cell.cellId;
    await registry.setCell({
      cellId: cell.cellId,
      clusterId,
      dir,
      servers: [],
      jobs: [],
      createdAt: new Date().toISOString(),
    });
    const ctx = { variant: cell.variant, shape, settings: template.settings, version: tools.version };
    const plans = {
      writer: planPostgresParameters({ ...ctx, role: 'writer' }),
      reader: planPostgresParameters({ ...ctx, role: 'reader' }),
    };
    const taskset = this.cpuAffinity && (await checkLocalDependencies()).tools.taskset !== undefined;
    let pg: PostgresCluster;
    try {
      pg = await startPostgresCluster({
        tools,
        template,
        clusterId,
        dir,
        runRoot: this.runRoot,
        readers: cell.variant.readers,
        conf: (role) => plans[role].conf,
        cpuList: (slot) => (taskset ? cpuListFor(shape.cores, slot, this.host.cpus) : undefined),
        onServerStarted: async (s) => {
          track(s.pid, { group: true, dir: s.dir });
          await registry.addServer(cell.cellId, postgresServerRecord(s));
        },
      });
    } catch (e) {
      const record = (await registry.read())?.cells[cell.cellId];
      if (record) await destroyCell(record, 5_000);
      await registry.removeCell(cell.cellId);
      throw e;
    }
    const notes: PlanNote[] = [
      {
        level: 'info',
        path: `variants[name=${cell.variant.name}].instanceClass`,
        message:
          `${shape.instanceClass} (${shape.vcpu} vCPU, ${shape.memoryGiB} GiB) runs locally as ` +
          `PostgreSQL ${tools.version} standing in for ${engineName(engine)}, with ${shape.cores} CPU(s), ` +
          `memory ` +
          formatBytes(shape.localMemoryBytes) +
          ` (class memory / ${LOCAL_MEMORY_DIVISOR}): shared_buffers a quarter of it unless set, max_connections ` +
          String(Math.min(shape.maxConnections, 500)) +
          ` unless set`,
      },
      ...plans.writer.notes,
      ...(pg.readers.length > 0 ? plans.reader.notes : []),
    ];
    for (const s of [pg.writer, ...pg.readers])
      notes.push(...(await verifyPostgresParameters(s, cell.variant.name, plans[s.role])));
    const resources: CellResources = {
      cellId: cell.cellId,
      clusterId,
      writer: { instanceId: pg.writer.instanceId, role: 'writer', host: pg.writer.host, port: pg.writer.port },
      readers: pg.readers.map((r) => ({
        instanceId: r.instanceId,
        role: 'reader' as const,
        host: r.host,
        port: r.port,
      })),
      clients: [],
      credentials: { user: LOCAL_LOGINS.sbtest.user, secretRef: LOCAL_LOGINS.sbtest.secretRef },
      notes: dedupeNotes(notes),
      backendState: {
        runDir: registry.dir,
        cellDir: dir,
        serverVersion: `PostgreSQL ${tools.version}`,
        provisionMs: String(Math.round(performance.now() - started)),
        pids: [pg.writer, ...pg.readers].map((s) => `${s.instanceId}:${s.pid}`).join(','),
      },
    };
    this.cells.set(key, {
      runId: run.runId,
      cellId: cell.cellId,
      dir,
      pg,
      resources,
      jobs: new Map(),
      collected: new Map(),
      stoppedSince: new Map(),
    });
    return resources;
  }

  private async checkPostgresReady(pg: PostgresCluster, resources: CellResources): Promise<ReadyState> {
    for (const s of [pg.writer, ...pg.readers]) {
      if (!isPostgresRunning(s))
        throw new LocalReplicationError(`${s.instanceId} (pid ${s.pid}) is not running; ${s.log}:\n${tail(s.log, 15)}`);
    }
    if (pg.readers.length === 0) return { ready: true, resources, detail: 'primary running (no replicas)' };
    const status = await postgresReplicationStatus(pg);
    const pending = status.replicas.filter((r) => !r.caughtUp);
    return {
      ready: pending.length === 0,
      resources,
      detail:
        pending.length === 0
          ? `${status.replicas.length} replica(s) streaming, replayed up to ${status.writerLsn}`
          : pending
              .map((r) => `${r.instanceId}: ${r.state}, replayed ${r.replayLsn || '-'} of ${status.writerLsn}`)
              .join('; '),
    };
  }

  replicationHealth(run: RunContext, cell: CellPlan): Promise<readonly ReplicaHealth[]> {
    // A cell already torn down (a stopped run recording its interrupted step) has nothing to ask;
    // PostgreSQL cells are not checked yet (their replicas stream; checkCellReady watches them).
    const state = this.cells.get(this.key(run.runId, cell.cellId));
    if (!state?.cluster) return Promise.resolve([]);
    return replicaHealth(state.cluster, isServerRunning(state.cluster.writer));
  }

  startClients(_run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    const clients: ClientRef[] = Array.from({ length: cell.variant.clients.count }, (_, i) => ({
      clientId: `client-${i + 1}`,
    }));
    return Promise.resolve({ ...resources, clients });
  }

  async checkClientsReady(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    if (!existsSync(this.runnerPath))
      throw new MissingDependencyError(
        `the client runner ${this.runnerPath} is missing from this checkout: build it with \`npm run build\` ` +
          `(scripts/build-runner.ts)`,
      );
    const versions = await checkLocalDependencies();
    return {
      ready: true,
      resources,
      detail:
        `${resources.clients.length} local client process slot(s); runner ${this.runnerPath}, ` +
        `sysbench ${versions.sysbenchVersion}`,
    };
  }

  private password(secretRef: string): string {
    if (secretRef !== LOCAL_LOGINS.sbtest.secretRef)
      throw new Error(
        `unknown local credential "${secretRef}" (the local backend knows ${LOCAL_LOGINS.sbtest.secretRef})`,
      );
    return LOCAL_LOGINS.sbtest.password;
  }

  /**
   * Custom Lua workloads (a NAME ending in .lua, as the runner contract has it) are copied from the
   * lake (scripts/<runId>/<name>) into the cell's scripts dir, the way AWS clients fetch them.
   */
  private async scriptDirFor(run: RunContext, state: CellState, workload: string): Promise<string | undefined> {
    if (!workload.endsWith('.lua')) return undefined;
    const dir = join(state.dir, 'scripts');
    const file = join(dir, workload);
    if (!existsSync(file) && workload === WF_EMULATION_SCRIPT) {
      // The write-forwarding emulation is the local backend's own script, not the spec's.
      await mkdir(dir, { recursive: true });
      await writeFile(file, await readFile(join(this.repoRoot, 'client', 'workloads', WF_EMULATION_SCRIPT), 'utf8'));
    }
    if (!existsSync(file)) {
      const key = lakeKeys.script(run.runId, workload);
      const body = await this.lake.get(key);
      if (body === undefined)
        throw new Error(
          `custom workload ${workload} is not in the lake at ${key} (PlanRun writes the plan's scripts there)`,
        );
      await mkdir(dir, { recursive: true });
      await writeFile(file, body);
    }
    return dir;
  }

  async startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    planned: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    const jobs = planned.map((job) => emulatingForwarding(job, resources));
    const state = this.cellState(run, cell.cellId);
    if (!existsSync(this.runnerPath))
      throw new MissingDependencyError(
        `the client runner ${this.runnerPath} is missing from this checkout: build it with \`npm run build\` ` +
          `(scripts/build-runner.ts)`,
      );
    const password = this.password(resources.credentials.secretRef);

    // The sampler's first snapshot must come before the load starts.
    if (jobs.some((j) => j.phase === 'run') && !state.sampler) {
      const sampler = state.pg
        ? new PostgresMetricsSampler({
            writer: state.pg.writer,
            readers: state.pg.readers,
            intervalMs: this.sampleIntervalMs,
          })
        : new ServerMetricsSampler({
            writer: state.cluster!.writer,
            readers: state.cluster!.readers,
            intervalMs: this.sampleIntervalMs,
          });
      await sampler.start();
      state.sampler = sampler;
    }

    // The write-forwarding emulation reads on a replica: it starts once the replicas have what the
    // writer has (a prepare re-creates the tables; writer steps leave a backlog). Set-up, not measured.
    if (state.cluster !== undefined && jobs.some((j) => j.phase === 'run' && j.extraPort !== undefined)) {
      if (!(await waitForReplicas(state.cluster, REPLICA_CATCH_UP_S))) {
        throw new Error(
          `the replicas of cell ${cell.cellId} did not catch up with the writer within ${REPLICA_CATCH_UP_S} ` +
            `s; the write-forwarding emulation needs their data`,
        );
      }
    }
    const handles: JobHandle[] = [];
    const records: JobRecord[] = [];
    const logDir = join(state.dir, 'jobs');
    const tmpDir = join(logDir, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    for (const job of jobs) {
      const running = state.jobs.get(job.jobId);
      if (running && running.exit === undefined) {
        handles.push(running.handle); // a retried StartJobs: the job is already running
        continue;
      }
      const scriptDir = await this.scriptDirFor(run, state, job.workload);
      const out = this.lake.pathOf(job.outputPrefix.replace(/\/+$/, ''));
      await mkdir(out, { recursive: true });
      const args = [
        this.runnerPath,
        ...formatRunnerArgv({
          phase: job.phase,
          workload: job.workload,
          out,
          host: job.endpoint.host,
          port: job.endpoint.port,
          ...(job.extraPort !== undefined ? { extraPort: job.extraPort } : {}),
          user: resources.credentials.user,
          driver: job.driver ?? 'mysql',
          password: { env: PASSWORD_ENV },
          ...(scriptDir ? { scripts: { dir: scriptDir } } : {}),
          ...prepareRunnerArgv(job, (prefix) => this.lake.pathOf(prefix.replace(/\/+$/, ''))),
          sysbenchOptions: job.sysbenchArgs,
        }),
      ];
      const base = join(logDir, job.jobId.replace(/[^A-Za-z0-9._-]/g, '_'));
      const stdoutFd = openSync(`${base}.stdout`, 'w');
      const stderrFd = openSync(`${base}.stderr`, 'w');
      let child: ChildProcess;
      try {
        // Own process group: stopJobs signals the runner and its sysbench together.
        // TMPDIR inside the cell: the runner's work dir (and so its sysbench's --config-file) then
        // names the cell directory, which cleanup's /proc scan looks for.
        child = spawn(process.execPath, args, {
          detached: true,
          stdio: ['ignore', stdoutFd, stderrFd],
          env: { ...process.env, [PASSWORD_ENV]: password, TMPDIR: tmpDir },
        });
      } finally {
        closeSync(stdoutFd);
        closeSync(stderrFd);
      }
      if (child.pid === undefined) throw new Error(`could not start ${this.runnerPath} for job ${job.jobId}`);
      child.unref();
      track(child.pid, { group: true });
      const handle: JobHandle = {
        jobId: job.jobId,
        clientId: job.clientId,
        phase: job.phase,
        outputPrefix: job.outputPrefix,
        ref: String(child.pid),
        startedAt: new Date().toISOString(),
      };
      const proc: JobProcess = { handle, child, stderrFile: `${base}.stderr` };
      child.on('exit', (code, signal) => {
        proc.exit = { code, signal };
        startedHere.delete(child.pid!);
      });
      state.jobs.set(job.jobId, proc);
      handles.push(handle);
      records.push({ jobId: job.jobId, pid: child.pid, marker: out, startedAt: handle.startedAt });
    }
    if (records.length > 0) await this.registry(run.runId).addJobs(cell.cellId, records);
    return handles;
  }

  private findJob(runId: string, jobId: string): { state: CellState; proc: JobProcess } | undefined {
    for (const state of this.cells.values()) {
      if (state.runId !== runId) continue;
      const proc = state.jobs.get(jobId);
      if (proc) return { state, proc };
    }
    return undefined;
  }

  async checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const jobs: JobsState['jobs'][number][] = [];
    for (const h of handles) {
      const found = this.findJob(run.runId, h.jobId);
      if (found) {
        const { exit } = found.proc;
        if (exit === undefined) {
          jobs.push({ jobId: h.jobId, state: 'running' });
        } else {
          const ok = exit.code === 0;
          const why = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
          const stderr = ok ? '' : tail(found.proc.stderrFile, 5);
          jobs.push({
            jobId: h.jobId,
            state: 'exited',
            ...(ok ? {} : { detail: `runner ${why}${stderr ? `: ${stderr}` : ''}` }),
          });
        }
        continue;
      }
      // Not started by this process (a restarted runner of the workflow): go by pid and output.
      const pid = Number(h.ref);
      if (Number.isInteger(pid) && isOurProcess(pid, this.runnerPath)) {
        jobs.push({ jobId: h.jobId, state: 'running' });
      } else if ((await this.lake.get(h.outputPrefix + 'result.json')) !== undefined) {
        jobs.push({ jobId: h.jobId, state: 'exited' });
      } else {
        jobs.push({
          jobId: h.jobId,
          state: 'lost',
          detail: `runner (pid ${h.ref}) is gone and left no result.json under ${h.outputPrefix}`,
        });
      }
    }
    await this.failJobsOnHungServers(run, handles, jobs);
    const running = jobs.filter((j) => j.state === 'running').length;
    return { done: running === 0, running, jobs };
  }

  /**
   * A step whose cell has a server that does not answer would run until its deadline and then hang
   * its collection: its running jobs are stopped now and reported lost, naming the server.
   */
  private async failJobsOnHungServers(
    run: RunContext,
    handles: readonly JobHandle[],
    jobs: JobsState['jobs'][number][],
  ): Promise<void> {
    const byCell = new Map<CellState, JobHandle[]>();
    for (const h of handles) {
      const found = this.findJob(run.runId, h.jobId);
      if (!found || !jobs.some((j) => j.jobId === h.jobId && j.state === 'running')) continue;
      byCell.set(found.state, [...(byCell.get(found.state) ?? []), h]);
    }
    for (const [state, running] of byCell) {
      const hung = hungServers(state);
      if (hung.length === 0) continue;
      await this.stopJobs(run, running);
      const detail = `${hung.join('; ')}: the step was stopped`;
      for (const h of running) {
        const i = jobs.findIndex((j) => j.jobId === h.jobId);
        jobs[i] = { jobId: h.jobId, state: 'lost', detail };
      }
    }
  }

  async stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    await Promise.all(
      handles.map(async (h) => {
        const found = this.findJob(run.runId, h.jobId);
        const pid = Number(h.ref);
        if (found ? found.proc.exit === undefined : isOurProcess(pid, this.runnerPath)) {
          // The runner stops sysbench and still writes result.json on SIGTERM; SIGKILL after 15 s.
          await terminate(pid, { graceMs: 15_000, group: true });
          // Gone from /proc is not yet reaped: wait for Node's exit event, so a checkJobs right after
          // this sees the job exited (a loaded machine delivers it a moment later).
          const proc = found?.proc;
          if (proc && proc.exit === undefined && proc.child.exitCode === null && proc.child.signalCode === null) {
            await new Promise<void>((resolve) => {
              proc.child.once('exit', () => resolve());
              setTimeout(resolve, 5_000).unref();
            });
          }
        }
      }),
    );
  }

  async collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    _resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection> {
    const state = this.cells.get(this.key(run.runId, cell.cellId));
    const previous = state?.collected.get(window.stepId);
    if (previous) return previous;
    const sampler = state?.sampler;
    if (!state || !sampler) return { rows: [], windows: [] };
    state.sampler = undefined;
    const samples = await sampler.stop();
    const rows = toServerMetricRows(
      samples,
      { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: window.stepId, dt: run.dt },
      window,
    );
    // The sampler saw the whole window live: what it has is all there will ever be (expected = received).
    const counts = new Map<string, MetricWindowCount>();
    for (const r of rows) {
      const key = `${r.instance_id}\u0000${r.metric}`;
      const c = counts.get(key);
      const received = (c?.received ?? 0) + 1;
      counts.set(key, {
        instanceId: r.instance_id,
        role: r.role as 'writer' | 'reader',
        metric: r.metric,
        source: 'local',
        start: window.start,
        end: window.end,
        periodS: Math.max(1, Math.round(this.sampleIntervalMs / 1000)),
        expected: received,
        received,
      });
    }
    const collection: ServerMetricsCollection = { rows, windows: [...counts.values()] };
    state.collected.set(window.stepId, collection);
    return collection;
  }

  /** No notification channel locally: the verdicts are in the lake and `run` prints them (progress.ts). */
  publishVerdicts(): Promise<VerdictPublication> {
    return Promise.resolve({ channel: 'none', metricDatapoints: 0, eventId: null, notificationId: null });
  }

  async teardownCell(run: RunContext, cell: CellPlan, _resources: CellResources | undefined): Promise<TeardownReport> {
    const key = this.key(run.runId, cell.cellId);
    const state = this.cells.get(key);
    if (state?.sampler) {
      await state.sampler.stop();
      state.sampler = undefined;
    }
    const registry = this.registry(run.runId);
    let record: CellRecord | undefined = (await registry.read())?.cells[cell.cellId];
    if (!record && state) {
      const servers = state.pg
        ? [state.pg.writer, ...state.pg.readers].map(postgresServerRecord)
        : state.cluster
          ? [state.cluster.writer, ...state.cluster.readers]
          : [];
      record = {
        cellId: state.cellId,
        clusterId: state.cluster?.clusterId ?? state.pg?.clusterId ?? state.cellId,
        dir: state.dir,
        servers,
        jobs: [],
        createdAt: '',
      };
    }
    // Jobs this process started are stopped even if the registry missed them.
    const jobs = [...(record?.jobs ?? [])];
    for (const proc of state?.jobs.values() ?? []) {
      if (!jobs.some((j) => j.jobId === proc.handle.jobId)) {
        jobs.push({
          jobId: proc.handle.jobId,
          pid: Number(proc.handle.ref),
          marker: this.lake.pathOf(proc.handle.outputPrefix.replace(/\/+$/, '')),
          startedAt: proc.handle.startedAt,
        });
      }
    }
    this.cells.delete(key);
    if (!record) return { deleted: [], alreadyGone: [`cell ${cell.cellId}`] };
    const report = await destroyCell({ ...record, jobs });
    for (const s of record.servers) startedHere.delete(s.pid);
    await registry.removeCell(cell.cellId);
    return report;
  }

  /** Everything of one run, whatever state it is in (Ctrl-C, a crashed task): no process, port or directory is left. */
  async cleanupRun(runId: string): Promise<void> {
    await this.cleanupRunReport(runId);
  }

  /** cleanupRun, saying what it removed. */
  async cleanupRunReport(runId: string): Promise<string[]> {
    for (const [key, state] of this.cells) {
      if (state.runId !== runId) continue;
      await state.sampler?.stop();
      this.cells.delete(key);
    }
    const removed = await cleanupRunDir(this.runRoot, runId);
    for (const [pid] of startedHere) if (!isAlive(pid)) startedHere.delete(pid);
    return removed;
  }

  /**
   * Claims `runId` in the run root before the run starts (refused when the id exists or is live),
   * recording where its run row will be so `cleanup` can settle a run this process never ends.
   */
  async claimRun(runId: string, runKey: string, endReason?: string): Promise<void> {
    // A run that starts: a lake it cannot write is said now ("read-only"), before anything exists.
    if (endReason === undefined) await this.lake.assertWritable();
    await claimRunDir(this.runRoot, runId, {
      lakeRoot: this.lake.root,
      runKey,
      ...(endReason !== undefined ? { endReason } : {}),
    });
    if (endReason === undefined) this.hostRuns.register(runId);
  }

  /** The run is over on this host: the other runs whose time overlapped its own (they measured each other's load). */
  endHostRun(runId: string): HostRunOverlap[] {
    return this.hostRuns.end(runId);
  }

  /** The sweeper for this backend's run root: runs whose owner process is gone. */
  async cleanupAll(options: { includeLive?: boolean } = {}): Promise<string[]> {
    return (await cleanupAllRuns(this.runRoot, options)).removed;
  }
}
