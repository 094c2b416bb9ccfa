/**
 * CloudWatch's AWS/RDS metrics for the rehearsal's servers, and their lateness.
 * The local backend's sampler runs once a second against every cluster's servers.
 * Each sample goes into moto's CloudWatch, timestamped when taken but sent `lagS` seconds later.
 * On AWS a minute's datapoints appear one to three minutes later, and the rehearsal shows that.
 *
 * Steps last seconds, so the rehearsal publishes per-second samples instead of one value a minute.
 * moto then averages them into the backend's periods, as CloudWatch does.
 *
 * A self-managed server instance gets what EC2 publishes under AWS/EC2.
 * See EC2 User Guide, "List the available CloudWatch metrics for your instances".
 * A per-second rate becomes that second's total, so CloudWatch's Sum is the period's total, as on EC2.
 * It also gets the CloudWatch agent's mem_available. See metrics-collected-by-CloudWatch-agent.md.
 * That value is this machine's MemAvailable, a figure of the host, not of the instance.
 *
 * A Serverless v2 instance stands in at its largest capacity and never scales.
 * So it publishes capacity at MaxCapacity and ACUUtilization 100.
 * See Aurora User Guide, "Aurora Serverless v2 capacity".
 * The API path is AWS's, but the values say only that nothing scaled.
 *
 * An Aurora cluster also gets its volume's I/O, once per closed interval of `volumePeriodS`.
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

/** PutMetricData takes at most 1000 different metrics per request. See the CloudWatch API reference. */
const MAX_DATUMS_PER_PUT = 1000;

export interface CloudWatchPublisherOptions {
  readonly cloudwatch: CloudWatchClient;
  readonly lagS: number;
  /** The interval of an Aurora cluster volume's I/O datapoints. */
  readonly volumePeriodS: number;
  readonly sampleIntervalMs?: number;
  readonly log?: (line: string) => void;
}

interface Watched {
  readonly sampler: Pick<ServerMetricsSampler, 'samples' | 'stop'>;
  taken: number;
  /** The CloudWatch datapoint of a sample, or undefined when the engine publishes none. */
  readonly datum: (s: MetricSample) => { metric: string; value: number; unit: string } | undefined;
  readonly namespace: 'AWS/RDS' | 'AWS/EC2';
  readonly dimension: 'DBInstanceIdentifier' | 'InstanceId';
  /** An EC2 server instance sends the CloudWatch agent's memory datapoint with each CPU sample. */
  readonly agentMemory?: boolean;
  /** A Serverless v2 instance's constant capacity in ACUs, sent with each CPU sample. */
  readonly capacityAcu?: number;
  /** An Aurora cluster's id. Its instances' I/O samples count towards its volume's datapoints. */
  readonly volumeOf?: string;
  readonly sampleIntervalS: number;
}

/** The namespace and metric the CloudWatch agent publishes memory under. */
const AGENT_NAMESPACE = 'CWAgent';
const AGENT_MEMORY_METRIC = 'mem_available';

/** This machine's MemAvailable in bytes, or undefined off Linux. */
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
 * What an RDS DB instance, not Aurora, publishes of the samplers' metrics.
 * A read replica's lag is ReplicaLag in seconds.
 * See CloudWatch User Guide, "Amazon RDS metrics and dimensions", rds-metricscollected.md.
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

/** An EC2 instance's datapoint of a sample taken every `intervalS`. */
function ec2Datum(intervalS: number) {
  // The catalogue's AWS/EC2 Sums. The agent's memory goes separately, with each CPU sample.
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

  /** Follows a cluster's available servers with a new sampler per change. */
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
   * Follows a self-managed server's EC2 instance.
   * An undefined `server` at terminate stops following it.
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
        // One sampler per instance, without a replica-lag heartbeat, since EC2 has no such metric.
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

  /** Stops every sampler. What is not due yet is never published, as on AWS after a delete. */
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
