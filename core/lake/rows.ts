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

export const LAKE_TABLES = [
  'runs',
  'steps',
  'intervals',
  'server_metrics',
  'metric_windows',
  'verdicts',
  'server_config',
] as const;
export type LakeTable = (typeof LAKE_TABLES)[number];

export interface RunRow {
  readonly run_id: string;
  readonly spec_name: string;
  /** The spec as validated, JSON. */
  readonly spec: string;
  readonly spec_sha256: string;
  /** The plan (cells x steps) as JSON, minus script bodies. */
  readonly plan: string;
  /**
   * Where the run ran; import: hand-run sysbench logs brought in by `aurora-bench import`
   * (core/cli/import-logs.ts); aws-rehearsal: `run --aws-rehearsal`, the AWS path against moto and
   * MariaDB/PostgreSQL stand-ins on this machine (set on the lake copy the rehearsal leaves,
   * core/rehearsal/run-rehearsal.ts), which an AWS experiment's history leaves out (core/regression/load.ts).
   */
  readonly backend: 'local' | 'aws' | 'import' | 'aws-rehearsal';
  readonly region: string;
  readonly engine_version: string;
  /** e.g. "10.11.19-MariaDB" locally; the Aurora version on AWS. */
  readonly server_version: string | null;
  readonly sysbench_version: string | null;
  readonly tool_version: string;
  readonly git_sha: string | null;
  readonly started_at: string;
  readonly ended_at: string | null;
  /** running | succeeded | failed */
  readonly status: string;
  /** Why the run failed: failed cells and steps with their reasons. */
  readonly error: string | null;
  /** JSON array of {cell_id, status, error}. */
  readonly cells: string;
  /** JSON array of plan notes (not applicable parameters etc.). */
  readonly notes: string;
  /**
   * JSON object cell id -> {server version, effective values}: what each cell's writer ran with,
   * read at prepare (the server_config table has every row). Absent from runs written before.
   */
  readonly server_config?: string | null;
  readonly dt: string;
}

/**
 * One value of the configuration a cell's writer really ran with, read from the server after prepare
 * (core/workflow/effective-config.ts).
 */
export interface ServerConfigRow {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly instance_id: string;
  /**
   * version (server version strings) | requested (a parameter the spec set)
   * | performance (the fixed list) | apply-status (AWS parameter groups)
   */
  readonly kind: string;
  /** Variable name; for apply-status the parameter group's name. */
  readonly name: string;
  /** As the server (or DescribeDBInstances/DescribeDBClusters) reports it; null when it does not. */
  readonly value: string | null;
  /** What the experiment asked for; null for values it did not set. */
  readonly requested: string | null;
  /** Whether the requested value is what runs; null when nothing was requested or it cannot be told. */
  readonly in_effect: boolean | null;
  readonly dt: string;
}

export interface StepRow {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly repeat: number;
  readonly instance_class: string;
  readonly az: string | null;
  readonly step_id: string;
  readonly step_index: number;
  readonly workload: string;
  readonly test: string;
  readonly threads: number;
  /** Offered rate per client (0 = unlimited). */
  readonly rate: number;
  readonly target: string;
  readonly endpoint_instance: string;
  readonly client_id: string;
  readonly client_index: number;
  readonly started_at: string;
  readonly ended_at: string;
  /**
   * ok | overloaded | failed. overloaded: a rate step whose offered rate sysbench could not keep
   * up with (its event queue filled, core/lake/step-rows.ts EVENT_QUEUE_FULL); tps/qps are the
   * achieved rates of the intervals before it stopped, lat_pct_ms the worst interval's.
   */
  readonly status: string;
  readonly error: string | null;
  readonly tps: number | null;
  readonly qps: number | null;
  readonly events: number | null;
  readonly total_time_s: number | null;
  readonly reads: number | null;
  readonly writes: number | null;
  readonly other: number | null;
  readonly errors: number | null;
  readonly reconnects: number | null;
  readonly lat_min_ms: number | null;
  readonly lat_avg_ms: number | null;
  readonly lat_max_ms: number | null;
  readonly lat_pct: number;
  readonly lat_pct_ms: number | null;
  /** The latency distribution from the step's histogram (LatencySummary.percentiles); null without one. */
  readonly lat_p50_ms: number | null;
  readonly lat_p90_ms: number | null;
  readonly lat_p95_ms: number | null;
  readonly lat_p99_ms: number | null;
  readonly lat_p999_ms: number | null;
  readonly interval_count: number;
  /**
   * The client's CPU busy %: on AWS the client instance's CPU; locally (servers on the same machine)
   * sysbench's own CPU as a share of the cores its threads can use.
   */
  readonly client_cpu_avg_pct: number | null;
  readonly client_cpu_max_pct: number | null;
  /** true when the client itself was CPU-bound during the step (its numbers say more about it than the server). */
  readonly client_saturated: boolean;
  /**
   * Read-after-write checks a workload made (rw_consistency.lua),
   * and how many did not see the write; null when not measured.
   */
  readonly read_back_checks: number | null;
  readonly stale_reads: number | null;
  readonly dt: string;
}

