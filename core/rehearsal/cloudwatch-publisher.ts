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
 * the rehearsal publishes the per-second samples and lets CloudWatch aggregate them into the periods
 * the backend asks for (Period 60 on AWS, AwsBackendConfig.metricsPeriodS in the rehearsal; Stat
 * Average; moto averages the raw values of a period as CloudWatch does). A period's completeness
 * then follows the sample times.
 *
 * A self-managed variant's server instances (ssm-agent.ts, once client/server-setup.sh reported
 * ready) get what EC2 publishes under AWS/EC2, dimension InstanceId (EC2 User Guide, "List the
 * available CloudWatch metrics for your instances"): CPUUtilization (Percent), NetworkIn/NetworkOut
 * (bytes in the period) and EBSReadOps/EBSWriteOps (operations in the period). A per-second sample
 * of a rate becomes that second's bytes or operations, so CloudWatch's Sum over a period is the
 * period's total, as EC2's own datapoint is. They also get what the CloudWatch agent publishes on a
 * real server instance (client/server-metrics-agent.sh, client/cloudwatch-agent.json): namespace
 * CWAgent, metric mem_available (Bytes), dimension InstanceId alone (CloudWatch User Guide,
 * metrics-collected-by-CloudWatch-agent.md). An emulated instance is a mariadbd on this machine and
 * shares this machine's memory, so its value is this machine's MemAvailable (/proc/meminfo, kB), one
 * datapoint per CPU sample: a figure of the host, not of the instance.
 *
 * An Aurora Serverless v2 instance (a db.serverless cluster: ClusterMembers.serverlessMaxAcu) stands
 * in as a server of its largest capacity that never scales (rds-emulation.ts), so with each CPU
 * sample it publishes what such an instance would: ServerlessDatabaseCapacity at the cluster's
 * MaxCapacity (Count) and ACUUtilization 100 (Percent; capacity over the maximum, Aurora User
 * Guide, "Aurora Serverless v2 capacity"). The API path (the metrics asked for, collected, written)
 * is AWS's; the values say only that nothing scaled.
 *
 * An Aurora cluster (not an RDS DB instance) also gets its volume's VolumeReadIOPs/VolumeWriteIOPs,
 * one datapoint per interval of `volumePeriodS`, published only once the interval has closed
 * (volume-intervals.ts).
 */
import { readFileSync } from 'node:fs';
import {
  PutMetricDataCommand,
  type CloudWatchClient,
  type MetricDatum,
  type StandardUnit,
} from '@aws-sdk/client-cloudwatch';
import { SERVER_METRICS, type ServerMetricName } from '../lake/rows';
import { ec2Sources, familyMetrics } from '../metrics/lists';
import { ServerMetricsSampler, type MetricSample } from '../backends/local/metrics';
import { PostgresMetricsSampler } from '../backends/local/postgres-cluster';
import type { ServerInfo } from '../backends/local/mariadb-server';
import type { ClusterMembers } from './rds-emulation';
import { VolumeIntervals } from './volume-intervals';

/** PutMetricData: "Each request is also limited to no more than 1000 different metrics" (CloudWatch API reference). */
const MAX_DATUMS_PER_PUT = 1000;

export interface CloudWatchPublisherOptions {
  readonly cloudwatch: CloudWatchClient;
  /** Seconds between a sample and its PutMetricData. */
  readonly lagS: number;
  /** The interval of an Aurora cluster volume's I/O datapoints (AwsBackendConfig.volumeMetricsPeriodS). */
  readonly volumePeriodS: number;
  readonly sampleIntervalMs?: number;
  readonly log?: (line: string) => void;
}

interface Watched {
  readonly sampler: Pick<ServerMetricsSampler, 'samples' | 'stop'>;
  /** Samples already queued. */
  taken: number;
  /**
   * The CloudWatch datapoint of a sample (RDS DB instances publish
   * other names), or undefined when the engine publishes none.
   */
  readonly datum: (s: MetricSample) => { metric: string; value: number; unit: string } | undefined;
  readonly namespace: 'AWS/RDS' | 'AWS/EC2';
  readonly dimension: 'DBInstanceIdentifier' | 'InstanceId';
  /** An EC2 server instance: the CloudWatch agent's memory datapoint goes with each CPU sample. */
  readonly agentMemory?: boolean;
  /** A Serverless v2 instance's constant capacity in ACUs: its capacity datapoints go with each CPU sample. */
  readonly capacityAcu?: number;
  /** An Aurora cluster's id: its instances' I/O samples count towards its volume's datapoints. */
  readonly volumeOf?: string;
  readonly sampleIntervalS: number;
}

/** The namespace and metric the CloudWatch agent publishes memory under (client/cloudwatch-agent.json). */
const AGENT_NAMESPACE = 'CWAgent';
const AGENT_MEMORY_METRIC = 'mem_available';

/** This machine's MemAvailable in bytes (/proc/meminfo gives kB), or undefined where there is none (not Linux). */
function hostMemAvailableBytes(): number | undefined {
  let meminfo: string;
  try {
    meminfo = readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
  const kb = /^MemAvailable:\s+(\d+) kB$/m.exec(meminfo)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/**
 * What an RDS DB instance (MySQL, MariaDB, PostgreSQL; not Aurora) publishes of the samplers'
 * metrics: the catalogue's RDS family, counted or collected. A read replica's lag is ReplicaLag in
 * seconds (CloudWatch User Guide, "Amazon RDS metrics and dimensions", rds-metricscollected.md).
 * @internal exported for its tests (a test seam)
 */
export const RDS_INSTANCE_PUBLISHED: readonly ServerMetricName[] = [
  ...familyMetrics('rds', 'counted'),
  ...familyMetrics('rds', 'collected'),
];

function rdsInstanceDatum(s: MetricSample): { metric: string; value: number; unit: string } | undefined {
  if (s.metric === 'AuroraReplicaLag')
    return { metric: 'ReplicaLag', value: s.value / 1000, unit: SERVER_METRICS.ReplicaLag };
  return RDS_INSTANCE_PUBLISHED.includes(s.metric)
    ? { metric: s.metric, value: s.value, unit: SERVER_METRICS[s.metric] }
    : undefined;
}

const auroraDatum = (s: MetricSample) => ({ metric: s.metric, value: s.value, unit: SERVER_METRICS[s.metric] });

/** An EC2 instance's datapoint of a sample taken every `intervalS` (see the file comment). */
function ec2Datum(intervalS: number) {
  // The catalogue's AWS/EC2 Sums (the agent's memory goes separately, with each CPU sample).
  const counts: Readonly<Record<string, [string, string]>> = Object.fromEntries(
    ec2Sources()
      .filter(({ ec2 }) => ec2.namespace === 'AWS/EC2' && ec2.stat === 'Sum')
      .map(({ metric, ec2 }) => [metric, [ec2.name, ec2.unit]]),
  );
  return (s: MetricSample): { metric: string; value: number; unit: string } | undefined => {
    if (s.metric === 'CPUUtilization') return { metric: 'CPUUtilization', value: s.value, unit: 'Percent' };
    const count = counts[s.metric];
    return count ? { metric: count[0], value: s.value * intervalS, unit: count[1] } : undefined;
  };
}

export class CloudWatchPublisher {
  private readonly watched = new Map<string, Watched>();
  private readonly queue: {
    dueMs: number;
    namespace: Watched['namespace'] | typeof AGENT_NAMESPACE;
    datum: MetricDatum;
  }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private publishing: Promise<void> | undefined;
  private changes: Promise<void> = Promise.resolve();
  private stopped = false;
  published = 0;
  private readonly problems: string[] = [];
  private readonly volume: VolumeIntervals;

  constructor(private readonly o: CloudWatchPublisherOptions) {
    this.volume = new VolumeIntervals(o.volumePeriodS, o.lagS);
  }

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
    const rds = { namespace: 'AWS/RDS', dimension: 'DBInstanceIdentifier' } as const;
    const capacity = m.serverlessMaxAcu !== undefined ? { capacityAcu: m.serverlessMaxAcu } : {};
    const cluster = {
      sampleIntervalS: intervalMs / 1000,
      ...(m.rdsInstances ? {} : { volumeOf: m.clusterId }),
    };
    if (m.postgres?.writer) {
      const sampler = new PostgresMetricsSampler({
        writer: m.postgres.writer,
        readers: m.postgres.readers,
        intervalMs,
      });
      await sampler.start();
      this.watched.set(m.clusterId, { sampler, taken: 0, datum, ...rds, ...capacity, ...cluster });
      return;
    }
    if (!m.writer) return;
    const sampler = new ServerMetricsSampler({ writer: m.writer, readers: m.readers, intervalMs });
    await sampler.start();
    this.watched.set(m.clusterId, { sampler, taken: 0, datum, ...rds, ...capacity, ...cluster });
  }

  /**
   * Follows a self-managed server's EC2 instance (`server` describes its mariadbd, with
   * `instanceId` the EC2 instance id), or stops following it (`server` undefined, at terminate).
   */
  ec2ServerChanged(instanceId: string, server: ServerInfo | undefined): Promise<void> {
    const key = `ec2:${instanceId}`;
    this.changes = this.changes
      .then(async () => {
        const previous = this.watched.get(key);
        this.watched.delete(key);
        if (previous) this.enqueue(previous, await previous.sampler.stop());
        if (this.stopped || !server) return;
        const intervalMs = this.o.sampleIntervalMs ?? 1000;
        // One sampler per instance: no replica-lag heartbeat (EC2 has no such metric).
        const sampler = new ServerMetricsSampler({ writer: server, readers: [], intervalMs });
        await sampler.start();
        this.watched.set(key, {
          sampler,
          taken: 0,
          datum: ec2Datum(intervalMs / 1000),
          namespace: 'AWS/EC2',
          dimension: 'InstanceId',
          agentMemory: true,
          sampleIntervalS: intervalMs / 1000,
        });
      })
      .catch((e: unknown) => {
        this.problem(`${instanceId}: ${(e as Error).message}`);
      });
    return this.changes;
  }

  private enqueue(w: Watched, samples: readonly MetricSample[]): void {
    for (const s of samples.slice(w.taken)) {
      const at = Date.parse(s.ts);
      if (w.volumeOf !== undefined) this.volume.add(w.volumeOf, s, w.sampleIntervalS);
      const memory = w.agentMemory === true && s.metric === 'CPUUtilization' ? hostMemAvailableBytes() : undefined;
      if (memory !== undefined) {
        this.queue.push({
          dueMs: at + this.o.lagS * 1000,
          namespace: AGENT_NAMESPACE,
          datum: {
            MetricName: AGENT_MEMORY_METRIC,
            Dimensions: [{ Name: 'InstanceId', Value: s.instanceId }],
            Timestamp: new Date(at),
            Value: memory,
            Unit: 'Bytes',
          },
        });
      }
      if (w.capacityAcu !== undefined && s.metric === 'CPUUtilization') {
        for (const [name, value] of [
          ['ServerlessDatabaseCapacity', w.capacityAcu],
          ['ACUUtilization', 100],
        ] as const) {
          this.queue.push({
            dueMs: at + this.o.lagS * 1000,
            namespace: w.namespace,
            datum: {
              MetricName: name,
              Dimensions: [{ Name: w.dimension, Value: s.instanceId }],
              Timestamp: new Date(at),
              Value: value,
              Unit: SERVER_METRICS[name],
            },
          });
        }
      }
      const d = w.datum(s);
      if (d === undefined) continue;
      this.queue.push({
        dueMs: at + this.o.lagS * 1000,
        namespace: w.namespace,
        datum: {
          MetricName: d.metric,
          Dimensions: [{ Name: w.dimension, Value: s.instanceId }],
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
    for (const datum of this.volume.due(now)) this.queue.push({ dueMs: now, namespace: 'AWS/RDS', datum });
    const due = this.queue.filter((q) => q.dueMs <= now);
    if (due.length === 0) return;
    // PutMetricData takes one namespace per request.
    for (const namespace of ['AWS/RDS', 'AWS/EC2', AGENT_NAMESPACE] as const) {
      const ofNamespace = due.filter((q) => q.namespace === namespace);
      for (let i = 0; i < ofNamespace.length; i += MAX_DATUMS_PER_PUT) {
        const batch = ofNamespace.slice(i, i + MAX_DATUMS_PER_PUT);
        try {
          await this.o.cloudwatch.send(
            new PutMetricDataCommand({ Namespace: namespace, MetricData: batch.map((b) => b.datum) }),
          );
          this.published += batch.length;
        } catch (e) {
          this.problem(`PutMetricData: ${(e as Error).message}`);
        }
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
