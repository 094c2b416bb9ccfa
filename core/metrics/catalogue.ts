/**
 * Every server metric in one table. core/metrics/lists.ts derives every other list from it.
 * Names and units are AWS/RDS's, and case-sensitive.
 * See Aurora User Guide, "Amazon CloudWatch metrics for Amazon Aurora".
 * See CloudWatch User Guide, "Amazon RDS metrics and dimensions".
 */

/** The AWS engine families whose instances publish different metric sets. */
export type MetricFamily = 'aurora-mysql' | 'aurora-postgresql' | 'rds';

/** A counted metric makes the window's completeness wait for it. A collected one is kept when it arrives. */
export type Counting = 'counted' | 'collected';

export interface MetricEntry {
  readonly unit: string;
  /** Per-instance AWS/RDS metrics of each engine family, for every role. */
  readonly aws?: Readonly<Partial<Record<MetricFamily, Counting>>>;
  /** A write-forwarding metric, with the Aurora engine and instance role publishing it. */
  readonly forwarding?: {
    readonly engine: 'aurora-mysql' | 'aurora-postgresql';
    readonly role: 'writer' | 'reader';
    readonly counting: Counting;
  };
  /** Collected for a Serverless v2 instance or per Aurora cluster volume, beside the family's. */
  readonly awsGroup?: 'serverless' | 'cluster-volume';
  /**
   * A self-managed server's EC2 or CloudWatch agent source.
   * A Sum over the period becomes a per-second rate. `position` keeps the collector's query order.
   */
  readonly ec2?: {
    readonly namespace: 'AWS/EC2' | 'CWAgent';
    readonly name: string;
    readonly stat: 'Average' | 'Sum';
    readonly unit: string;
    readonly counting: Counting;
    readonly position: number;
  };
  /** How the local backend measures it, or why it cannot. The report and the run's notes say so. */
  readonly local?: { readonly source: string } | { readonly unmeasured: string };
  /** The server-metrics table and column it is shown in. */
  readonly report?: { readonly table: 'latencies' | 'throughput'; readonly column: number };
}

const ALL_COUNTED = { 'aurora-mysql': 'counted', 'aurora-postgresql': 'counted', rds: 'counted' } as const;
const AURORA_COUNTED = { 'aurora-mysql': 'counted', 'aurora-postgresql': 'counted' } as const;
const NO_DURATIONS =
  'MariaDB keeps no statement durations in its status counters (only performance_schema, off by default)';
const NO_VOLUME =
  'there is no shared cluster volume locally (ReadIOPS and WriteIOPS are each server’s InnoDB data reads and writes)';
const NO_MARIADB_FORWARDING = { unmeasured: 'MariaDB has no write forwarding' } as const;
const NO_POSTGRES_FORWARDING = { unmeasured: 'PostgreSQL has no write forwarding' } as const;

const ec2 = (
  namespace: 'AWS/EC2' | 'CWAgent',
  name: string,
  stat: 'Average' | 'Sum',
  unit: string,
  counting: Counting,
  position: number,
) => ({ namespace, name, stat, unit, counting, position });

