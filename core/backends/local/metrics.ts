/**
 * The local stand-in for CloudWatch, sampling each server of the cell every second of a run job.
 * The sampler's own statements are subtracted from Com_select and Com_update. Its own bytes are not.
 * Unlike Aurora replicas, MariaDB replicas count the writes they apply as their own DML and commits.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { ServerMetricName, ServerMetricRow } from '../../lake/rows';
import { SERVER_METRICS } from '../../lake/rows';
import { HeartbeatProbe } from './cluster';
import { sqlTarget, type ServerInfo } from './mariadb-server';
import { allowedCpuCount, processCpuSeconds } from './processes';
import { rowsToMap, SqlSession, type Row } from './sql-client';

export interface MetricSample {
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly metric: ServerMetricName;
  /** ISO time of the sample. */
  readonly ts: string;
  readonly value: number;
}

const STATUS_VARIABLES = [
  'Com_select',
  'Com_insert',
  'Com_insert_select',
  'Com_update',
  'Com_update_multi',
  'Com_delete',
  'Com_delete_multi',
  'Com_replace',
  'Com_replace_select',
  'Com_commit',
  'Bytes_sent',
  'Bytes_received',
  'Threads_connected',
  'Slaves_connected',
  'Innodb_buffer_pool_read_requests',
  'Innodb_buffer_pool_reads',
  'Innodb_deadlocks',
  'Innodb_data_reads',
  'Innodb_data_writes',
] as const;
type StatusName = (typeof STATUS_VARIABLES)[number];
const SHOW_STATUS = `SHOW GLOBAL STATUS WHERE Variable_name IN (${STATUS_VARIABLES.map((v) => `'${v}'`).join(',')})`;

/** How long stop() waits for a tick in flight. A healthy SHOW GLOBAL STATUS answers in milliseconds. */
const STOP_WAIT_MS = 2_000;

let clockTicksCache: number | undefined;
/** Kernel clock ticks per second for /proc/<pid>/stat times, almost always 100. */
export function clockTicks(): number {
  if (clockTicksCache === undefined) {
    try {
      clockTicksCache = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicksCache = 100;
    }
  }
  return clockTicksCache;
}

interface Snapshot {
  readonly at: number;
  readonly wall: Date;
  readonly status: Map<string, string>;
  readonly cpuSeconds: number | undefined;
  /** The sampler's own SELECTs and UPDATEs issued on this server before this snapshot. */
  readonly ownSelects: number;
  readonly ownUpdates: number;
  /** Heartbeats a reader applied so far. Each is one replicated UPDATE in Com_update. */
  readonly heartbeatsApplied: number | undefined;
}

interface Target {
  readonly info: ServerInfo;
  readonly session: SqlSession;
  readonly cores: number;
  ownSelects: number;
  ownUpdates: number;
  last?: Snapshot;
  /** Counts what it sends, so its own statements can be subtracted. */
  readonly exec: (sql: string) => Promise<Row[]>;
}

export interface SamplerOptions {
  readonly writer: ServerInfo;
  readonly readers: readonly ServerInfo[];
  readonly intervalMs?: number;
}

export class ServerMetricsSampler {
  private readonly targets: Target[];
  private readonly probe: HeartbeatProbe | undefined;
  private readonly intervalMs: number;
  private readonly collected: MetricSample[] = [];
  private readonly problems: string[] = [];
  /** Servers whose session got no answer within its deadline, with the message. */
  private readonly hung = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private nextDue = 0;

  constructor(options: SamplerOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.targets = [options.writer, ...options.readers].map((info) => {
      const session = new SqlSession(sqlTarget(info));
      const target: Target = {
        info,
        session,
        cores: allowedCpuCount(info.pid) ?? 1,
        ownSelects: 0,
        ownUpdates: 0,
        exec: (sql: string) => {
          // +1 for the marker SELECT the session appends to every statement.
          target.ownSelects += 1 + (/^\s*SELECT\b/i.test(sql) ? 1 : 0);
          target.ownUpdates += /^\s*UPDATE\b/i.test(sql) ? 1 : 0;
          return session.query(sql);
        },
      };
      return target;
    });
    const [writer, ...readers] = this.targets;
    this.probe =
      readers.length > 0 && writer
        ? new HeartbeatProbe(
            writer.exec,
            readers.map((r) => ({ instanceId: r.info.instanceId, exec: r.exec })),
            Math.floor(this.intervalMs * 0.8),
          )
        : undefined;
  }

  /** Takes the baseline snapshot and starts ticking. */
  async start(): Promise<void> {
    await this.tick(false);
    this.nextDue = performance.now() + this.intervalMs;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const wait = Math.max(0, this.nextDue - performance.now());
    this.timer = setTimeout(() => {
      this.running = this.tick(true).finally(() => {
        this.running = undefined;
        this.nextDue += this.intervalMs;
        // Skip ticks a slow sample overran instead of bunching them up.
        while (this.nextDue < performance.now()) this.nextDue += this.intervalMs;
        this.schedule();
      });
    }, wait);
  }

