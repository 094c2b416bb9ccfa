/**
 * The Backend port: everything the workflow's logic needs from the world.
 * Every value crossing it is plain JSON, because it travels in the state machine's data between Tasks.
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
  /** Lake partition date for every row and raw object of the run. */
  readonly dt: string;
  readonly ttlHours: number;
}

export interface Endpoint {
  /** Writer or reader instance id. On AWS it is the DBInstanceIdentifier. */
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly host: string;
  readonly port: number;
  readonly az?: string;
}

export interface ClientRef {
  /** EC2 instance id on AWS, `client-N` locally. */
  readonly clientId: string;
  readonly az?: string;
}

/** Where the database user's password lives. The password itself never crosses this port. */
interface CredentialRef {
  readonly user: string;
  /** Secrets Manager ARN on AWS, a key the local backend resolves locally. */
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
  /** Parameters that do not apply on this backend, versions, and anything else worth reporting. */
  readonly notes: readonly PlanNote[];
  /** Backend-specific identifiers that teardown needs. */
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
  /** `${cellId}/${stepId}/${phase}/${clientId}`, unique within a run. */
  readonly jobId: string;
  readonly phase: RunnerPhase;
  readonly clientId: string;
  readonly endpoint: Endpoint;
  /** Stock test name, or the file name of a custom Lua script. */
  readonly workload: string;
  /** sysbench options without connection options. The runner adds those from the job and the credential. */
  readonly sysbenchArgs: readonly string[];
  /** sysbench's database driver for the cell's engine. Absent means mysql. */
  readonly driver?: 'mysql' | 'pgsql';
  /** Lake key prefix, ending in '/', that the runner writes its files under. */
  readonly outputPrefix: string;
  /**
   * The job sends writes to a reader of a write-forwarding variant, at this consistency level.
   * Set only for a backend whose writeForwarding is "emulated", which adapts the job itself.
   */
  readonly writeForwarding?: { readonly consistency: string };
  /**
   * The first client's job of a step whose data is prepared afresh.
   * It drops and prepares the tables first, and runs only if that prepare succeeded.
   * So a step takes one job instead of a prepare job and a run job.
   */
  readonly prepareFirst?: {
    readonly outputPrefix: string;
    readonly endpoint: Endpoint;
    readonly sysbenchArgs: readonly string[];
  };
  /**
   * The prepares the job waits for. It runs only if every one succeeded.
   * A cell's other clients await its first client's prepare.
   * In a duet every job awaits every other member's prepare, so all members' runs start together.
   */
  readonly awaitPrepareOf?: readonly string[];
  /** With either, the run starts this many seconds after the last prepare ended, on every client at once. */
  readonly startAfterPrepareS?: number;
}

export interface JobHandle {
  readonly jobId: string;
  readonly clientId: string;
  readonly phase: RunnerPhase;
  readonly outputPrefix: string;
  /** pid locally, SSM CommandId on AWS. */
  readonly ref: string;
  readonly startedAt: string;
}

export interface JobsState {
  readonly done: boolean;
  readonly running: number;
  /** Per job, the runner's own end state, where the backend can tell without reading the output. */
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

/** How many datapoints one instance's metric should have in a window, and how many came. */
export interface MetricWindowCount {
  readonly instanceId: string;
  /** A cluster-level metric, such as an Aurora volume's I/O, has the cluster's id and role cluster. */
  readonly role: 'writer' | 'reader' | 'cluster';
  readonly metric: string;
  readonly source: MetricSource;
  /** The window as asked for. A backend may align it to whole minutes. */
  readonly start: string;
  readonly end: string;
  readonly periodS: number;
  readonly expected: number;
  readonly received: number;
}

export interface ServerMetricsCollection {
  readonly rows: readonly ServerMetricRow[];
  /** One per instance and metric asked for, also when nothing came back. */
  readonly windows: readonly MetricWindowCount[];
}

export interface TeardownReport {
  readonly deleted: readonly string[];
  /** Resources that were already gone. Teardown is idempotent, so not-found is success. */
  readonly alreadyGone: readonly string[];
}

/** A key-value store of objects. It is a directory locally and an S3 bucket on AWS. */
export interface LakeStore {
  put(key: string, body: string | Uint8Array): Promise<void>;
  /** undefined when the key does not exist. */
  get(key: string): Promise<string | undefined>;
  list(prefix: string): Promise<string[]>;
  /**
   * Writes `key` atomically, only if nothing is there. False when it exists.
   * Run ids are claimed so, and of two runs claiming one id exactly one gets it.
   */
  createOnce?(key: string, body: string): Promise<boolean>;
  /** Human-readable location, e.g. file:///home/me/.aurora-bench/lake or s3://bucket/prefix. */
  describe(): string;
}

export interface Backend {
  readonly kind: BackendKind;
  readonly lake: LakeStore;
  /**
   * Seconds after a window ends until its server metrics are all published.
   * On AWS a minute's datapoint comes after the minute is over. The local sampler has them at once.
   * Windows collected earlier are collected again once this has passed.
   */
  readonly metricsPublishDelayS: number;
  /** What it does with a job whose writes go to a reader of a write-forwarding variant. */
  readonly writeForwarding: WriteForwardingSupport;

