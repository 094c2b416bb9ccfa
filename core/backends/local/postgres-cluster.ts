/**
 * A cell of a PostgreSQL engine on this machine: a primary and N streaming replicas.
 * A 1 s sampler turns pg_stat_* and /proc into the CloudWatch metrics Aurora publishes for Aurora PostgreSQL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { PlanNote, ResolvedVariant } from '../../plan/types';
import { formatBytes, type LocalInstanceShape } from './instance-classes';
import type { MetricSample } from './metrics';
import { clockTicks } from './metrics';
import { allowedCpuCount } from './processes';
import { evaluateFormula, isFormula } from '../../aurora/rds-formula';
import {
  baseBackup,
  openPathFor,
  PG_CONF_INCLUDE,
  pgQuery,
  preparePostgresDir,
  startPostgres,
  type PgSettingsCatalog,
  type PgTarget,
  type PostgresServer,
  type PostgresTemplate,
  type PostgresTools,
} from './postgres-server';

/**
 * Settings aurora-bench sets itself, and those naming files. A spec value for them is noted, not applied.
 * @internal exported for its tests
 */
export const MANAGED_PG_SETTINGS: ReadonlySet<string> = new Set([
  'port',
  'listen_addresses',
  'unix_socket_directories',
  'data_directory',
  'config_file',
  'hba_file',
  'ident_file',
  'wal_level',
  'max_wal_senders',
  'hot_standby',
  'primary_conninfo',
  'primary_slot_name',
  'logging_collector',
  'archive_mode',
  'archive_command',
  'restore_command',
  // Every other setting that names a file, a directory, a library or a command the server would use.
  // A spec must not make the server write outside its run directory or run what it names.
  // The list follows `postgres --describe-config` of PostgreSQL 15.
  'external_pid_file',
  'extension_destdir',
  'log_directory',
  'log_filename',
  'event_source',
  'dynamic_library_path',
  'shared_preload_libraries',
  'local_preload_libraries',
  'session_preload_libraries',
  'jit_provider',
  'archive_library',
  'archive_cleanup_command',
  'recovery_end_command',
  'promote_trigger_file',
  'krb_server_keyfile',
  'ssl_ca_file',
  'ssl_cert_file',
  'ssl_crl_dir',
  'ssl_crl_file',
  'ssl_dh_params_file',
  'ssl_key_file',
  'ssl_passphrase_command',
  'stats_temp_directory',
]);

/** PostgreSQL reserves shared memory per connection slot. */
const LOCAL_MAX_CONNECTIONS = 500;

export interface PgParameterPlan {
  /** The aurora_bench.conf lines. The spec's values come after the local defaults, so they win. */
  readonly conf: string;
  /** The spec's own values, as written. */
  readonly applied: Readonly<Record<string, string>>;
  readonly notes: readonly PlanNote[];
}

const quoteConf = (v: string) => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/**
 * A variant's parameters for one role, checked against the version's pg_settings.
 * Aurora-only names and names PostgreSQL lacks are noted and left out.
 * An unknown name in postgresql.conf would stop the server.
 * RDS formulas are evaluated with the local shape.
 */
