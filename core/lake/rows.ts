/**
 * The results lake: one table per kind of row, JSON Lines, partitioned by the run's date.
 * The same keys under a local directory and under the S3 bucket (Athena partition projection on dt):
 *
 *   tables/runs/dt=YYYY-MM-DD/<runId>.jsonl                      one RunRow (rewritten at the end of the run)
 *   tables/steps/dt=YYYY-MM-DD/<runId>__<cellId>__<stepId>.jsonl  one StepRow per client
 *   tables/intervals/dt=.../<runId>__<cellId>__<stepId>.jsonl     one IntervalRow per client and interval
 *   tables/server_metrics/dt=.../<runId>__<cellId>__<stepId>.jsonl
 *   tables/metric_windows/dt=.../<runId>__<cellId>__<stepId>.jsonl  per instance and server metric: datapoints
 *                                                                 the window should have, how many arrived
 *   tables/verdicts/dt=.../<runId>.jsonl
 * one VerdictsRow per step and metric: the run judged against
 *                                                                its experiment's history (written after the run)
 *   tables/server_config/dt=.../<runId>__<cellId>__<prepareStepId>.jsonl  the configuration the cell's
 *                                                                 writer really ran with, read at prepare
 *   raw/dt=YYYY-MM-DD/<runId>/<cellId>/<stepId>/<phase>/<clientId>/{output.log,client_cpu.jsonl,result.json}
 *   scripts/<runId>/<name>.lua                                   custom workloads, fetched by clients
 *
 * Files sit flat in each partition (no deeper folders) so Athena and DuckDB read the same set.
 * Column names are snake_case: both Athena (Trino) and DuckDB take them unquoted.
 */

import type { LakeRow, LakeTable } from './schema';

/** The tables' rows: their columns, types and docs are the lake schema's (core/lake/schema.ts). */
export type RunRow = LakeRow<'runs'>;
export type ServerConfigRow = LakeRow<'server_config'>;
export type StepRow = LakeRow<'steps'>;
export type IntervalRow = LakeRow<'intervals'>;
export type ServerMetricRow = LakeRow<'server_metrics'>;
export type MetricWindowRow = LakeRow<'metric_windows'>;
export type VerdictsRow = LakeRow<'verdicts'>;

/**
 * The CloudWatch AWS/RDS names both backends use for server metrics. The local backend maps
 * SHOW GLOBAL STATUS deltas and /proc onto these; names are case-sensitive as in CloudWatch.
 */