  /** Create the cell's parameter groups, cluster and instances, or find them on retry. Idempotent. */
  provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources>;
  checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState>;
  /** Start the cell's client machines. Locally they are processes, so nothing starts. Idempotent. */
  startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources>;
  checkClientsReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState>;
  /** Start the runner for each job. Locally the run phase also starts sampling server metrics. */
  startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]>;
  checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState>;
  /** Stop any job still running, after a timeout or a failing execution. Idempotent. */
  stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void>;
  /** Server-side metrics over the step's window, with how complete each one is. Safe to call again. */
  collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection>;
  /**
   * After a step that read from readers, whether each reader still replicates from the writer.
   * A reader whose replication broke served stale data however well sysbench did.
   * A backend that cannot tell omits it. On AWS, Aurora replicas share the cluster volume.
   */
  replicationHealth?(run: RunContext, cell: CellPlan, resources: CellResources): Promise<readonly ReplicaHealth[]>;
  /**
   * The cell's resources as the cloud lists them now, with creation times, for the bill.
   * A local backend bills nothing, so it is optional.
   */
  observeCellResources?(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources | undefined,
  ): Promise<readonly ObservedResource[]>;
  /** Delete everything of the cell in dependency order. */
  teardownCell(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<TeardownReport>;
  /**
   * Tell the people who watch the runs what a finished run's verdicts are.
   * On AWS that is a CloudWatch datapoint per verdict and the run's count of regressions, which an alarm watches.
   * A regression also sends an EventBridge event and an SNS notification.
   * Locally the lake and the run's output are the only channel, so nothing is sent.
   */
  publishVerdicts(run: RunContext, verdicts: readonly VerdictsRow[]): Promise<VerdictPublication>;
}

/** What publishVerdicts sent. */
export interface VerdictPublication {
  /** "aws" when it went to CloudWatch, EventBridge and SNS, or "none" for the local backend. */
  readonly channel: 'aws' | 'none';
  /** CloudWatch datapoints put. */
  readonly metricDatapoints: number;
  /** The EventBridge event's id, only on a regression. */
  readonly eventId: string | null;
  /** The SNS message id, only on a regression with a topic. */
  readonly notificationId: string | null;
}

export interface ReplicaHealth {
  readonly instanceId: string;
  readonly healthy: boolean;
  /** Why not, such as a stopped thread or a writer that is gone. Empty when healthy. */
  readonly detail: string;
}

/** Errors a Retry clause retries. The backend throws them for throttling and transient API failures. */
export class TransientBackendError extends AuroraBenchError {
  override readonly name = 'TransientBackendError';
}

/** The spec asks for something this backend cannot do, such as an unknown instance class. */
export class UnsupportedOnBackendError extends AuroraBenchError {
  override readonly name = 'UnsupportedOnBackendError';
}

/** A required program or service is missing. The message says how to install it. */
export class MissingDependencyError extends AuroraBenchError {
  override readonly name = 'MissingDependencyError';
}

/**
 * Teardown made every call it could, but something is still deleting.
 * The TeardownCell Retry waits and calls again.
 */
export class ResourceStillInUseError extends AuroraBenchError {
  override readonly name = 'ResourceStillInUseError';
}