export interface IntervalRow {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly step_id: string;
  readonly client_id: string;
  readonly t: number;
  readonly threads: number;
  readonly tps: number;
  readonly qps: number;
  readonly reads_per_s: number;
  readonly writes_per_s: number;
  readonly other_per_s: number;
  readonly lat_pct_ms: number;
  readonly errors_per_s: number;
  readonly reconnects_per_s: number;
  readonly queue_length: number | null;
  readonly concurrency: number | null;
  readonly dt: string;
}

/** runner: measured by the client runner itself (client CPU), the same on both backends. */
export type MetricSource = 'cloudwatch' | 'pi' | 'local' | 'runner';

export interface ServerMetricRow {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly step_id: string;
  /** DB instance id, or the client id for client-side metrics. */
  readonly instance_id: string;
  /** writer | reader | client */
  readonly role: string;
  /** CloudWatch AWS/RDS metric name where one exists (CPUUtilization, SelectThroughput, ...). */
  readonly metric: string;
  readonly ts: string;
  readonly value: number;
  readonly unit: string;
  readonly source: MetricSource;
  readonly dt: string;
}

/**
 * How complete the server metrics of one step are, per instance and metric: CloudWatch publishes a
 * minute's datapoint a minute or more after it ends, so a window collected too early misses its
 * last minutes. An average over an incomplete window covers only the datapoints received; readers
 * (the report) flag it rather than take it as the whole step's.
 */
export interface MetricWindowRow {
  readonly run_id: string;
  readonly cell_id: string;
  readonly variant: string;
  readonly step_id: string;
  readonly instance_id: string;
  readonly role: string;
  readonly metric: string;
  readonly source: MetricSource;
  /** The window the datapoints were asked for (on AWS whole minutes: start inclusive, end exclusive). */
  readonly window_start: string;
  readonly window_end: string;
  /** Seconds per datapoint (CloudWatch 60, PI its period; locally the sampler's interval). */
  readonly period_s: number;
  readonly expected: number;
  readonly received: number;
  /** received >= expected. */
  readonly complete: boolean;
  readonly collected_at: string;
  readonly dt: string;
}

/**
 * One verdict of a run: a step (by what it ran) and metric of the run judged against the last stable
 * segment of its experiment's history (core/regression/history.ts, latestVerdict). Written once per
 * run after it finished (the ComputeVerdicts Task), so the lake keeps every night's verdicts.
 */
export interface VerdictsRow {
  readonly run_id: string;
  /** The experiment's name (runs.spec_name). */
  readonly experiment: string;
  readonly variant: string;
  readonly workload: string;
  readonly threads: number;
  readonly rate: number;
  readonly target: string;
  /** Short hash of the step's measurement definition: a new hash starts a new series. */
  readonly measurement_hash: string;
  /** tps | qps | latency | errors */
  readonly metric: string;
  /** "TPS", "p95 latency", ... */
  readonly metric_label: string;
  /** improved | regressed | within-noise | unknown | not-judged */
  readonly verdict: string;
  readonly value: number | null;
  readonly baseline_mean: number | null;
  readonly baseline_runs: number;
  /** value / baseline_mean. */
  readonly ratio: number | null;
  /** The prediction interval of the baseline the value was judged against. */
  readonly interval_low: number | null;
  readonly interval_high: number | null;
  /** The change point after the baseline, when the run is in a segment too young to judge against. */
  readonly since_run_id: string | null;
  readonly reason: string;
  readonly computed_at: string;
  readonly dt: string;
}

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
     * The cell Map's item at a position: which cell (or duet) it is, written by PlanRun, read by the
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
