/** What the sweeper needs from the world: implemented by the AWS backend (core/backends/aws). */
export interface SweepReport {
  readonly deleted: readonly string[];
  readonly alreadyGone: readonly string[];
  /** Resources that could not be deleted yet (e.g. a cluster still deleting its instances). */
  readonly pending?: readonly string[];
}

export interface SweeperDeps {
  readonly now: () => Date;
  /** Delete every resource tagged with a run whose expires-at is before `now`. Idempotent. */
  sweepExpired(now: Date): Promise<SweepReport>;
  /** Delete everything tagged with the run, in dependency order. Idempotent. */
  teardownRun(runId: string): Promise<SweepReport>;
  /** The run id PlanRun returned in this execution, or undefined when it never succeeded. */
  runIdOfExecution(executionArn: string): Promise<string | undefined>;
}
