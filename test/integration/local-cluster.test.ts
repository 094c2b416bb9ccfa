/**
 * A real local cluster (mariadbd writer + 2 readers, GTID replication) built the way the local
 * backend builds one: template copies, planned parameters, heartbeat lag, teardown.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replicationStatus, startCluster, type ClusterInfo } from '../../core/backends/local/cluster';
import { measureReplicaLag, stopCluster } from '../helpers/local-cluster';
import { listening } from '../helpers/server-processes';
import { localShape } from '../../core/backends/local/instance-classes';
import {
  queryServer,
  ServerStartError,
  startServerFromTemplate,
  stopServer,
} from '../../core/backends/local/mariadb-server';
import {
  applyDynamicParameters,
  planParameters,
  verifyParameters,
  type ParameterPlan,
} from '../../core/backends/local/parameters';
import { checkLocalDependencies, type LocalVersions } from '../../core/backends/local/preflight';
import { allowedCpuCount, findFreePort, isAlive, processCmdline } from '../../core/backends/local/processes';
import { query, SqlError } from '../../core/backends/local/sql-client';
import { ensureTemplate, LOCAL_LOGINS, type ServerTemplate } from '../../core/backends/local/template';
import type { PlanNote, ResolvedVariant } from '../../core/plan/types';

const VARIANT: ResolvedVariant = {
  name: 'pool',
  instanceClass: 'db.r6g.large',
  readers: 2,
  clusterParameters: { aurora_fwd_writer_idle_timeout: 60, sync_binlog: 1000, max_prepared_stmt_count: 1048576 },
  instanceParameters: { thread_handling: 'pool-of-threads', innodb_flush_log_at_trx_commit: 2 },
  performanceInsights: false,
  clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
};

let versions: LocalVersions;
let template: ServerTemplate;
let root: string;
let cluster: ClusterInfo | undefined;
let plans: Record<'writer' | 'reader', ParameterPlan>;
const notes: PlanNote[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The benchmark login over TCP, as sysbench connects. */
function sbtestTarget(port: number) {
  const file = join(root, `sbtest-${port}.cnf`);
  writeFileSync(
    file,
    `[client]\nuser=${LOCAL_LOGINS.sbtest.user}\npassword=${LOCAL_LOGINS.sbtest.password}\nhost=127.0.0.1\n` +
      `port=${port}\nprotocol=tcp\ndatabase=sbtest\n`,
  );
  return { client: versions.tools.client, clientDefaultsFile: file };
}

beforeAll(async () => {
  versions = await checkLocalDependencies();
  template = await ensureTemplate(versions.tools, versions.serverVersion);
  root = mkdtempSync(join(tmpdir(), 'ab-cluster-'));
  const ctx = {
    variant: VARIANT,
    shape: localShape(VARIANT.instanceClass),
    catalog: template.catalog,
    serverVersion: versions.serverVersion,
  };
  plans = { writer: planParameters({ ...ctx, role: 'writer' }), reader: planParameters({ ...ctx, role: 'reader' }) };
  notes.push(...plans.writer.notes);
  cluster = await startCluster({
    tools: versions.tools,
    template,
    clusterId: 'pool-r1',
    dir: join(root, 'c'),
    readers: 2,
    serverOptions: (role) => plans[role].startup,
  });
  for (const s of [cluster.writer, ...cluster.readers]) {
    notes.push(...(await applyDynamicParameters(s, plans[s.role], template.catalog)));
    notes.push(...(await verifyParameters(s, plans[s.role], template.catalog)).notes);
  }
});

afterAll(async () => {
  if (cluster) await stopCluster(cluster, 5_000);
  rmSync(root, { recursive: true, force: true });
});

