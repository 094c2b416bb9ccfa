/**
 * The Backend port: everything the workflow's logic needs from the world, implemented once for AWS
 * (RDS, EC2, SSM, CloudWatch, PI, S3) and once locally (mariadbd processes, the runner as a process,
 * a directory lake). Every value crossing it is plain JSON, because it travels through the state
 * machine's data between Tasks.
 */
import type { BackendKind, CellPlan, PlanNote, WriteForwardingSupport } from './plan/types';
import type { ObservedResource } from './plan/bill';
import type { RunnerPhase } from './sysbench/types';
import type { ServerMetricRow, VerdictsRow } from './lake/rows';
import type { MetricSource } from './lake/schema';
import { AuroraBenchError } from './errors';

/** The slice of the plan every backend call needs. */
export interface RunContext {
  readonly runId: string;
  readonly specName: string;
  readonly backend: BackendKind;
  readonly region: string;
  readonly engineVersion: string;
  /** Lake partition date (YYYY-MM-DD) for every row and raw object of the run. */
  readonly dt: string;
  readonly ttlHours: number;
}

export interface Endpoint {
  /** Writer or reader instance id (AWS DBInstanceIdentifier; locally `${clusterId}-w` / `-r1`...). */
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly host: string;
  readonly port: number;
  readonly az?: string;
}

export interface ClientRef {
  /** EC2 instance id on AWS; `client-N` locally. */
  readonly clientId: string;
  readonly az?: string;
}

/** Where the database user's password lives; the password itself never crosses this port. */
interface CredentialRef {
  readonly user: string;
  /** Secrets Manager ARN on AWS; a local key the local backend resolves. */
  readonly secretRef: string;
}

export interface CellResources {
  readonly cellId: string;
  readonly clusterId: string;
  /** Present once the cluster is ready. */
  readonly writer?: Endpoint;
  readonly readers: readonly Endpoint[];
  readonly clients: readonly ClientRef[];
  readonly credentials: CredentialRef;
  /** Parameters not applicable on this backend, versions, and anything else worth reporting. */
  readonly notes: readonly PlanNote[];
  /** Backend-specific identifiers teardown needs (parameter group names, pids, ...). */
  readonly backendState: Readonly<Record<string, string>>;
}

export interface ReadyState {
  readonly ready: boolean;
  readonly resources: CellResources;
  /** What is still pending, for the execution history. */
  readonly detail: string;
}

/** One invocation of client/runner.js on one client. */
export interface RunnerJob {
  /** `${cellId}/${stepId}/${phase}/${clientId}`: unique within a run. */
  readonly jobId: string;
  readonly phase: RunnerPhase;
  readonly clientId: string;
  readonly endpoint: Endpoint;
  /** Stock test name (oltp_read_only) or the file name of a custom Lua script (fullscan_1kb.lua). */
  readonly workload: string;
  /**
   * sysbench options from core/sysbench/command.ts, without connection options: the runner adds
   * --mysql-host/--mysql-port/--mysql-user/--mysql-password from the job and the credential.
   */
  readonly sysbenchArgs: readonly string[];
  /** sysbench's database driver for the cell's engine (client/runner.js --driver); absent: mysql. */
  readonly driver?: 'mysql' | 'pgsql';
  /** Lake key prefix, ending in '/', the runner writes output.log, client_cpu.jsonl, result.json under. */
  readonly outputPrefix: string;
  /**
   * The job sends writes to a reader of a variant that forwards writes, at this read consistency
   * level (StepPlan.forwardedWrites): set for a backend whose writeForwarding is "emulated",
   * which adapts the job itself.
   */
  readonly writeForwarding?: { readonly consistency: string };
  /**
   * A step whose data is prepared afresh (data.reuse "step"), the first client's job: it drops and
   * prepares the tables on this endpoint with these sysbench options, its files under this prefix
   * as a prepare job writes them, and runs only if that prepare succeeded (client/runner.js
   * --prepare-out): one job per step instead of a prepare job and a run job.
   */
  readonly prepareFirst?: {
    readonly outputPrefix: string;
    readonly endpoint: Endpoint;
    readonly sysbenchArgs: readonly string[];
  };
  /**
   * The prepares the job waits for (their files under these prefixes), running only if every one
   * succeeded (client/runner.js --await-prepare, one per prefix): a cell's other clients await its
   * first client's; in a duet every job of every member awaits every member's prepare but the one
   * it runs itself (a member's first job also prepares first), so that all members' runs start together.
   */
  readonly awaitPrepareOf?: readonly string[];
  /**
   * With either: the run starts this many seconds after the last of the prepares ended,
   * on every client of the step at once (client/runner.js --start-after-prepare).
   */
  readonly startAfterPrepareS?: number;
}

export interface JobHandle {
  readonly jobId: string;
  readonly clientId: string;
  readonly phase: RunnerPhase;
  readonly outputPrefix: string;
  /** pid locally; SSM CommandId on AWS. */
  readonly ref: string;
  readonly startedAt: string;
}

export interface JobsState {
  readonly done: boolean;
  readonly running: number;
  /** Per job: the runner's own end state, where the backend can tell without reading the output. */
  readonly jobs: readonly {
    readonly jobId: string;
    readonly state: 'running' | 'exited' | 'lost';
    readonly detail?: string;
  }[];
}

export interface MetricsWindow {
  readonly stepId: string;
  readonly start: string;
  readonly end: string;
}

