import type { SweepReport } from '../../core/backends/aws/sweeper';

export type { SweepReport };

export interface SweeperDeps {
  readonly now: () => Date;
  /** Delete every resource tagged with a run whose expires-at is before `now`. Idempotent. */
  sweepExpired(now: Date): Promise<SweepReport>;
  /**
   * Delete everything tagged with the run, in dependency order. Idempotent.
   * What is still pending is marked to expire at `now`, so the next scheduled sweep finishes it.
   */
  teardownRun(runId: string, now: Date): Promise<SweepReport>;
  /** The run id PlanRun returned in this execution. Undefined when it never succeeded. */
  runIdOfExecution(executionArn: string): Promise<string | undefined>;
}
