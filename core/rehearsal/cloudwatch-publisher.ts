/**
 * CloudWatch's AWS/RDS metrics for the rehearsal's servers, and their lateness. The local
 * backend's sampler (core/backends/local/metrics.ts: SHOW GLOBAL STATUS, /proc and the replica-lag
 * heartbeat, once a second) runs against the servers of every cluster while it has any, and each
 * sample goes into moto's CloudWatch with PutMetricData (namespace AWS/RDS, dimension
 * DBInstanceIdentifier, the metric's CloudWatch unit), timestamped when it was taken but sent only
 * `lagS` seconds later: on AWS the datapoints of a minute appear one to three minutes after it,
 * so a collector that reads right after a step misses the end of it, and the rehearsal shows that.
 *
 * One difference, for steps of seconds rather than minutes: AWS/RDS publishes one value per minute,
 * the rehearsal publishes the per-second samples and lets CloudWatch aggregate them into the 60 s
 * periods the backend asks for (GetMetricData Period 60, Stat Average; moto averages the raw values
 * of a period as CloudWatch does). A minute's average is then the same; its completeness follows
 * the sample times, not the minute boundary.
 */
import { PutMetricDataCommand, type CloudWatchClient, type MetricDatum, type StandardUnit } from '@aws-sdk/client-cloudwatch';
import { SERVER_METRICS } from '../lake/rows';
import { ServerMetricsSampler, type MetricSample } from '../backends/local/metrics';
import { PostgresMetricsSampler } from '../backends/local/postgres-cluster';
import type { ClusterMembers } from './rds-emulation';

/** PutMetricData: "Each request is also limited to no more than 1000 different metrics" (CloudWatch API reference). */
const MAX_DATUMS_PER_PUT = 1000;

export interface CloudWatchPublisherOptions {
  readonly cloudwatch: CloudWatchClient;
  /** Seconds between a sample and its PutMetricData. */
  readonly lagS: number;
  readonly sampleIntervalMs?: number;
  readonly log?: (line: string) => void;
}

interface Watched {
  readonly sampler: Pick<ServerMetricsSampler, 'samples' | 'stop'>;
  /** Samples already queued. */
  taken: number;
  /** The CloudWatch datapoint of a sample (RDS DB instances publish other names), or undefined when the engine publishes none. */
  readonly datum: (s: MetricSample) => { metric: string; value: number; unit: string } | undefined;
}

/**
 * What an RDS DB instance (MySQL, MariaDB, PostgreSQL; not Aurora) publishes of the samplers'
 * metrics (CloudWatch User Guide, "Amazon RDS metrics and dimensions", rds-metricscollected.md):
 * CPU, connections, network, read/write IOPS, free memory; a read replica's lag as ReplicaLag in
 * seconds. The Aurora counters (Commit/DML/Select throughput, buffer cache hit ratio, deadlocks) it
 * does not have.
 */
function rdsInstanceDatum(s: MetricSample): { metric: string; value: number; unit: string } | undefined {
  if (s.metric === 'AuroraReplicaLag') return { metric: 'ReplicaLag', value: s.value / 1000, unit: SERVER_METRICS.ReplicaLag };
  const published = ['CPUUtilization', 'DatabaseConnections', 'NetworkReceiveThroughput', 'NetworkTransmitThroughput', 'ReadIOPS', 'WriteIOPS', 'FreeableMemory'];
  return published.includes(s.metric) ? { metric: s.metric, value: s.value, unit: SERVER_METRICS[s.metric] } : undefined;
}

const auroraDatum = (s: MetricSample) => ({ metric: s.metric, value: s.value, unit: SERVER_METRICS[s.metric] });

export class CloudWatchPublisher {
  private readonly watched = new Map<string, Watched>();
  private readonly queue: { dueMs: number; datum: MetricDatum }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private publishing: Promise<void> | undefined;
  private changes: Promise<void> = Promise.resolve();
  private stopped = false;
  published = 0;
  private readonly problems: string[] = [];

  constructor(private readonly o: CloudWatchPublisherOptions) {}

  start(): void {
    this.timer = setInterval(() => {
      if (!this.publishing) this.publishing = this.tick().finally(() => (this.publishing = undefined));
    }, 500);
  }

  /** Follows a cluster's available servers (rds-emulation's onMembersChanged): a new sampler per change. */
  membersChanged(m: ClusterMembers): Promise<void> {
    this.changes = this.changes
      .then(() => this.rewatch(m))
      .catch((e: unknown) => {
        this.problem(`${m.clusterId}: ${(e as Error).message}`);
      });
    return this.changes;
  }

  private async rewatch(m: ClusterMembers): Promise<void> {
    const previous = this.watched.get(m.clusterId);
    this.watched.delete(m.clusterId);
    if (previous) this.enqueue(previous, await previous.sampler.stop());
    if (this.stopped) return;
    const intervalMs = this.o.sampleIntervalMs ?? 1000;
    const datum = m.rdsInstances ? rdsInstanceDatum : auroraDatum;
    if (m.postgres?.writer) {
      const sampler = new PostgresMetricsSampler({ writer: m.postgres.writer, readers: m.postgres.readers, intervalMs });
      await sampler.start();
      this.watched.set(m.clusterId, { sampler, taken: 0, datum });
      return;
    }
    if (!m.writer) return;
    const sampler = new ServerMetricsSampler({ writer: m.writer, readers: m.readers, intervalMs });
    await sampler.start();
    this.watched.set(m.clusterId, { sampler, taken: 0, datum });
  }

  private enqueue(w: Watched, samples: readonly MetricSample[]): void {
    for (const s of samples.slice(w.taken)) {
      const at = Date.parse(s.ts);
      const d = w.datum(s);
      if (d === undefined) continue;
      this.queue.push({
        dueMs: at + this.o.lagS * 1000,
        datum: {
          MetricName: d.metric,
          Dimensions: [{ Name: 'DBInstanceIdentifier', Value: s.instanceId }],
          Timestamp: new Date(at),
          Value: d.value,
          Unit: d.unit as StandardUnit,
        },
      });
    }
    w.taken = samples.length;
  }

  private async tick(): Promise<void> {
    for (const w of this.watched.values()) this.enqueue(w, w.sampler.samples);
    const now = Date.now();
    const due = this.queue.filter((q) => q.dueMs <= now);
    if (due.length === 0) return;
    for (let i = 0; i < due.length; i += MAX_DATUMS_PER_PUT) {
      const batch = due.slice(i, i + MAX_DATUMS_PER_PUT);
      try {
        await this.o.cloudwatch.send(new PutMetricDataCommand({ Namespace: 'AWS/RDS', MetricData: batch.map((b) => b.datum) }));
        this.published += batch.length;
      } catch (e) {
        this.problem(`PutMetricData: ${(e as Error).message}`);
      }
    }
    const sent = new Set(due);
    const rest = this.queue.filter((q) => !sent.has(q));
    this.queue.length = 0;
    this.queue.push(...rest);
  }

  private problem(message: string): void {
    if (this.problems.length < 20) this.problems.push(message);
    this.o.log?.(`[rehearsal cloudwatch] ${message}`);
  }

  get errors(): readonly string[] {
    return this.problems;
  }

  /** Stops every sampler and the publishing (what is not due yet is never published, as on AWS after a delete). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.changes;
    await this.publishing;
    await Promise.all([...this.watched.values()].map((w) => w.sampler.stop()));
    this.watched.clear();
    this.queue.length = 0;
  }
}