export function planPostgresParameters(ctx: {
  variant: ResolvedVariant;
  shape: LocalInstanceShape;
  settings: PgSettingsCatalog;
  version: string;
  role: 'writer' | 'reader';
}): PgParameterPlan {
  const notes: PlanNote[] = [];
  const at = (level: string, name: string) => `variants[name=${ctx.variant.name}].${level}Parameters.${name}`;
  const lines = [
    '# aurora-bench local defaults for the instance class',
    // RDS for PostgreSQL's default shared_buffers is {DBInstanceClassMemory/32768} 8 kB pages. That is a quarter.
    `shared_buffers = '${Math.max(16, Math.floor(ctx.shape.localMemoryBytes / 4 / 1048576))}MB'`,
    `max_connections = ${Math.min(ctx.shape.maxConnections, LOCAL_MAX_CONNECTIONS)}`,
    "# the spec's parameters",
  ];
  const applied: Record<string, string> = {};
  const merged = new Map<string, { level: string; value: string | number | boolean }>();
  for (const [name, value] of Object.entries(ctx.variant.clusterParameters))
    merged.set(name, { level: 'cluster', value });
  for (const [name, value] of Object.entries(ctx.variant.instanceParameters))
    merged.set(name, { level: 'instance', value });
  for (const [name, { level, value }] of merged) {
    const path = at(level, name);
    if (/^(apg_|aurora_|rds\.|apg\.)/.test(name)) {
      notes.push({
        level: 'warning',
        path,
        message:
          `not applicable locally: ${name} is an Aurora/RDS-only parameter (PostgreSQL ${ctx.version} ` +
          `has no such setting)`,
      });
      continue;
    }
    if (MANAGED_PG_SETTINGS.has(name)) {
      notes.push({
        level: 'warning',
        path,
        message: `not applied locally: ${name} is managed by the local backend (ports, sockets, replication, files)`,
      });
      continue;
    }
    const setting = ctx.settings[name];
    if (setting === undefined) {
      notes.push({
        level: 'warning',
        path,
        message: `not applicable locally: PostgreSQL ${ctx.version} has no setting "${name}" (pg_settings)`,
      });
      continue;
    }
    let text = typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value);
    if (typeof value === 'string' && isFormula(value)) {
      try {
        text = String(
          Math.floor(
            evaluateFormula(value, {
              DBInstanceClassMemory: ctx.shape.localMemoryBytes,
              DBInstanceVCPU: ctx.shape.cores,
            }),
          ),
        );
        notes.push({
          level: 'info',
          path,
          message:
            `${value} evaluated with the local shape ` +
            `(DBInstanceClassMemory ${formatBytes(ctx.shape.localMemoryBytes)}, ` +
            `DBInstanceVCPU ${ctx.shape.cores}) = ${text}`,
        });
      } catch (e) {
        notes.push({ level: 'warning', path, message: `not applied locally: ${(e as Error).message}` });
        continue;
      }
    }
    if (setting.vartype === 'bool' && !/^(on|off|true|false|yes|no|1|0)$/i.test(text)) {
      notes.push({ level: 'warning', path, message: `not applied locally: ${name} is a boolean, got "${text}"` });
      continue;
    }
    if (setting.vartype === 'enum' && setting.enumvals && !setting.enumvals.includes(text.toLowerCase())) {
      notes.push({
        level: 'warning',
        path,
        message: `not applied locally: ${name} must be one of ${setting.enumvals.join(', ')}, got "${text}"`,
      });
      continue;
    }
    if ((setting.vartype === 'integer' || setting.vartype === 'real') && /^-?\d+(\.\d+)?$/.test(text)) {
      const n = Number(text);
      if ((setting.min !== null && n < setting.min) || (setting.max !== null && n > setting.max)) {
        notes.push({
          level: 'warning',
          path,
          message:
            `not applied locally: ${name}=${text} is outside PostgreSQL's ` +
            `range ${setting.min ?? '-'}..${setting.max ?? '-'}${setting.unit ? ` (${setting.unit})` : ''}`,
        });
        continue;
      }
    }
    lines.push(`${name} = ${quoteConf(text)}`);
    applied[name] = text;
  }
  return { conf: lines.join('\n') + '\n', applied, notes };
}

/**
 * Reads back every applied setting from pg_settings, and any line pg_file_settings refused.
 */
export async function verifyPostgresParameters(
  server: PostgresServer,
  variantName: string,
  plan: PgParameterPlan,
): Promise<PlanNote[]> {
  const names = Object.keys(plan.applied);
  const notes: PlanNote[] = [];
  const target = targetOf(server);
  const errors = await pgQuery(
    target,
    `SELECT name, error FROM pg_file_settings WHERE error IS NOT NULL AND sourcefile LIKE '%${PG_CONF_INCLUDE}'`,
  );
  for (const [name, error] of errors)
    notes.push({
      level: 'warning',
      path: `variants[name=${variantName}].parameters.${name ?? ''}`,
      message: `${server.instanceId}: PostgreSQL did not apply ${name ?? ''}: ${error ?? ''}`,
    });
  if (names.length === 0) return notes;
  const rows = await pgQuery(
    target,
    `SELECT name, setting, coalesce(unit, ''), source FROM pg_settings WHERE name IN ` +
      `(${names.map((n) => `'${n}'`).join(',')}) ORDER BY name`,
  );
  notes.push({
    level: 'info',
    path: `variants[name=${variantName}].parameters`,
    message:
      `${server.instanceId} (PostgreSQL) runs ` +
      `with ` +
      rows
        .map(
          ([n, s, u, src]) =>
            `${n ?? ''}=${s ?? ''}${u ? ` ${u}` : ''}${src === 'configuration file' ? '' : ` (from ${src ?? '?'})`}`,
        )
        .join(', '),
  });
  return notes;
}

