/**
 * A local "cluster": one writer and N readers with real MariaDB GTID replication.
 * Every server starts from the same template, so the readers replicate the writer's binlog from its start.
 * All servers keep a binlog with log_slave_updates, since Aurora replicas could be promoted.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  queryServer,
  sqlTarget,
  startServerFromTemplate,
  stopServer,
  type LocalServer,
  type ServerInfo,
  type ServerOptions,
} from './mariadb-server';
import type { LocalTools } from './preflight';
import { query, queryObjects, sqlString, type Row } from './sql-client';
import type { ReplicaHealth } from '../../backend';
import { HEARTBEAT_TABLE, LOCAL_LOGINS, type ServerTemplate } from './template';

export interface ClusterInfo {
  readonly clusterId: string;
  readonly dir: string;
  readonly writer: ServerInfo;
  readonly readers: readonly ServerInfo[];
}

export interface StartClusterOptions {
  readonly tools: LocalTools;
  readonly template: ServerTemplate;
  readonly clusterId: string;
  /** Servers go under <dir>/w, <dir>/r1, ... */
  readonly dir: string;
  readonly readers: number;
  /** Options from the parameter plan per role, merged over the replication options. */
  readonly serverOptions?: (role: 'writer' | 'reader', readerIndex: number) => ServerOptions;
  /** Taskset CPU list for the slot-th server, or undefined. The writer is slot 0. */
  readonly cpuList?: (slot: number) => string | undefined;
  /** Called as soon as each server runs, so a registry can record it before anything else fails. */
  readonly onServerStarted?: (server: ServerInfo) => void | Promise<void>;
}

function instanceIdFor(clusterId: string, role: 'writer' | 'reader', readerIndex = 0): string {
  return role === 'writer' ? `${clusterId}-w` : `${clusterId}-r${readerIndex}`;
}

/** Server options every member gets: a ROW binlog with GTIDs, and the reader side of replication. */
export function replicationOptions(role: 'writer' | 'reader'): ServerOptions {
  return {
    'log-bin': 'mariadb-bin',
    binlog_format: 'ROW',
    log_slave_updates: 'ON',
    gtid_strict_mode: 'ON',
    ...(role === 'reader' ? { read_only: 'ON', 'relay-log': 'relay-bin', 'skip-slave-start': null } : {}),
  };
}

async function startMember(
  o: StartClusterOptions,
  role: 'writer' | 'reader',
  readerIndex: number,
): Promise<LocalServer> {
  const slot = role === 'writer' ? 0 : readerIndex;
  const cpuList = o.cpuList?.(slot);
  const server = await startServerFromTemplate(o.template.datadir, {
    tools: o.tools,
    instanceId: instanceIdFor(o.clusterId, role, readerIndex),
    role,
    serverId: slot + 1,
    dir: join(o.dir, role === 'writer' ? 'w' : `r${readerIndex}`),
    options: { ...replicationOptions(role), ...(o.serverOptions?.(role, readerIndex) ?? {}) },
    ...(cpuList ? { cpuList } : {}),
    admin: LOCAL_LOGINS.admin,
  });
  await o.onServerStarted?.(server.info);
  return server;
}

/** Points a reader at the writer and starts replicating. */
export async function attachReader(reader: ServerInfo, writer: ServerInfo): Promise<void> {
  const { replication } = LOCAL_LOGINS;
  await queryServer(
    reader,
    `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${writer.port}, ` +
      `MASTER_USER=${sqlString(replication.user)}, ` +
      `MASTER_PASSWORD=${sqlString(replication.password)}, MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; ` +
      `START SLAVE;`,
  );
}

/**
 * Starts the writer and readers at once, since they only depend on the template. Then it attaches the readers.
 * On any failure, everything already started is stopped and removed before rethrowing.
 */