/** For one instance and server metric of a window: how many datapoints it should have, how many came. */
export interface MetricWindowCount {
  readonly instanceId: string;
  /** A cluster-level metric (an Aurora volume's I/O) has the cluster's id and role cluster. */
  readonly role: 'writer' | 'reader' | 'cluster';
  readonly metric: string;
  readonly source: MetricSource;
  /** The window as asked for (a backend may align it, e.g. to whole minutes). */
  readonly start: string;
  readonly end: string;
  readonly periodS: number;
  readonly expected: number;
  readonly received: number;
}

export interface ServerMetricsCollection {
  readonly rows: readonly ServerMetricRow[];
  /** One per instance and metric the backend asked for, also when nothing came back. */
  readonly windows: readonly MetricWindowCount[];
}

export interface TeardownReport {
  readonly deleted: readonly string[];
  /** Resources that were already gone: teardown is idempotent, not-found is success. */
  readonly alreadyGone: readonly string[];
}

/** A key-value store of objects: a directory locally, an S3 bucket (and prefix) on AWS. */
export interface LakeStore {
  put(key: string, body: string | Uint8Array): Promise<void>;
  /** undefined when the key does not exist. */
  get(key: string): Promise<string | undefined>;
  list(prefix: string): Promise<string[]>;
  /**
   * Writes `key` only if nothing is there, atomically: false when it exists. A run id is claimed so
   * (lakeKeys.runClaim): of two runs claiming one id, exactly one gets it.
   */
  createOnce?(key: string, body: string): Promise<boolean>;
  /** Human-readable location, e.g. file:///home/me/.aurora-bench/lake or s3://bucket/prefix. */
  describe(): string;
}

export interface Backend {
  readonly kind: BackendKind;
  readonly lake: LakeStore;
  /**
   * Seconds after a window ends until its server metrics are all published (CloudWatch and
   * Performance Insights on AWS publish a minute's datapoint after it is over; the local sampler
   * has them at once: 0). Windows collected earlier are re-collected once this has passed.
   */
  readonly metricsPublishDelayS: number;
  /** What it does with a job whose writes go to a reader of a write-forwarding variant (RunnerJob.writeForwarding). */
  readonly writeForwarding: WriteForwardingSupport;

  /** Create (or find, on retry) the cell's parameter groups, cluster and instances. Idempotent. */
  provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources>;
  checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState>;
  /** Start the cell's client machines (locally: nothing to start, they are processes). Idempotent. */
  startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources>;
  checkClientsReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState>;
  /** Start the runner for each job; for the run phase also start sampling server metrics locally. */
  startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]>;
  checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState>;
  /** Stop any job still running (step timed out, execution failing). Idempotent. */
  stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void>;
  /**
   * Server-side metrics over the step's window (CloudWatch + PI on AWS, the local sampler locally),
   * with how complete each instance's metric is. Safe to call again for the same window.
   */
  collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection>;
  /**
   * After a step that read from readers: whether each reader still replicates from the writer. A
   * reader whose replication broke during the step served stale data however well sysbench did.
   * Optional: a backend that cannot tell (AWS, where Aurora replicas share the cluster volume) omits it.
   */
  replicationHealth?(run: RunContext, cell: CellPlan, resources: CellResources): Promise<readonly ReplicaHealth[]>;
  /**
   * The cell's resources as the cloud lists them now, with their creation times (the bill of what
   * really ran, core/plan/bill.ts). Optional: a local backend bills nothing.
   */
  observeCellResources?(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources | undefined,
  ): Promise<readonly ObservedResource[]>;
  /** Delete everything of the cell in dependency order (clients, instances, cluster, parameter groups). */
  teardownCell(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<TeardownReport>;
  /**
   * Tell the people who watch the runs what a finished run's verdicts are (the rows written to the
   * lake's verdicts table). On AWS: a CloudWatch datapoint per verdict (and the run's count of
   * regressions, which an alarm watches), and on a regression an EventBridge event and an SNS
   * notification. Locally the lake and the run's own output are the only channel: nothing is sent.
   */
  publishVerdicts(run: RunContext, verdicts: readonly VerdictsRow[]): Promise<VerdictPublication>;
}

/** What publishVerdicts sent. */
export interface VerdictPublication {
  /** Where: "aws" (CloudWatch, EventBridge, SNS) or "none" (the local backend has no channel). */
  readonly channel: 'aws' | 'none';
  /** CloudWatch datapoints put. */
  readonly metricDatapoints: number;
  /** The EventBridge event's id, when one was put (only on a regression). */
  readonly eventId: string | null;
  /** The SNS message id, when a notification was published (only on a regression, with a topic). */
  readonly notificationId: string | null;
}

export interface ReplicaHealth {
  readonly instanceId: string;
  readonly healthy: boolean;
  /** Why not (a stopped thread and its error, a writer that is gone); empty when healthy. */
  readonly detail: string;
}

/** Errors a Retry clause retries: the backend throws these for throttling and transient API failures. */
export class TransientBackendError extends AuroraBenchError {
  override readonly name = 'TransientBackendError';
}

/** The spec asks for something this backend cannot do (unknown instance class, missing AZ...). */
export class UnsupportedOnBackendError extends AuroraBenchError {
  override readonly name = 'UnsupportedOnBackendError';
}

/** A required program (mariadbd, sysbench) or service is missing; the message says how to install it. */
export class MissingDependencyError extends AuroraBenchError {
  override readonly name = 'MissingDependencyError';
}

/**
 * Teardown made every call it could, but something is still deleting (an RDS cluster waits for its
 * instances, a parameter group for its cluster). The ASL's TeardownCell Retry waits and calls again.
 */
export class ResourceStillInUseError extends AuroraBenchError {
  override readonly name = 'ResourceStillInUseError';
}