  private async tick(emit: boolean): Promise<void> {
    let lags = new Map<string, number>();
    if (this.probe) {
      try {
        lags = await this.probe.probe();
      } catch (e) {
        this.problem(`replica lag probe: ${(e as Error).message}`);
      }
    }
    await Promise.all(
      this.targets.map(async (t) => {
        if (t.session.closed) return;
        const ownSelects = t.ownSelects;
        const ownUpdates = t.ownUpdates;
        try {
          const rows = await t.exec(SHOW_STATUS);
          const snap: Snapshot = {
            at: performance.now(),
            wall: new Date(),
            status: rowsToMap(rows),
            cpuSeconds: processCpuSeconds(t.info.pid, clockTicks()),
            ownSelects,
            ownUpdates,
            heartbeatsApplied: this.probe?.visible.get(t.info.instanceId),
          };
          if (emit && t.last) this.emit(t, t.last, snap, lags.get(t.info.instanceId));
          t.last = snap;
        } catch (e) {
          this.problem(`${t.info.instanceId}: ${(e as Error).message}`);
          if (t.session.timedOut && !this.hung.has(t.info.instanceId))
            this.hung.set(t.info.instanceId, (e as Error).message);
        }
      }),
    );
  }

  private problem(message: string): void {
    if (this.problems.length < 20) this.problems.push(message);
  }

  private emit(t: Target, a: Snapshot, b: Snapshot, lagMs: number | undefined): void {
    const seconds = (b.at - a.at) / 1000;
    if (seconds <= 0) return;
    const n = (s: Snapshot, name: StatusName) => Number(s.status.get(name) ?? 0);
    const delta = (name: StatusName) => Math.max(0, n(b, name) - n(a, name));
    const rate = (v: number) => Math.max(0, v) / seconds;
    const ts = b.wall.toISOString();
    const push = (metric: ServerMetricName, value: number) =>
      this.collected.push({
        instanceId: t.info.instanceId,
        role: t.info.role,
        metric,
        ts,
        value: Math.round(value * 1000) / 1000,
      });

    if (a.cpuSeconds !== undefined && b.cpuSeconds !== undefined) {
      push('CPUUtilization', Math.min(100, ((b.cpuSeconds - a.cpuSeconds) / seconds / t.cores) * 100));
    }
    push('SelectThroughput', rate(delta('Com_select') - (b.ownSelects - a.ownSelects)));
    const dml =
      delta('Com_insert') +
      delta('Com_insert_select') +
      delta('Com_update') +
      delta('Com_update_multi') +
      delta('Com_delete') +
      delta('Com_delete_multi') +
      delta('Com_replace') +
      delta('Com_replace_select');
    // The replication applier counts the writer's heartbeat UPDATEs again on each reader.
    const replicatedHeartbeats =
      a.heartbeatsApplied !== undefined && b.heartbeatsApplied !== undefined
        ? b.heartbeatsApplied - a.heartbeatsApplied
        : 0;
    push('DMLThroughput', rate(dml - (b.ownUpdates - a.ownUpdates) - replicatedHeartbeats));
    push('CommitThroughput', rate(delta('Com_commit')));
    push('NetworkTransmitThroughput', rate(delta('Bytes_sent')));
    push('NetworkReceiveThroughput', rate(delta('Bytes_received')));
    push('DatabaseConnections', Math.max(0, n(b, 'Threads_connected') - 1 - n(b, 'Slaves_connected')));
    // CloudWatch has a BufferCacheHitRatio datapoint for every period, so every second gets a ratio.
    // A second without read requests reports the server's lifetime ratio.
    const requests = delta('Innodb_buffer_pool_read_requests');
    const lifetimeRequests = n(b, 'Innodb_buffer_pool_read_requests');
    if (requests > 0)
      push('BufferCacheHitRatio', 100 * (1 - Math.min(requests, delta('Innodb_buffer_pool_reads')) / requests));
    else if (lifetimeRequests > 0)
      push(
        'BufferCacheHitRatio',
        100 * (1 - Math.min(lifetimeRequests, n(b, 'Innodb_buffer_pool_reads')) / lifetimeRequests),
      );
    push('Deadlocks', rate(delta('Innodb_deadlocks')));
    push('ReadIOPS', rate(delta('Innodb_data_reads')));
    push('WriteIOPS', rate(delta('Innodb_data_writes')));
    if (t.info.role === 'reader' && lagMs !== undefined) push('AuroraReplicaLag', lagMs);
  }

  get samples(): readonly MetricSample[] {
    return this.collected;
  }

  /** Problems met while sampling, such as a server gone or a failed probe. */
  get errors(): readonly string[] {
    return this.problems;
  }

  /** The servers that stopped answering the sampler, with why, for the step's error. */
  get unresponsive(): ReadonlyMap<string, string> {
    return this.hung;
  }

  /**
   * Stops ticking, waits at most STOP_WAIT_MS for a tick in progress, and closes the sessions. Idempotent.
   * A tick blocked on a hung server is abandoned, since callers must not wait on a server that does not answer.
   */
  async stop(): Promise<readonly MetricSample[]> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    await Promise.all(this.targets.map((t) => t.session.close()));
    return this.collected;
  }
}

export interface RowContext {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly step_id: string;
  readonly dt: string;
}

/**
 * Samples as lake rows. With a window, only samples within it are kept, with one interval of slack each side.
 */
export function toServerMetricRows(
  samples: readonly MetricSample[],
  ctx: RowContext,
  window?: { start: string; end: string },
  slackMs = 1000,
): ServerMetricRow[] {
  const start = window ? Date.parse(window.start) - slackMs : -Infinity;
  const end = window ? Date.parse(window.end) + slackMs : Infinity;
  const inWindow = (ts: string) => {
    const t = Date.parse(ts);
    return !Number.isFinite(start) || !Number.isFinite(end) || (t >= start && t <= end);
  };
  return samples
    .filter((s) => inWindow(s.ts))
    .map((s) => ({
      ...ctx,
      instance_id: s.instanceId,
      role: s.role,
      metric: s.metric,
      ts: s.ts,
      value: s.value,
      unit: SERVER_METRICS[s.metric],
      source: 'local' as const,
    }));
}