export async function startCluster(o: StartClusterOptions): Promise<ClusterInfo> {
  await mkdir(o.dir, { recursive: true });
  const roles: { role: 'writer' | 'reader'; index: number }[] = [
    { role: 'writer', index: 0 },
    ...Array.from({ length: o.readers }, (_, i) => ({ role: 'reader' as const, index: i + 1 })),
  ];
  const results = await Promise.allSettled(roles.map((r) => startMember(o, r.role, r.index)));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.info] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((s) => stopServer(s, { graceMs: 5_000 })));
    throw failed.reason;
  }
  const [writer, ...readers] = started as [ServerInfo, ...ServerInfo[]];
  try {
    await Promise.all(readers.map((r) => attachReader(r, writer)));
  } catch (e) {
    await Promise.all(started.map((s) => stopServer(s, { graceMs: 5_000 })));
    throw e;
  }
  return { clusterId: o.clusterId, dir: o.dir, writer, readers };
}

interface ReplicaState {
  readonly instanceId: string;
  readonly ioRunning: string;
  readonly sqlRunning: string;
  readonly lastIoError: string;
  readonly lastSqlError: string;
  readonly gtidSlavePos: string;
  readonly secondsBehindMaster: number | null;
  /** Running and applied everything the writer had when asked. */
  readonly caughtUp: boolean;
}

export interface ReplicationStatus {
  readonly writerGtidPos: string;
  readonly replicas: readonly ReplicaState[];
}

/**
 * Wait until every reader has applied what the writer has written so far. MASTER_GTID_WAIT returns -1 on timeout.
 * The write-forwarding emulation needs it, so its reader steps never lack the tables a prepare just re-created.
 * Returns whether all caught up within timeoutS.
 */
export async function waitForReplicas(
  cluster: Pick<ClusterInfo, 'writer' | 'readers'>,
  timeoutS: number,
): Promise<boolean> {
  const [[writerPos]] = (await queryServer(cluster.writer, 'SELECT @@GLOBAL.gtid_binlog_pos')) as [Row];
  if (!writerPos) return true;
  const results = await Promise.all(
    cluster.readers.map(async (r) => {
      const [[rc]] = (await query(
        sqlTarget(r),
        `SELECT MASTER_GTID_WAIT(${sqlString(writerPos)}, ${Math.round(timeoutS)})`,
        { timeoutMs: (timeoutS + 30) * 1000 },
      )) as [Row];
      return rc === '0';
    }),
  );
  return results.every(Boolean);
}

/**
 * Whether each reader still replicates: its writer runs, and its IO and SQL threads are running.
 * Only the readers are asked, so a writer that was killed is reported, not an error.
 */
export async function replicaHealth(
  cluster: Pick<ClusterInfo, 'writer' | 'readers'>,
  writerRunning: boolean,
): Promise<ReplicaHealth[]> {
  return Promise.all(
    cluster.readers.map(async (r): Promise<ReplicaHealth> => {
      const problems: string[] = [];
      if (!writerRunning)
        problems.push(`its writer ${cluster.writer.instanceId} (pid ${cluster.writer.pid}) is not running`);
      try {
        const [status] = await queryObjects(sqlTarget(r), 'SHOW SLAVE STATUS');
        const io = status?.['Slave_IO_Running'] ?? 'No';
        const sql = status?.['Slave_SQL_Running'] ?? 'No';
        if (io !== 'Yes')
          problems.push(`IO thread ${io}${status?.['Last_IO_Error'] ? ` (${status['Last_IO_Error']})` : ''}`);
        if (sql !== 'Yes')
          problems.push(`SQL thread ${sql}${status?.['Last_SQL_Error'] ? ` (${status['Last_SQL_Error']})` : ''}`);
      } catch (e) {
        problems.push(`the reader did not answer: ${(e as Error).message.split('\n')[0]!}`);
      }
      return { instanceId: r.instanceId, healthy: problems.length === 0, detail: problems.join(', ') };
    }),
  );
}