export const SERVER_METRICS = {
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
  /**
   * Average statement latencies, free memory and storage I/O (Aurora User Guide, "Instance-level
   * metrics for Amazon Aurora", Aurora.AuroraMonitoring.Metrics.md: CommitLatency, DMLLatency,
   * SelectLatency in milliseconds, FreeableMemory). ReadIOPS/WriteIOPS are instance metrics of Aurora
   * PostgreSQL only there; the local backend measures them (InnoDB data reads/writes per second).
   */
  CommitLatency: 'Milliseconds',
  DMLLatency: 'Milliseconds',
  SelectLatency: 'Milliseconds',
  FreeableMemory: 'Bytes',
  ReadIOPS: 'Count/Second',
  WriteIOPS: 'Count/Second',
  /**
   * The cluster volume's billed I/O operations, Aurora's storage I/O for Aurora MySQL (which has no
   * instance ReadIOPS/WriteIOPS): cluster-level metrics, "Count per 5 minutes", published at
   * 5-minute intervals (Aurora User Guide, "Cluster-level metrics for Amazon Aurora",
   * Aurora.AuroraMySQL.Monitoring.Metrics.md). Collected per step for the 5-minute intervals that
   * overlap it, role "cluster".
   */
  VolumeReadIOPs: 'Count/5 minutes',
  VolumeWriteIOPs: 'Count/5 minutes',
  /**
   * How far an RDS read replica (MySQL, MariaDB, PostgreSQL; not Aurora) lags behind its source, in
   * seconds (CloudWatch User Guide, "Amazon RDS metrics and dimensions", rds-metricscollected.md:
   * "Applies to MySQL, MariaDB, and PostgreSQL Read Replicas. Units: Seconds").
   */
  ReplicaLag: 'Seconds',
  /**
   * An Aurora Serverless v2 instance's capacity in ACUs and that capacity as a percentage of the
   * cluster's maximum (Aurora User Guide, "Aurora Serverless v2 capacity": "The
   * ServerlessDatabaseCapacity and ACUUtilization metrics help you to determine how much capacity
   * your database is actually using and where that capacity falls within the specified range";
   * instance-level metrics, AWS only).
   */
  ServerlessDatabaseCapacity: 'Count',
  ACUUtilization: 'Percent',
  /** Aurora local write forwarding (AWS only). */
  ForwardingReplicaSelectThroughput: 'Count/Second',
  ForwardingReplicaDMLThroughput: 'Count/Second',
  ForwardingReplicaOpenSessions: 'Count',
  ForwardingWriterOpenSessions: 'Count',
  ForwardingWriterDMLThroughput: 'Count/Second',
  /**
   * Write-forwarding latencies in milliseconds (Aurora User Guide, aurora-global-database-write-forwarding.md,
   * "CloudWatch metrics and Aurora MySQL status variables for write forwarding"): on the writer the
   * time to process each forwarded DML; on a reader the forwarded DML response time, the time a
   * SELECT waits to catch up with the writer (read consistency), and the forwarded SELECT latency.
   */
  ForwardingWriterDMLLatency: 'Milliseconds',
  ForwardingReplicaDMLLatency: 'Milliseconds',
  ForwardingReplicaReadWaitLatency: 'Milliseconds',
  ForwardingReplicaSelectLatency: 'Milliseconds',
  /**
   * Aurora PostgreSQL's local write forwarding publishes its own names (Aurora User Guide,
   * "Monitoring local write forwarding in Aurora PostgreSQL", aurora-postgresql-write-forwarding-monitoring.md):
   * on the writer the forwarded DML per second and the open forwarded sessions; on each reader the
   * forwarded DML and commits per second, the forwarded DML response time and the time a read waits
   * for the consistency mode (milliseconds).
   */
  AuroraLocalForwardingWriterDMLThroughput: 'Count/Second',
  AuroraLocalForwardingWriterOpenSessions: 'Count',
  AuroraForwardingReplicaDMLThroughput: 'Count/Second',
  AuroraForwardingReplicaCommitThroughput: 'Count/Second',
  AuroraForwardingReplicaDMLLatency: 'Milliseconds',
  AuroraForwardingReplicaReadWaitLatency: 'Milliseconds',
} as const;

/**
 * Metrics the local backend cannot measure, with why (the report and the run's notes say so rather
 * than show nothing).
 */
export const LOCAL_UNMEASURED_METRICS: Readonly<Partial<Record<ServerMetricName, string>>> = {
  CommitLatency:
    'MariaDB keeps no statement durations in its status counters (only performance_schema, off by default)',
  DMLLatency: 'MariaDB keeps no statement durations in its status counters (only performance_schema, off by default)',
  SelectLatency:
    'MariaDB keeps no statement durations in its status counters (only performance_schema, off by default)',
  FreeableMemory: "the local servers share this machine's memory: there is no per-instance free memory",
  VolumeReadIOPs:
    'there is no shared cluster volume locally (ReadIOPS and WriteIOPS are each server’s InnoDB data reads and writes)',
  VolumeWriteIOPs:
    'there is no shared cluster volume locally (ReadIOPS and WriteIOPS are each server’s InnoDB data reads and writes)',
  ForwardingWriterDMLLatency: 'MariaDB has no write forwarding',
  ForwardingReplicaDMLLatency: 'MariaDB has no write forwarding',
  ForwardingReplicaReadWaitLatency: 'MariaDB has no write forwarding',
  ForwardingReplicaSelectLatency: 'MariaDB has no write forwarding',
  AuroraForwardingReplicaDMLLatency: 'PostgreSQL has no write forwarding',
  AuroraForwardingReplicaReadWaitLatency: 'PostgreSQL has no write forwarding',
};
export type ServerMetricName = keyof typeof SERVER_METRICS;

const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]/g, '_');

