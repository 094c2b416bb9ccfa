/**
 * The AWS backend. A cell is one Aurora cluster or one RDS DB instance with read replicas, plus EC2 clients.
 * Each part in parts/ gets only the SDK clients it uses, so a Task's Lambda composes just its own parts.
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
import type { VerdictsRow } from '../../lake/rows';
import type { CellPlan } from '../../plan/types';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { cellTeardownPart } from './parts/cell-teardown';
import { clientMachinesPart } from './parts/client-machines';
import type { BackendOperations } from './parts/compose';
import { databasesPart } from './parts/databases';
import { runnerJobsPart } from './parts/runner-jobs';
import { serverMetricsPart } from './parts/server-metrics';
import { verdictAlertsPart } from './parts/verdict-alerts';
import { S3LakeStore } from './s3-lake';
import type { ObservedResource } from '../../plan/bill';

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
   * A reader with local write forwarding sends the writes it receives to the writer.
   * So a job's writes to a reader run as they are.
   * See the Aurora User Guide, "Using local write forwarding in an Amazon Aurora MySQL DB cluster".
   */
  readonly writeForwarding = 'native' as const;
  private readonly operations: BackendOperations;

  constructor(options: AwsBackendOptions) {
    const { config, clients } = options;
    const now = options.now ?? (() => new Date());
    this.metricsPublishDelayS = config.metricsPublishDelayS;
    this.lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    const part = { clients, config, now };
    this.operations = {
      ...databasesPart(part),
      ...clientMachinesPart(part),
      ...runnerJobsPart({ ...part, lake: this.lake }),
      ...serverMetricsPart(part),
      ...cellTeardownPart(part),
      ...verdictAlertsPart(part),
    };
  }

  provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    return this.operations.provisionCell(run, cell);
  }

  checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return this.operations.checkCellReady(run, cell, resources);
  }

  startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    return this.operations.startClients(run, cell, resources);
  }

  checkClientsReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    return this.operations.checkClientsReady(run, cell, resources);
  }

  startJobs(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    jobs: readonly RunnerJob[],
  ): Promise<JobHandle[]> {
    return this.operations.startJobs(run, cell, resources, jobs);
  }

  checkJobs(run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    return this.operations.checkJobs(run, handles);
  }

  stopJobs(run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    return this.operations.stopJobs(run, handles);
  }

  collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection> {
    return this.operations.collectServerMetrics(run, cell, resources, window);
  }

  observeCellResources(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources | undefined,
  ): Promise<readonly ObservedResource[]> {
    return this.operations.observeCellResources!(run, cell, resources);
  }

  teardownCell(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<TeardownReport> {
    return this.operations.teardownCell(run, cell, resources);
  }

  publishVerdicts(run: RunContext, verdicts: readonly VerdictsRow[]): Promise<VerdictPublication> {
    return this.operations.publishVerdicts(run, verdicts);
  }
}
