import { performance } from 'node:perf_hooks';
import type { CellResources, Endpoint, ReadyState, RunContext } from '../../../backend';
import { LOCAL_UNMEASURED_METRICS } from '../../../lake/rows';
import type { CellPlan, PlanNote } from '../../../plan/types';
import { replicationStatus, startCluster, type ClusterInfo } from '../cluster';
import {
  cpuListFor,
  formatBytes,
  LOCAL_MEMORY_DIVISOR,
  localShape,
  type LocalInstanceShape,
} from '../instance-classes';
import { isServerRunning, type ServerInfo } from '../mariadb-server';
import { applyDynamicParameters, dedupeNotes, planParameters, verifyParameters } from '../parameters';
import { checkLocalDependencies } from '../preflight';
import { ensureTemplate, LOCAL_LOGINS } from '../template';
import { openCellDir, startOrDestroy, tail } from './cell-dir';
import type { LocalPartContext } from './context';
import { LocalReplicationError } from './replication-error';
import { track } from './started-here';

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
      `memory ${formatBytes(shape.localMemoryBytes)} (class memory / ${LOCAL_MEMORY_DIVISOR}), ` +
      `innodb_buffer_pool_size ${formatBytes(shape.bufferPoolBytes)} unless set, ` +
      `max_connections ${shape.maxConnections} (Aurora's default for the class) unless set`,
  };
}

/**
 * The server metrics AWS reports for this cell that the local sampler cannot, and why.
 * It is said once, not shown as missing.
 */
function unmeasuredMetricsNote(cell: CellPlan): PlanNote {
  const forwards = cell.variant.writeForwarding?.enabled === true;
  const byReason = new Map<string, string[]>();
  for (const [metric, why] of Object.entries(LOCAL_UNMEASURED_METRICS)) {
    if (metric.startsWith('AuroraForwarding') || (!forwards && metric.includes('Forwarding'))) continue;
    byReason.set(why, [...(byReason.get(why) ?? []), metric]);
  }
  return {
    level: 'info',
    path: 'serverMetrics',
    message:
      `not measured locally: ` + [...byReason].map(([why, metrics]) => `${metrics.join(', ')} (${why})`).join('; '),
  };
}

/** A MySQL-family engine's cell: a writer mariadbd and GTID replicas, with parameters read back. */
export async function provisionMariadbCell(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
): Promise<CellResources> {
  const started = performance.now();
  // UnsupportedOnBackendError for unknown classes.
  const shape = localShape(cell.variant.instanceClass, ctx.host, cell.variant.serverless?.maxAcu);
  const versions = await checkLocalDependencies();
  const template = await ensureTemplate(versions.tools, versions.serverVersion, ctx.templateRoot);
  const registry = ctx.registry(run.runId);
  const dir = await openCellDir(registry, cell.cellId);
  const clusterId = cell.cellId;

  const plan = { variant: cell.variant, shape, catalog: template.catalog, serverVersion: versions.serverVersion };
  const plans = {
    writer: planParameters({ ...plan, role: 'writer' }),
    reader: planParameters({ ...plan, role: 'reader' }),
  };
  const cpuTaskset = ctx.cpuAffinity && versions.tools.taskset !== undefined;
  const cpuList = (slot: number) => (cpuTaskset ? cpuListFor(shape.cores, slot, ctx.host.cpus) : undefined);
  const cluster: ClusterInfo = await startOrDestroy(registry, cell.cellId, () =>
    startCluster({
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
    }),
  );
  const servers = [cluster.writer, ...cluster.readers];
  const notes: PlanNote[] = [
    shapeNote(
      cell.variant.name,
      shape,
      servers.map((s) => s.cpuList),
      versions.serverVersion,
    ),
    ...plans.writer.notes,
    ...(cluster.readers.length > 0 ? plans.reader.notes : []),
    unmeasuredMetricsNote(cell),
  ];
  if (ctx.cpuAffinity && !versions.tools.taskset) {
    notes.push({
      level: 'warning',
      path: `variants[name=${cell.variant.name}].instanceClass`,
      message: 'taskset (util-linux) not found: servers are not pinned to CPUs',
    });
  }
  for (const server of servers) {
    const serverPlan = plans[server.role];
    notes.push(...(await applyDynamicParameters(server, serverPlan, template.catalog)));
    notes.push(...(await verifyParameters(server, serverPlan, template.catalog)).notes);
  }
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
      provisionMs: String(Math.round(performance.now() - started)),
      pids: servers.map((s) => `${s.instanceId}:${s.pid}`).join(','),
      // What the writer was asked to run with, in MariaDB's terms.
      // The prepare check compares the server's values with these.
      requestedParameters: JSON.stringify(
        Object.fromEntries(plans.writer.applied.map((a) => [a.name.toLowerCase(), a.value])),
      ),
    },
  };
  const state = { runId: run.runId, cellId: cell.cellId, dir, cluster, resources };
  ctx.cells.set({ ...state, jobs: new Map(), collected: new Map(), stoppedSince: new Map() });
  return resources;
}

/** Ready when every server runs and every replica has caught up. A broken replication thread throws. */
export async function checkMariadbReady(cluster: ClusterInfo, resources: CellResources): Promise<ReadyState> {
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
  const at = (pos: string) => pos || '-';
  return {
    ready: pending.length === 0,
    resources,
    detail:
      pending.length === 0
        ? `${status.replicas.length} reader(s) replicating, caught up at ${status.writerGtidPos || 'an empty binlog'}`
        : pending
            .map(
              (r) =>
                `${r.instanceId}: IO ${r.ioRunning}, SQL ${r.sqlRunning}, at ${at(r.gtidSlavePos)} ` +
                `of ${at(status.writerGtidPos)}`,
            )
            .join('; '),
  };
}