/** SHOW SLAVE STATUS of every reader against the writer's @@gtid_binlog_pos. */
export async function replicationStatus(cluster: Pick<ClusterInfo, 'writer' | 'readers'>): Promise<ReplicationStatus> {
  const [[writerPos]] = (await queryServer(cluster.writer, 'SELECT @@GLOBAL.gtid_binlog_pos')) as [Row];
  const writerGtidPos = writerPos ?? '';
  const replicas = await Promise.all(
    cluster.readers.map(async (r): Promise<ReplicaState> => {
      const [status] = await queryObjects(sqlTarget(r), 'SHOW SLAVE STATUS');
      const [[slavePos]] = (await queryServer(r, 'SELECT @@GLOBAL.gtid_slave_pos')) as [Row];
      const ioRunning = status?.['Slave_IO_Running'] ?? 'No';
      const sqlRunning = status?.['Slave_SQL_Running'] ?? 'No';
      const behind = status?.['Seconds_Behind_Master'];
      const gtidSlavePos = slavePos ?? '';
      return {
        instanceId: r.instanceId,
        ioRunning,
        sqlRunning,
        lastIoError: status?.['Last_IO_Error'] ?? (status ? '' : 'replication is not configured'),
        lastSqlError: status?.['Last_SQL_Error'] ?? '',
        gtidSlavePos,
        secondsBehindMaster: behind === null || behind === undefined ? null : Number(behind),
        caughtUp: ioRunning === 'Yes' && sqlRunning === 'Yes' && gtidCovers(gtidSlavePos, writerGtidPos),
      };
    }),
  );
  return { writerGtidPos, replicas };
}

/** Whether position `have` includes every domain's sequence of `want`, as in "0-1-42,1-3-7". */
function gtidCovers(have: string, want: string): boolean {
  const parse = (s: string) =>
    new Map(
      s
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== '')
        .map((g) => {
          const [domain, , seq] = g.split('-');
          return [domain!, Number(seq)] as const;
        }),
    );
  const h = parse(have);
  for (const [domain, seq] of parse(want)) if ((h.get(domain) ?? -1) < seq) return false;
  return true;
}

export type SqlExec = (sql: string) => Promise<Row[]>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Replica lag from a heartbeat, since GTID positions tell *whether* a reader is caught up, not *how late* it is.
 * The writer's heartbeat row gets a new number, and each reader is polled until it shows it.
 * The lag is the time from commit to visibility, with one client round trip of resolution.
 * A reader still behind when the probe gives up reports a lower bound that keeps growing while it lags.
 * Both ends use this process's monotonic clock, so no clocks need to agree.
 * One probe object per sampler, since it keeps commit times.
 */
export class HeartbeatProbe {
  private seq: number | undefined;
  private readonly commits = new Map<number, number>();
  private firstSeq: number | undefined;
  /** The heartbeat sequence each reader showed at its last poll. */
  readonly visible = new Map<string, number>();

  constructor(
    private readonly writer: SqlExec,
    private readonly readers: readonly { readonly instanceId: string; readonly exec: SqlExec }[],
    private readonly maxWaitMs = 900,
  ) {}

  /** One heartbeat. Returns lag in ms per reader instance id. */
  async probe(): Promise<Map<string, number>> {
    if (this.seq === undefined) {
      const [[current]] = (await this.writer(`SELECT seq FROM ${HEARTBEAT_TABLE} WHERE id = 1`)) as [Row];
      this.seq = Number(current ?? 0);
    }
    const seq = ++this.seq;
    await this.writer(`UPDATE ${HEARTBEAT_TABLE} SET seq = ${seq} WHERE id = 1`);
    const committedAt = performance.now();
    this.commits.set(seq, committedAt);
    this.firstSeq ??= seq;
    if (this.commits.size > 3600) this.commits.delete(Math.min(...this.commits.keys()));

    const lags = await Promise.all(
      this.readers.map(
        async (r) => [r.instanceId, await this.readerLag(r.instanceId, r.exec, seq, committedAt)] as const,
      ),
    );
    return new Map(lags);
  }

  private async readerLag(instanceId: string, exec: SqlExec, seq: number, committedAt: number): Promise<number> {
    const deadline = committedAt + this.maxWaitMs;
    let pause = 1;
    for (;;) {
      const [[value]] = (await exec(`SELECT seq FROM ${HEARTBEAT_TABLE} WHERE id = 1`)) as [Row];
      const now = performance.now();
      const visible = Number(value ?? 0);
      this.visible.set(instanceId, visible);
      if (visible >= seq) return round(now - committedAt);
      if (now >= deadline) {
        const firstUnapplied = this.commits.get(visible + 1) ?? this.commits.get(this.firstSeq ?? seq) ?? committedAt;
        return round(now - firstUnapplied);
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 50);
    }
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
