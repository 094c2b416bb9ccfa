/**
 * The AWS backend: one cell = one Aurora cluster (Aurora MySQL or PostgreSQL: writer + readers in
 * the variant's AZ, its own cluster and instance parameter groups) or one RDS DB instance with read
 * replicas (RDS for MySQL, MariaDB, PostgreSQL: its own DB parameter group), plus EC2 clients driven
 * by SSM Run Command. This class only composes the Backend port from one module per concern, each
 * given the SDK clients it uses:
 *   cluster.ts       Aurora: parameter groups, cluster, instances, cell readiness (RDS)
 *   db-instances.ts  RDS DB instances: parameter group, source instance, read replicas, readiness
 *   self-managed-servers.ts  self-managed servers on EC2: credentials secret, instances, setup through SSM
 *   client-fleet.ts  client instances and their readiness (EC2, SSM, the ready marker in S3)
 *   jobs.ts          runner jobs (SSM Run Command)
 *   metrics.ts       server metrics of a step window (CloudWatch, Performance Insights)
 *   teardown.ts      deleting a cell's resources (EC2, RDS)
 *   s3-lake.ts       the results lake (S3)
 *   verdict-alerts.ts a run's verdicts as metrics, and on a regression an event and a notification
 */
import type {
  Backend,
  CellResources,
  JobHandle,
  JobsState,
  MetricsWindow,
  ReadyState,
  RunContext,
  RunnerJob,
  ServerMetricsCollection,
  TeardownReport,
  VerdictPublication,
} from '../../backend';
import { lakeKeys, type VerdictsRow } from '../../lake/rows';
import type { CellPlan } from '../../plan/types';
import { ClientFleet } from './client-fleet';
import type { AwsClients } from './clients';
import { AuroraClusters, cellEngineOf } from './cluster';
import { RdsInstances } from './db-instances';
import { SelfManagedServers } from './self-managed-servers';
import { ENGINES } from '../../aurora/engines';
import type { AwsBackendConfig } from './config';
import { RunCommandJobs } from './jobs';
import { ServerMetrics } from './metrics';
import { tagKeys, type TagKeys } from './names';
import { S3LakeStore } from './s3-lake';
import { teardownCell } from './teardown';
import { observeCellResources } from './lifetimes';
import type { ObservedResource } from '../../plan/bill';
import { publishVerdicts } from './verdict-alerts';

export interface AwsBackendOptions {
  readonly config: AwsBackendConfig;
  readonly clients: AwsClients;
  readonly now?: () => Date;
}

export class AwsBackend implements Backend {
  readonly kind = 'aws' as const;
  readonly lake: S3LakeStore;
  readonly metricsPublishDelayS: number;
  /**
   * Local write forwarding: an Aurora Replica of a cluster with it enabled forwards the writes it
   * receives to the writer (Aurora User Guide, "Using local write forwarding in an Amazon Aurora
   * MySQL DB cluster"): a job's writes to a reader run as they are.
   */
  readonly writeForwarding = 'native' as const;
  private readonly clients: AwsClients;
  private readonly tags: TagKeys;
  private readonly clusters: AuroraClusters;
  private readonly instances: RdsInstances;
  private readonly servers: SelfManagedServers;
  private readonly fleet: ClientFleet;
  private readonly jobs: RunCommandJobs;
  private readonly metrics: ServerMetrics;
  private readonly config: AwsBackendConfig;
  private readonly now: () => Date;

  constructor(options: AwsBackendOptions) {
    const { config, clients } = options;
    const now = options.now ?? (() => new Date());
    this.metricsPublishDelayS = config.metricsPublishDelayS;
    this.clients = clients;
    this.config = config;
    this.now = now;
    this.tags = tagKeys(config.tagKeyPrefix);
    this.lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    this.clusters = new AuroraClusters({ clients, config, now });
    this.instances = new RdsInstances({ clients, config, now });
    this.fleet = new ClientFleet({ clients, config, now });
    this.servers = new SelfManagedServers({ clients, config, now, architectureOf: (type) => this.fleet.architectureOf(type) });
    this.jobs = new RunCommandJobs({ clients, config, lake: this.lake, now });
    this.metrics = new ServerMetrics({ clients, config });
  }

  /** Where a cell's databases come from: an Aurora cluster, RDS DB instances, or self-managed servers on EC2. */
  private databasesOf(run: RunContext, cell: CellPlan): AuroraClusters | RdsInstances | SelfManagedServers {
    const topology = ENGINES[cellEngineOf(run, cell).kind].topology;
    return topology === 'instance' ? this.instances : topology === 'ec2' ? this.servers : this.clusters;
  }

  provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    return this.databasesOf(run, cell).provisionCell(run, cell);
  }

  checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return this.databasesOf(run, cell).checkCellReady(run, cell, resources);
  }

  startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    return this.fleet.startClients(run, cell, resources);
  }

  checkClientsReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return this.fleet.checkClientsReady(run, cell, resources);
  }

  startJobs(run: RunContext, cell: CellPlan, resources: CellResources, jobs: readonly RunnerJob[]): Promise<JobHandle[]> {
    return this.jobs.startJobs(run, cell, resources, jobs);
  }

  checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    return this.jobs.checkJobs(run, handles);
  }

  stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    return this.jobs.stopJobs(run, handles);
  }

  collectServerMetrics(run: RunContext, cell: CellPlan, resources: CellResources, window: MetricsWindow): Promise<ServerMetricsCollection> {
    return this.metrics.collectServerMetrics(run, cell, resources, window);
  }

  observeCellResources(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<ObservedResource[]> {
    return observeCellResources(this.clients, this.tags, run, cell, resources);
  }

  teardownCell(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<TeardownReport> {
    return teardownCell(this.clients, this.tags, run, cell, resources);
  }

  publishVerdicts(run: RunContext, verdicts: readonly VerdictsRow[]): Promise<VerdictPublication> {
    const { cloudwatch, events, sns } = this.clients;
    return publishVerdicts(
      {
        cloudwatch,
        events,
        sns,
        eventBusName: this.config.eventBusName ?? 'default',
        ...(this.config.alertTopicArn !== undefined ? { topicArn: this.config.alertTopicArn } : {}),
        now: this.now,
      },
      run,
      verdicts,
      `s3://${this.config.bucket}/${this.config.lakePrefix}${lakeKeys.verdicts(run.dt, run.runId)}`,
    );
  }
}