function targetOf(s: PostgresServer, database = 'sbtest'): PgTarget {
  return { bindir: s.bindir, socketDir: s.socketDir, port: s.port, database };
}

export interface PostgresCluster {
  readonly clusterId: string;
  readonly writer: PostgresServer;
  readonly readers: readonly PostgresServer[];
}

export interface StartPostgresClusterOptions {
  readonly tools: PostgresTools;
  readonly template: PostgresTemplate;
  readonly clusterId: string;
  /** The cell directory. Servers go to <dir>/w, <dir>/r1, ... */
  readonly dir: string;
  /** The backend's run root, which holds `dir`. The directories from it down are opened to the postgres user. */
  readonly runRoot: string;
  readonly readers: number;
  readonly conf: (role: 'writer' | 'reader') => string;
  readonly cpuList: (slot: number) => string | undefined;
  readonly onServerStarted: (s: PostgresServer) => Promise<void>;
}

/**
 * The primary from the template, then each replica from a base backup of it.
 */
export async function startPostgresCluster(o: StartPostgresClusterOptions): Promise<PostgresCluster> {
  await openPathFor(o.tools, o.dir, o.runRoot);
  const wdir = join(o.dir, 'w');
  const wdata = await preparePostgresDir(o.tools, wdir, o.template.datadir);
  await writeFile(join(wdata, PG_CONF_INCLUDE), o.conf('writer'));
  const writer = await startPostgres({
    tools: o.tools,
    instanceId: `${o.clusterId}-w`,
    role: 'writer',
    dir: wdir,
    datadir: wdata,
    cpuList: o.cpuList(0),
  });
  await o.onServerStarted(writer);
  const readers: PostgresServer[] = [];
  for (let i = 1; i <= o.readers; i++) {
    const rdir = join(o.dir, `r${i}`);
    const rdata = await preparePostgresDir(o.tools, rdir);
    await baseBackup(o.tools, writer, rdata);
    await writeFile(join(rdata, PG_CONF_INCLUDE), o.conf('reader'));
    await preparePostgresDir(o.tools, rdir);
    const instanceId = `${o.clusterId}-r${i}`;
    const reader = await startPostgres({
      tools: o.tools,
      instanceId,
      role: 'reader',
      dir: rdir,
      datadir: rdata,
      cpuList: o.cpuList(i),
      // Named, so pg_stat_replication on the primary tells the replicas apart.
      managed: {
        primary_conninfo: `host=${writer.socketDir} port=${writer.port} user=postgres application_name=${instanceId}`,
      },
    });
    await o.onServerStarted(reader);
    readers.push(reader);
  }
  return { clusterId: o.clusterId, writer, readers };
}

export interface PgReplicaStatus {
  readonly instanceId: string;
  readonly state: string;
  readonly caughtUp: boolean;
  readonly replayLsn: string;
}

/** Each replica's walsender on the primary: streaming, and replayed up to the primary's current WAL position. */
export async function postgresReplicationStatus(
  c: PostgresCluster,
): Promise<{ writerLsn: string; replicas: PgReplicaStatus[] }> {
  const rows = await pgQuery(
    targetOf(c.writer),
    "SELECT pg_current_wal_lsn()::text, application_name, state, coalesce(replay_lsn::text, ''), " +
      'coalesce(replay_lsn >= pg_current_wal_lsn(), false) FROM (SELECT 1) one LEFT JOIN pg_stat_replication ON true',
  );
  const writerLsn = rows[0]?.[0] ?? '';
  const byName = new Map(rows.filter((r) => r[1]).map((r) => [r[1]!, r]));
  return {
    writerLsn,
    replicas: c.readers.map((r) => {
      const row = byName.get(r.instanceId);
      return {
        instanceId: r.instanceId,
        state: row?.[2] ?? 'not connected',
        replayLsn: row?.[3] ?? '',
        caughtUp: row?.[2] === 'streaming' && row[4] === 't',
      };
    }),
  };
}