export const lakeKeys = {
  run: (dt: string, runId: string): string => `tables/runs/dt=${dt}/${safe(runId)}.jsonl`,
  stepTable: (
    table: Exclude<LakeTable, 'runs' | 'verdicts'>,
    dt: string,
    runId: string,
    cellId: string,
    stepId: string,
  ): string => `tables/${table}/dt=${dt}/${safe(runId)}__${safe(cellId)}__${safe(stepId)}.jsonl`,
  verdicts: (dt: string, runId: string): string => `tables/verdicts/dt=${dt}/${safe(runId)}.jsonl`,
  /** The common prefix of a run's files of a step table. */
  runTablePrefix: (table: Exclude<LakeTable, 'runs'>, dt: string, runId: string): string =>
    `tables/${table}/dt=${dt}/${safe(runId)}__`,
  /** A finished run's rows of one table, compacted to Parquet (core/lake/compact.ts). */
  compacted: (table: Exclude<LakeTable, 'runs' | 'verdicts'>, dt: string, runId: string): string =>
    `tables/${table}/dt=${dt}/${safe(runId)}.parquet`,
  raw: (dt: string, runId: string, cellId: string, stepId: string, phase: string, clientId: string): string =>
    `raw/dt=${dt}/${safe(runId)}/${safe(cellId)}/${safe(stepId)}/${phase}/${safe(clientId)}/`,
  script: (runId: string, name: string): string => `scripts/${safe(runId)}/${safe(name)}`,
  /**
   * A run id's claim, created once (LakeStore.createOnce) before anything of the run is written: the
   * lake itself says an id is taken, whichever machine or run root the other run has.
   */
  runClaim: (runId: string): string => `claims/${safe(runId)}.json`,
  /** The workflow's own objects (not tables): what the state machine's state no longer carries. */
  workflow: {
    /** A cell's plan with its steps, written by PlanRun. */
    cellPlan: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cells/${safe(cellId)}.json`,
    /** Where a cell's step segments are: the next step, and the phase in flight with its jobs. */
    stepCursor: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cursors/${safe(cellId)}.json`,
    /** One step's outcome (CollectLateMetrics and teardown read them). */
    stepOutcomes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/steps/${safe(cellId)}/`,
    stepOutcome: (runId: string, cellId: string, stepId: string): string =>
      `workflow/${safe(runId)}/steps/${safe(cellId)}/${safe(stepId)}.json`,
    /**
     * The run's cells in plan order (ids; a duet's members, not the duet), written
     * by PlanRun, read by FinishRun: the state carries none of it to FinishRun.
     */
    cellList: (runId: string): string => `workflow/${safe(runId)}/cell-list.json`,
    /**
     * The cell Map's item at a position: which group of cells it is, written by PlanRun, read by the
     * Tasks that receive only the position (provisioning, a teardown before it). One small object
     * per item, so a child reads its own and not the whole list.
     */
    item: (runId: string, index: number): string => `workflow/${safe(runId)}/items/${index}.json`,
    /** A cell's outcome, written by its teardown, read by FinishRun. */
    cellOutcome: (runId: string, cellId: string): string => `workflow/${safe(runId)}/outcomes/${safe(cellId)}.json`,
    /**
     * A cell's resources with their creation and deletion times,
     * kept by its teardown's passes (core/workflow/cell-bill.ts).
     */
    cellLifetimes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/lifetimes/${safe(cellId)}.json`,
    /** A run with questions: its rounds, their items and prices, written by PlanRun (RoundsConfig). */
    rounds: (runId: string): string => `workflow/${safe(runId)}/rounds.json`,
    /** What JudgeRound decided after the last round (RoundsJudged), read by FinishRun. */
    roundsJudged: (runId: string): string => `workflow/${safe(runId)}/rounds-judged.json`,
    /** Everything of a run's workflow objects. */
    run: (runId: string): string => `workflow/${safe(runId)}/`,
  },
};

/**
 * A filter of lake data files by run, from their names: a run's own file is <runId>.jsonl (runs,
 * verdicts), a step's <runId>__<cellId>__<stepId>.jsonl (lakeKeys above, run ids as `safe` writes them).
 */
export function filesOfRuns(runIds: Iterable<string>): (file: string) => boolean {
  const names = new Set([...runIds].map(safe));
  return (file) => {
    const base = file.slice(file.lastIndexOf('/') + 1).replace(/\.(jsonl(\.gz)?|parquet)$/, '');
    if (names.has(base)) return true;
    // A run id may itself contain "__": try every cut.
    for (let cut = base.indexOf('__'); cut >= 0; cut = base.indexOf('__', cut + 1))
      if (names.has(base.slice(0, cut))) return true;
    return false;
  };
}

/** Rows to JSON Lines. */
export function toJsonLines(rows: readonly object[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}