describe('local cluster', () => {
  it('replicates a write on the writer to both readers', async () => {
    // Arrange
    const c = cluster!;

    // Act
    await queryServer(
      c.writer,
      'CREATE TABLE sbtest.replicated (id INT PRIMARY KEY, note VARCHAR(20)); INSERT INTO sbtest.replicated ' +
        'VALUES (1, "from the writer")',
    );
    const status = await until('readers to catch up', async () => {
      const s = await replicationStatus(c);
      return s.replicas.every((r) => r.caughtUp) ? s : undefined;
    });

    // Assert
    expect(status.replicas.map((r) => [r.ioRunning, r.sqlRunning])).toEqual([
      ['Yes', 'Yes'],
      ['Yes', 'Yes'],
    ]);
    for (const reader of c.readers) {
      expect(await queryServer(reader, 'SELECT id, note FROM sbtest.replicated')).toEqual([['1', 'from the writer']]);
    }
  });

  it('lets the benchmark user log in over TCP, writes on the writer and only reads on readers', async () => {
    // Arrange
    const c = cluster!;

    // Act
    await query(
      sbtestTarget(c.writer.port),
      'CREATE TABLE IF NOT EXISTS t_login (id INT PRIMARY KEY); REPLACE INTO t_login VALUES (1)',
    );
    const onReader = query(sbtestTarget(c.readers[0]!.port), 'INSERT INTO replicated VALUES (2, "on a reader")');

    // Assert
    await expect(onReader).rejects.toThrow(SqlError);
    await expect(onReader).rejects.toMatchObject({ errno: 1290 }); // ER_OPTION_PREVENTS_STATEMENT: --read-only
  });

  it('measures replica lag in ms, and a stopped replica as lagging', async () => {
    // Arrange
    const c = cluster!;
    const stopped = c.readers[1]!;

    // Act
    const healthy = await measureReplicaLag(c);
    await queryServer(stopped, 'STOP SLAVE SQL_THREAD');
    let lagging: Map<string, number>;
    try {
      lagging = await measureReplicaLag(c, 300);
    } finally {
      await queryServer(stopped, 'START SLAVE SQL_THREAD');
    }

    // Assert
    for (const r of c.readers) {
      expect(Number.isFinite(healthy.get(r.instanceId))).toBe(true);
      expect(healthy.get(r.instanceId)).toBeGreaterThanOrEqual(0);
    }
    expect(lagging.get(stopped.instanceId)).toBeGreaterThanOrEqual(300);
  });

  it('applies the parameters MariaDB has (thread pool on) and reports the Aurora-only ones', async () => {
    // Arrange
    const c = cluster!;

    // Act
    const values = await Promise.all(
      [c.writer, ...c.readers].map((s) =>
        queryServer(
          s,
          'SELECT @@thread_handling, @@sync_binlog, @@max_prepared_stmt_count, ' +
            '@@innodb_flush_log_at_trx_commit, @@innodb_buffer_pool_size, @@max_connections, @@read_only',
        ),
      ),
    );
    const [[poolThreads]] = (await queryServer(
      c.writer,
      "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADPOOL_THREADS'",
    )) as [[string]];

    // Assert
    expect(values.map((v) => v[0])).toEqual([
      ['pool-of-threads', '1000', '1048576', '2', String(192 * 1024 * 1024), '1000', '0'],
      ['pool-of-threads', '1000', '1048576', '2', String(192 * 1024 * 1024), '1000', '1'],
      ['pool-of-threads', '1000', '1048576', '2', String(192 * 1024 * 1024), '1000', '1'],
    ]);
    expect(Number(poolThreads)).toBeGreaterThan(0);
    const [[running]] = (await queryServer(c.writer, 'SELECT VERSION()')) as [[string]];
    // preflight reports what runs (VERSION() adds -log with a binlog)
    expect(running.startsWith(versions.serverVersion)).toBe(true);
    expect(notes).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        path: 'variants[name=pool].clusterParameters.aurora_fwd_writer_idle_timeout',
        message: expect.stringMatching(/^not applicable locally/),
      }),
    );
    expect(notes.filter((n) => /not applied|adjusted/.test(n.message))).toEqual([]);
  });

  it('starts on another port when the one it picked is taken', async () => {
    // Arrange: a port held by someone else, offered first.
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const busyPort = (busy.address() as { port: number }).port;
    const offered: number[] = [];
    const findPort = async () => {
      const port = offered.length === 0 ? busyPort : await findFreePort();
      offered.push(port);
      return port;
    };
    const dir = join(root, 'port-race');

    // Act
    let server;
    try {
      server = await startServerFromTemplate(template.datadir, {
        tools: versions.tools,
        instanceId: 'race-w',
        role: 'writer',
        serverId: 1,
        dir,
        admin: LOCAL_LOGINS.admin,
        findPort,
      });
    } finally {
      busy.close();
    }

    // Assert
    try {
      expect(offered[0]).toBe(busyPort);
      expect(server.info.port).toBe(offered[1]);
      expect(await queryServer(server.info, 'SELECT @@port')).toEqual([[String(offered[1])]]);
    } finally {
      await stopServer(server.info, { graceMs: 5_000 });
    }
  });

  it('gives up with the bind error when every port it tries is taken', async () => {
    // Arrange
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const busyPort = (busy.address() as { port: number }).port;
    const dir = join(root, 'port-taken');

    // Act
    const start = startServerFromTemplate(template.datadir, {
      tools: versions.tools,
      instanceId: 'taken-w',
      role: 'writer',
      serverId: 1,
      dir,
      admin: LOCAL_LOGINS.admin,
      findPort: () => Promise.resolve(busyPort),
      portAttempts: 2,
    });

    // Assert
    try {
      await expect(start).rejects.toThrow(ServerStartError);
      await expect(start).rejects.toThrow(/Address already in use/);
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pins a server to its CPUs with taskset', async () => {
    // Arrange
    if (!versions.tools.taskset) throw new Error('taskset (util-linux) is required for this test');
    const dir = join(root, 'pinned');

    // Act
    const server = await startServerFromTemplate(template.datadir, {
      tools: versions.tools,
      instanceId: 'pinned-w',
      role: 'writer',
      serverId: 1,
      dir,
      admin: LOCAL_LOGINS.admin,
      cpuList: '0',
    });

    // Assert
    try {
      expect(server.info.cpuList).toBe('0');
      expect(allowedCpuCount(server.info.pid)).toBe(1);
      expect(processCmdline(server.info.pid)?.[0]).toMatch(/mariadbd$/); // taskset exec'd the server: same pid
    } finally {
      await stopServer(server.info, { graceMs: 5_000 });
    }
  });

  it('tears down without leaving a process, a port or a directory', async () => {
    // Arrange
    const c = cluster!;
    const members = [c.writer, ...c.readers];

    // Act
    const outcomes = await stopCluster(c, 15_000);
    cluster = undefined;

    // Assert
    expect(Object.values(outcomes)).toEqual(['terminated', 'terminated', 'terminated']);
    for (const s of members) {
      expect(isAlive(s.pid)).toBe(false);
      expect(await listening(s.port)).toBe(false);
      expect(existsSync(s.dir)).toBe(false);
    }
  });
});
