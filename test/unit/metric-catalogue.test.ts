/**
 * The metric catalogue (core/metrics/catalogue.ts) against the lists it replaced: each derived list
 * is pinned to the literal the code held before, so deriving them changed no behaviour.
 */
import {
  CLUSTER_VOLUME_METRICS,
  EC2_SERVER_METRICS,
  engineMetrics,
  forwardingMetrics,
  SERVERLESS_METRICS,
} from '../../core/backends/aws/metrics';
import { LOCAL_UNMEASURED_METRICS, SERVER_METRICS } from '../../core/lake/rows';
import { RDS_INSTANCE_PUBLISHED } from '../../core/rehearsal/cloudwatch-publisher';
import { LATENCY_COLUMNS, THROUGHPUT_COLUMNS } from '../../core/report/server-metrics-columns';

const NO_STATEMENT_DURATIONS =
  'MariaDB keeps no statement durations in its status counters (only performance_schema, off by default)';
const NO_VOLUME =
  'there is no shared cluster volume locally (ReadIOPS and WriteIOPS are each server’s InnoDB data reads and writes)';

describe('the metric catalogue', () => {
  it('gives every metric the CloudWatch unit the lake carried before, in the same order', () => {
    expect(Object.entries(SERVER_METRICS)).toEqual(
      Object.entries({
        CPUUtilization: 'Percent',
        SelectThroughput: 'Count/Second',
        DMLThroughput: 'Count/Second',
        CommitThroughput: 'Count/Second',
        NetworkTransmitThroughput: 'Bytes/Second',
        NetworkReceiveThroughput: 'Bytes/Second',
        DatabaseConnections: 'Count',
        AuroraReplicaLag: 'Milliseconds',
        BufferCacheHitRatio: 'Percent',
        Deadlocks: 'Count/Second',
        CommitLatency: 'Milliseconds',
        DMLLatency: 'Milliseconds',
        SelectLatency: 'Milliseconds',
        FreeableMemory: 'Bytes',
        ReadIOPS: 'Count/Second',
        WriteIOPS: 'Count/Second',
        VolumeReadIOPs: 'Count/5 minutes',
        VolumeWriteIOPs: 'Count/5 minutes',
        ReplicaLag: 'Seconds',
        ServerlessDatabaseCapacity: 'Count',
        ACUUtilization: 'Percent',
        ForwardingReplicaSelectThroughput: 'Count/Second',
        ForwardingReplicaDMLThroughput: 'Count/Second',
        ForwardingReplicaOpenSessions: 'Count',
        ForwardingWriterOpenSessions: 'Count',
        ForwardingWriterDMLThroughput: 'Count/Second',
        ForwardingWriterDMLLatency: 'Milliseconds',
        ForwardingReplicaDMLLatency: 'Milliseconds',
        ForwardingReplicaReadWaitLatency: 'Milliseconds',
        ForwardingReplicaSelectLatency: 'Milliseconds',
        AuroraLocalForwardingWriterDMLThroughput: 'Count/Second',
        AuroraLocalForwardingWriterOpenSessions: 'Count',
        AuroraForwardingReplicaDMLThroughput: 'Count/Second',
        AuroraForwardingReplicaCommitThroughput: 'Count/Second',
        AuroraForwardingReplicaDMLLatency: 'Milliseconds',
        AuroraForwardingReplicaReadWaitLatency: 'Milliseconds',
      }),
    );
  });

  it('derives the per-engine AWS lists, counted and collected, as they were', () => {
    const auroraMysql = {
      base: [
        'CPUUtilization',
        'SelectThroughput',
        'DMLThroughput',
        'CommitThroughput',
        'NetworkTransmitThroughput',
        'NetworkReceiveThroughput',
        'DatabaseConnections',
        'BufferCacheHitRatio',
        'Deadlocks',
      ],
      extra: ['CommitLatency', 'DMLLatency', 'SelectLatency', 'FreeableMemory'],
      replicaLag: 'AuroraReplicaLag',
    };
    const auroraPostgresql = {
      base: [
        'CPUUtilization',
        'CommitThroughput',
        'NetworkTransmitThroughput',
        'NetworkReceiveThroughput',
        'DatabaseConnections',
        'BufferCacheHitRatio',
        'Deadlocks',
      ],
      extra: ['CommitLatency', 'FreeableMemory', 'ReadIOPS', 'WriteIOPS'],
      replicaLag: 'AuroraReplicaLag',
    };
    const rds = {
      base: [
        'CPUUtilization',
        'NetworkTransmitThroughput',
        'NetworkReceiveThroughput',
        'DatabaseConnections',
        'ReadIOPS',
        'WriteIOPS',
      ],
      extra: ['FreeableMemory'],
      replicaLag: 'ReplicaLag',
    };
    expect(engineMetrics('aurora-mysql')).toEqual(auroraMysql);
    expect(engineMetrics('aurora-postgresql')).toEqual(auroraPostgresql);
    for (const kind of ['rds-mysql', 'rds-mariadb', 'rds-postgresql'] as const)
      expect(engineMetrics(kind)).toEqual(rds);
    // A self-managed server has no RDS instance: it gets the Aurora MySQL default (its EC2 list is separate).
    expect(engineMetrics('self-managed')).toEqual(auroraMysql);
  });

  it('derives the Serverless v2, cluster volume and self-managed EC2 lists as they were', () => {
    expect(SERVERLESS_METRICS).toEqual(['ServerlessDatabaseCapacity', 'ACUUtilization']);
    expect(CLUSTER_VOLUME_METRICS).toEqual(['VolumeReadIOPs', 'VolumeWriteIOPs']);
    expect(EC2_SERVER_METRICS).toEqual([
      { metric: 'CPUUtilization', namespace: 'AWS/EC2', ec2Name: 'CPUUtilization', stat: 'Average', counted: true },
      { metric: 'NetworkReceiveThroughput', namespace: 'AWS/EC2', ec2Name: 'NetworkIn', stat: 'Sum', counted: true },
      { metric: 'NetworkTransmitThroughput', namespace: 'AWS/EC2', ec2Name: 'NetworkOut', stat: 'Sum', counted: true },
      { metric: 'ReadIOPS', namespace: 'AWS/EC2', ec2Name: 'EBSReadOps', stat: 'Sum', counted: false },
      { metric: 'WriteIOPS', namespace: 'AWS/EC2', ec2Name: 'EBSWriteOps', stat: 'Sum', counted: false },
      { metric: 'FreeableMemory', namespace: 'CWAgent', ec2Name: 'mem_available', stat: 'Average', counted: false },
    ]);
  });

  it('derives the write-forwarding lists per engine and role as they were', () => {
    expect(forwardingMetrics('aurora-mysql')).toEqual({
      writer: ['ForwardingWriterOpenSessions', 'ForwardingWriterDMLThroughput'],
      reader: ['ForwardingReplicaSelectThroughput', 'ForwardingReplicaDMLThroughput', 'ForwardingReplicaOpenSessions'],
      writerLatency: ['ForwardingWriterDMLLatency'],
      readerLatency: [
        'ForwardingReplicaDMLLatency',
        'ForwardingReplicaReadWaitLatency',
        'ForwardingReplicaSelectLatency',
      ],
    });
    expect(forwardingMetrics('aurora-postgresql')).toEqual({
      writer: ['AuroraLocalForwardingWriterDMLThroughput', 'AuroraLocalForwardingWriterOpenSessions'],
      reader: ['AuroraForwardingReplicaDMLThroughput', 'AuroraForwardingReplicaCommitThroughput'],
      writerLatency: [],
      readerLatency: ['AuroraForwardingReplicaDMLLatency', 'AuroraForwardingReplicaReadWaitLatency'],
    });
    for (const kind of ['rds-mysql', 'rds-mariadb', 'rds-postgresql', 'self-managed'] as const)
      expect(forwardingMetrics(kind)).toBeUndefined();
  });

  it('derives what the rehearsal publishes for an RDS DB instance as the list it restated by hand', () => {
    expect([...RDS_INSTANCE_PUBLISHED].sort()).toEqual(
      [
        'CPUUtilization',
        'DatabaseConnections',
        'NetworkReceiveThroughput',
        'NetworkTransmitThroughput',
        'ReadIOPS',
        'WriteIOPS',
        'FreeableMemory',
      ].sort(),
    );
  });

  it('derives what the local backend cannot measure, with why, as it was', () => {
    expect(LOCAL_UNMEASURED_METRICS).toEqual({
      CommitLatency: NO_STATEMENT_DURATIONS,
      DMLLatency: NO_STATEMENT_DURATIONS,
      SelectLatency: NO_STATEMENT_DURATIONS,
      FreeableMemory: "the local servers share this machine's memory: there is no per-instance free memory",
      VolumeReadIOPs: NO_VOLUME,
      VolumeWriteIOPs: NO_VOLUME,
      ForwardingWriterDMLLatency: 'MariaDB has no write forwarding',
      ForwardingReplicaDMLLatency: 'MariaDB has no write forwarding',
      ForwardingReplicaReadWaitLatency: 'MariaDB has no write forwarding',
      ForwardingReplicaSelectLatency: 'MariaDB has no write forwarding',
      AuroraForwardingReplicaDMLLatency: 'PostgreSQL has no write forwarding',
      AuroraForwardingReplicaReadWaitLatency: 'PostgreSQL has no write forwarding',
    });
    expect(Object.keys(LOCAL_UNMEASURED_METRICS)).toEqual([
      'CommitLatency',
      'DMLLatency',
      'SelectLatency',
      'FreeableMemory',
      'VolumeReadIOPs',
      'VolumeWriteIOPs',
      'ForwardingWriterDMLLatency',
      'ForwardingReplicaDMLLatency',
      'ForwardingReplicaReadWaitLatency',
      'ForwardingReplicaSelectLatency',
      'AuroraForwardingReplicaDMLLatency',
      'AuroraForwardingReplicaReadWaitLatency',
    ]);
  });

  it("derives the report's server-metrics columns: the former latency list, and the throughput ones", () => {
    expect(LATENCY_COLUMNS).toEqual([
      'CommitLatency',
      'DMLLatency',
      'SelectLatency',
      'ForwardingWriterDMLLatency',
      'ForwardingReplicaDMLLatency',
      'ForwardingReplicaReadWaitLatency',
      'ForwardingReplicaSelectLatency',
      'AuroraForwardingReplicaDMLLatency',
      'AuroraForwardingReplicaReadWaitLatency',
      'ReadIOPS',
      'WriteIOPS',
      'VolumeReadIOPs',
      'VolumeWriteIOPs',
      'FreeableMemory',
    ]);
    expect(THROUGHPUT_COLUMNS).toEqual([
      'SelectThroughput',
      'DMLThroughput',
      'CommitThroughput',
      'Deadlocks',
      'BufferCacheHitRatio',
    ]);
  });
});