interface PgCounters {
  readonly t: number;
  readonly commits: number;
  readonly deadlocks: number;
  readonly blksRead: number;
  readonly blksHit: number;
  readonly connections: number;
  readonly cpuS: number;
  /** Undefined where pg_stat_bgwriter lacks the columns, as on PostgreSQL 17. There is no WriteIOPS then. */
  readonly blocksWritten: number | undefined;
}

const COUNTERS_SQL =
  'SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::bigint, (SELECT sum(deadlocks) FROM ' +
  'pg_stat_database)::bigint, (SELECT sum(blks_read) FROM pg_stat_database)::bigint, (SELECT sum(blks_hit) ' +
  "FROM pg_stat_database)::bigint, (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client " +
  "backend' AND pid <> pg_backend_pid())";

/**
 * Data blocks written by the checkpointer, the background writer and backends.
 * PostgreSQL 17 moved these columns out of pg_stat_bgwriter.
 */
const BLOCKS_WRITTEN_SQL =
  'SELECT (buffers_checkpoint + buffers_clean + buffers_backend)::bigint FROM pg_stat_bgwriter';

/**
 * CPU seconds of a postmaster and everything it started, reaped or live.
 */
function postgresCpuSeconds(postmasterPid: number, ticks: number): number | undefined {
  const fields = (pid: number): string[] | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch {
      return undefined;
    }
  };
  const own = fields(postmasterPid);
  if (!own) return undefined;
  // Fields after ") " in /proc/PID/stat, counted from 0: utime is 11, stime 12, cutime 13, cstime 14.
  let total = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = fields(Number(entry));
    if (f && Number(f[1]) === postmasterPid) total += Number(f[11]) + Number(f[12]);
  }
  return total / ticks;
}

/**
 * The sampler: one SQL statement per server a second, /proc, and the heartbeat.
 * It makes only the metrics the Aurora User Guide lists for both Aurora MySQL and Aurora PostgreSQL.
 * See AWS, "Amazon CloudWatch metrics for Amazon Aurora".
 * PostgreSQL keeps no network counters per server, so there is no network throughput.
 * Replicas count nothing of the primary's WAL as their own transactions, unlike MariaDB's.
 * The heartbeat's resolution is one psql round trip, about 10-30 ms here.
 */
export class PostgresMetricsSampler {
  private readonly collected: MetricSample[] = [];
  private readonly previous = new Map<string, PgCounters>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private heartbeatSeq = 0;
  /** Heartbeat polls each reader answered this second. They are subtracted from CommitThroughput. */
  private readonly polls = new Map<string, number>();

  constructor(
    private readonly options: { writer: PostgresServer; readers: readonly PostgresServer[]; intervalMs: number },
  ) {}

  private servers(): PostgresServer[] {
    return [this.options.writer, ...this.options.readers];
  }

  private async counters(s: PostgresServer): Promise<PgCounters | undefined> {
    const t = performance.now();
    const cpuS = postgresCpuSeconds(s.pid, clockTicks());
    try {
      const [row] = await pgQuery(targetOf(s), COUNTERS_SQL, { timeoutMs: 5_000 });
      if (!row || cpuS === undefined) return undefined;
      const n = (i: number) => Number(row[i] ?? 0);
      return {
        t,
        commits: n(0),
        deadlocks: n(1),
        blksRead: n(2),
        blksHit: n(3),
        connections: n(4),
        cpuS,
        blocksWritten: await this.blocksWritten(s),
      };
    } catch {
      return undefined;
    }
  }

  private writesUnavailable = false;

  /** Blocks written so far. Once the server's version lacks the columns, it is asked no more. */
  private async blocksWritten(s: PostgresServer): Promise<number | undefined> {
    if (this.writesUnavailable) return undefined;
    try {
      const [row] = await pgQuery(targetOf(s), BLOCKS_WRITTEN_SQL, { timeoutMs: 5_000 });
      return row?.[0] === undefined || row[0] === null ? undefined : Number(row[0]);
    } catch {
      this.writesUnavailable = true;
      return undefined;
    }
  }

