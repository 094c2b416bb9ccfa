/**
 * What bin/aurora-bench.ts knows and hands to the commands of core/cli: where the checkout is, and
 * what the environment says (bin reads it; core/cli reads no environment).
 */
export interface CliContext {
  /** The checkout: package.json, cdk.json, prices/, experiments/. */
  readonly repoRoot: string;
  /** client/workloads: where a workload an experiment names without a path is found. */
  readonly builtinWorkloads: string;
  /** AURORA_BENCH_RUN_ROOT: where local runs keep datadirs, sockets and their registry (unset: the default). */
  readonly runRoot: string | undefined;
}
