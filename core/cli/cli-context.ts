/** What bin/aurora-bench.ts hands the commands, since core/cli reads no environment. */
export interface CliContext {
  /** The checkout, with package.json, cdk.json, prices/ and experiments/. */
  readonly repoRoot: string;
  /** Where a workload an experiment names without a path is found. */
  readonly builtinWorkloads: string;
  /** AURORA_BENCH_RUN_ROOT, where local runs keep datadirs, sockets and their registry. */
  readonly runRoot: string | undefined;
}