  /** Writer heartbeat, then each reader polled until it shows it. Commit to visible, in ms. */
  private async replicaLag(): Promise<Map<string, number>> {
    const lag = new Map<string, number>();
    this.polls.clear();
    if (this.options.readers.length === 0) return lag;
    this.heartbeatSeq += 1;
    const seq = this.heartbeatSeq;
    try {
      await pgQuery(
        targetOf(this.options.writer),
        `UPDATE aurora_bench.heartbeat SET seq = ${seq}, at = clock_timestamp() WHERE id = 1`,
        { timeoutMs: 5_000 },
      );
    } catch {
      return lag;
    }
    const committed = performance.now();
    const giveUp = committed + this.options.intervalMs * 0.8;
    await Promise.all(
      this.options.readers.map(async (r) => {
        for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
          try {
            const [row] = await pgQuery(targetOf(r), 'SELECT seq FROM aurora_bench.heartbeat WHERE id = 1', {
              timeoutMs: 5_000,
            });
            this.polls.set(r.instanceId, (this.polls.get(r.instanceId) ?? 0) + 1);
            if (Number(row?.[0] ?? -1) >= seq) {
              lag.set(r.instanceId, performance.now() - committed);
              return;
            }
          } catch {
            // A replica that does not answer has no sample this second.
          }
          if (performance.now() > giveUp) {
            lag.set(r.instanceId, performance.now() - committed);
            return;
          }
          await new Promise((res) => setTimeout(res, wait));
        }
      }),
    );
    return lag;
  }

  private async tick(): Promise<void> {
    const ts = new Date().toISOString();
    const lag = await this.replicaLag();
    const heartbeatXacts = lag.size > 0 ? 1 : 0;
    for (const s of this.servers()) {
      const now = await this.counters(s);
      if (!now) continue;
      const before = this.previous.get(s.instanceId);
      this.previous.set(s.instanceId, now);
      const push = (metric: MetricSample['metric'], value: number) =>
        this.collected.push({ instanceId: s.instanceId, role: s.role, metric, ts, value });
      push('DatabaseConnections', now.connections);
      if (s.role === 'reader' && lag.has(s.instanceId))
        push('AuroraReplicaLag', Math.round(lag.get(s.instanceId)! * 10) / 10);
      if (!before) continue;
      const dt = (now.t - before.t) / 1000;
      if (dt <= 0) continue;
      // The sampler's own transactions: its counters statement,
      // the heartbeat UPDATE on the writer, and the polls on readers.
      const own = 1 + (s.role === 'writer' ? heartbeatXacts : (this.polls.get(s.instanceId) ?? 0));
      push('CommitThroughput', Math.max(0, now.commits - before.commits - own) / dt);
      push('Deadlocks', (now.deadlocks - before.deadlocks) / dt);
      const reads = now.blksRead - before.blksRead;
      const hits = now.blksHit - before.blksHit;
      // CloudWatch has a datapoint for every period, so every second gets a ratio.
      // A second without reads reports the database's lifetime ratio.
      if (reads + hits > 0) push('BufferCacheHitRatio', (100 * hits) / (reads + hits));
      else if (now.blksRead + now.blksHit > 0)
        push('BufferCacheHitRatio', (100 * now.blksHit) / (now.blksRead + now.blksHit));
      push('ReadIOPS', Math.max(0, reads) / dt);
      if (now.blocksWritten !== undefined && before.blocksWritten !== undefined)
        push('WriteIOPS', Math.max(0, now.blocksWritten - before.blocksWritten) / dt);
      const cpus = allowedCpuCount(s.pid) ?? 1;
      push('CPUUtilization', Math.min(100, ((now.cpuS - before.cpuS) / dt / cpus) * 100));
    }
  }

  async start(): Promise<void> {
    // The first snapshot comes before the load starts, so the first interval has its deltas.
    await this.tick();
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = this.tick().finally(loop);
      }, this.options.intervalMs);
    };
    loop();
  }

  /** What was sampled so far. The rehearsal's CloudWatch publisher reads it while the sampler runs. */
  get samples(): readonly MetricSample[] {
    return this.collected;
  }

  async stop(): Promise<readonly MetricSample[]> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    return this.collected;
  }
}