export const METRIC_CATALOGUE = {
  CPUUtilization: {
    unit: 'Percent',
    aws: ALL_COUNTED,
    ec2: ec2('AWS/EC2', 'CPUUtilization', 'Average', 'Percent', 'counted', 0),
    local: { source: 'utime+stime delta / wall / CPUs * 100' },
  },
  // Aurora MySQL only, per the Aurora User Guide's instance-level metrics.
  SelectThroughput: {
    unit: 'Count/Second',
    aws: { 'aurora-mysql': 'counted' },
    local: { source: 'Com_select delta / s' },
    report: { table: 'throughput', column: 0 },
  },
  DMLThroughput: {
    unit: 'Count/Second',
    aws: { 'aurora-mysql': 'counted' },
    local: { source: 'Com_insert, Com_update, Com_delete, Com_replace deltas / s' },
    report: { table: 'throughput', column: 1 },
  },
  CommitThroughput: {
    unit: 'Count/Second',
    aws: AURORA_COUNTED,
    local: { source: 'Com_commit delta / s' },
    report: { table: 'throughput', column: 2 },
  },
  NetworkTransmitThroughput: {
    unit: 'Bytes/Second',
    aws: ALL_COUNTED,
    ec2: ec2('AWS/EC2', 'NetworkOut', 'Sum', 'Bytes', 'counted', 2),
    local: { source: 'Bytes_sent delta / s' },
  },
  NetworkReceiveThroughput: {
    unit: 'Bytes/Second',
    aws: ALL_COUNTED,
    ec2: ec2('AWS/EC2', 'NetworkIn', 'Sum', 'Bytes', 'counted', 1),
    local: { source: 'Bytes_received delta / s' },
  },
  DatabaseConnections: { unit: 'Count', aws: ALL_COUNTED, local: { source: 'Threads_connected, less its own' } },
  // Readers only. The collector adds it per role.
  AuroraReplicaLag: { unit: 'Milliseconds', local: { source: 'the heartbeat probe of cluster.ts' } },
  BufferCacheHitRatio: {
    unit: 'Percent',
    aws: AURORA_COUNTED,
    local: { source: '100 * (1 - Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests)' },
    report: { table: 'throughput', column: 4 },
  },
  Deadlocks: {
    unit: 'Count/Second',
    aws: AURORA_COUNTED,
    local: { source: 'Innodb_deadlocks delta / s' },
    report: { table: 'throughput', column: 3 },
  },
  // Average statement latencies and free memory, from the Aurora User Guide's instance-level metrics.
  CommitLatency: {
    unit: 'Milliseconds',
    aws: { 'aurora-mysql': 'collected', 'aurora-postgresql': 'collected' },
    local: { unmeasured: NO_DURATIONS },
    report: { table: 'latencies', column: 0 },
  },
  DMLLatency: {
    unit: 'Milliseconds',
    aws: { 'aurora-mysql': 'collected' },
    local: { unmeasured: NO_DURATIONS },
    report: { table: 'latencies', column: 1 },
  },
  SelectLatency: {
    unit: 'Milliseconds',
    aws: { 'aurora-mysql': 'collected' },
    local: { unmeasured: NO_DURATIONS },
    report: { table: 'latencies', column: 2 },
  },
  FreeableMemory: {
    unit: 'Bytes',
    aws: { 'aurora-mysql': 'collected', 'aurora-postgresql': 'collected', rds: 'collected' },
    // The CloudWatch agent's mem_available on a self-managed server.
    ec2: ec2('CWAgent', 'mem_available', 'Average', 'Bytes', 'collected', 5),
    local: { unmeasured: "the local servers share this machine's memory: there is no per-instance free memory" },
    report: { table: 'latencies', column: 13 },
  },
  // Instance metrics of Aurora PostgreSQL and RDS, not Aurora MySQL. Locally, InnoDB's own data reads and writes.
  ReadIOPS: {
    unit: 'Count/Second',
    aws: { 'aurora-postgresql': 'collected', rds: 'counted' },
    ec2: ec2('AWS/EC2', 'EBSReadOps', 'Sum', 'Count', 'collected', 3),
    local: { source: 'Innodb_data_reads delta / s' },
    report: { table: 'latencies', column: 9 },
  },
  WriteIOPS: {
    unit: 'Count/Second',
    aws: { 'aurora-postgresql': 'collected', rds: 'counted' },
    ec2: ec2('AWS/EC2', 'EBSWriteOps', 'Sum', 'Count', 'collected', 4),
    local: { source: 'Innodb_data_writes delta / s' },
    report: { table: 'latencies', column: 10 },
  },
  /**
   * The cluster volume's billed I/O operations, published every 5 minutes.
   * See Aurora User Guide, "Cluster-level metrics for Amazon Aurora".
   * Collected per step for the intervals that overlap it, with role "cluster".
   */
  VolumeReadIOPs: {
    unit: 'Count/5 minutes',
    awsGroup: 'cluster-volume',
    local: { unmeasured: NO_VOLUME },
    report: { table: 'latencies', column: 11 },
  },
  VolumeWriteIOPs: {
    unit: 'Count/5 minutes',
    awsGroup: 'cluster-volume',
    local: { unmeasured: NO_VOLUME },
    report: { table: 'latencies', column: 12 },
  },
  // An RDS read replica's lag, for MySQL, MariaDB and PostgreSQL read replicas.
  ReplicaLag: { unit: 'Seconds' },
  // Aurora Serverless v2 capacity in ACUs and as a share of the maximum. AWS only.
  ServerlessDatabaseCapacity: { unit: 'Count', awsGroup: 'serverless' },
  ACUUtilization: { unit: 'Percent', awsGroup: 'serverless' },
  // Aurora MySQL write forwarding, per the Aurora User Guide. AWS only.
  ForwardingReplicaSelectThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'counted' },
  },
  ForwardingReplicaDMLThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'counted' },
  },
  ForwardingReplicaOpenSessions: {
    unit: 'Count',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'counted' },
  },
  ForwardingWriterOpenSessions: {
    unit: 'Count',
    forwarding: { engine: 'aurora-mysql', role: 'writer', counting: 'counted' },
  },
  ForwardingWriterDMLThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-mysql', role: 'writer', counting: 'counted' },
  },
  ForwardingWriterDMLLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-mysql', role: 'writer', counting: 'collected' },
    local: NO_MARIADB_FORWARDING,
    report: { table: 'latencies', column: 3 },
  },
  ForwardingReplicaDMLLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'collected' },
    local: NO_MARIADB_FORWARDING,
    report: { table: 'latencies', column: 4 },
  },
  ForwardingReplicaReadWaitLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'collected' },
    local: NO_MARIADB_FORWARDING,
    report: { table: 'latencies', column: 5 },
  },
  ForwardingReplicaSelectLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-mysql', role: 'reader', counting: 'collected' },
    local: NO_MARIADB_FORWARDING,
    report: { table: 'latencies', column: 6 },
  },
  // Aurora PostgreSQL's own names for them. AWS only.
  AuroraLocalForwardingWriterDMLThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-postgresql', role: 'writer', counting: 'counted' },
  },
  AuroraLocalForwardingWriterOpenSessions: {
    unit: 'Count',
    forwarding: { engine: 'aurora-postgresql', role: 'writer', counting: 'counted' },
  },
  AuroraForwardingReplicaDMLThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-postgresql', role: 'reader', counting: 'counted' },
  },
  AuroraForwardingReplicaCommitThroughput: {
    unit: 'Count/Second',
    forwarding: { engine: 'aurora-postgresql', role: 'reader', counting: 'counted' },
  },
  AuroraForwardingReplicaDMLLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-postgresql', role: 'reader', counting: 'collected' },
    local: NO_POSTGRES_FORWARDING,
    report: { table: 'latencies', column: 7 },
  },
  AuroraForwardingReplicaReadWaitLatency: {
    unit: 'Milliseconds',
    forwarding: { engine: 'aurora-postgresql', role: 'reader', counting: 'collected' },
    local: NO_POSTGRES_FORWARDING,
    report: { table: 'latencies', column: 8 },
  },
} as const satisfies Readonly<Record<string, MetricEntry>>;

export type ServerMetricName = keyof typeof METRIC_CATALOGUE;
