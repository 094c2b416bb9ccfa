import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CellResources, ReadyState, RunContext } from '../../../backend';
import { engineName } from '../../../aurora/engines';
import type { CellPlan, PlanNote } from '../../../plan/types';
import { cpuListFor, formatBytes, LOCAL_MEMORY_DIVISOR, localShape } from '../instance-classes';
import type { ServerInfo } from '../mariadb-server';
import { dedupeNotes } from '../parameters';
import {
  planPostgresParameters,
  postgresReplicationStatus,
  startPostgresCluster,
  verifyPostgresParameters,
  type PostgresCluster,
} from '../postgres-cluster';
import { ensurePostgresTemplate, findPostgresTools, isPostgresRunning, type PostgresServer } from '../postgres-server';
import { checkLocalDependencies } from '../preflight';
import { LOCAL_LOGINS } from '../template';
import { openCellDir, startOrDestroy, tail } from './cell-dir';
import type { LocalPartContext } from './context';
import { LocalReplicationError } from './replication-error';
import { track } from './started-here';

/** A PostgreSQL server in the registry's server shape. destroyCell stops it by its engine. */
export function postgresServerRecord(s: PostgresServer): ServerInfo {
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
    // The datadir is on the postmaster's command line. It tells our process from a reused pid.
    defaultsFile: s.datadir,
    clientDefaultsFile: '',
    errorLog: s.log,
    ...(s.cpuList !== undefined ? { cpuList: s.cpuList } : {}),
    client: join(s.bindir, 'psql'),
    engine: 'postgresql',
  };
}

/**
 * A PostgreSQL engine's cell: a primary and streaming replicas, with the variant's parameters applied and read back.
 */
export async function provisionPostgresCell(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
): Promise<CellResources> {
  const started = performance.now();
  const engine = cell.variant.engine!;
  const shape = localShape(cell.variant.instanceClass, ctx.host, cell.variant.serverless?.maxAcu);
  const tools = findPostgresTools();
  const template = await ensurePostgresTemplate(tools, ctx.templateRoot);
  const registry = ctx.registry(run.runId);
  const dir = await openCellDir(registry, cell.cellId);
  const clusterId = cell.cellId;
  const plan = { variant: cell.variant, shape, settings: template.settings, version: tools.version };
  const plans = {
    writer: planPostgresParameters({ ...plan, role: 'writer' }),
    reader: planPostgresParameters({ ...plan, role: 'reader' }),
  };
  const taskset = ctx.cpuAffinity && (await checkLocalDependencies()).tools.taskset !== undefined;
  const pg: PostgresCluster = await startOrDestroy(registry, cell.cellId, () =>
    startPostgresCluster({
      tools,
      template,
      clusterId,
      dir,
      runRoot: ctx.runRoot,
      readers: cell.variant.readers,
      conf: (role) => plans[role].conf,
      cpuList: (slot) => (taskset ? cpuListFor(shape.cores, slot, ctx.host.cpus) : undefined),
      onServerStarted: async (s) => {
        track(s.pid, { group: true, dir: s.dir });
        await registry.addServer(cell.cellId, postgresServerRecord(s));
      },
    }),
  );
  const notes: PlanNote[] = [
    {
      level: 'info',
      path: `variants[name=${cell.variant.name}].instanceClass`,
      message:
        `${shape.instanceClass} (${shape.vcpu} vCPU, ${shape.memoryGiB} GiB) runs locally as ` +
        `PostgreSQL ${tools.version} standing in for ${engineName(engine)}, with ${shape.cores} CPU(s), ` +
        `memory ${formatBytes(shape.localMemoryBytes)} (class memory / ${LOCAL_MEMORY_DIVISOR}): ` +
        `shared_buffers a quarter of it unless set, max_connections ${Math.min(shape.maxConnections, 500)} unless set`,
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
    readers: pg.readers.map((r) => ({ instanceId: r.instanceId, role: 'reader' as const, host: r.host, port: r.port })),
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
  const state = { runId: run.runId, cellId: cell.cellId, dir, pg, resources };
  ctx.cells.set({ ...state, jobs: new Map(), collected: new Map(), stoppedSince: new Map() });
  return resources;
}

/** Ready when every server runs and every replica has replayed what the primary wrote. */
export async function checkPostgresReady(pg: PostgresCluster, resources: CellResources): Promise<ReadyState> {
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
