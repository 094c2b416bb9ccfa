/**
 * What `aurora-bench run --aws-rehearsal` is made of, put together where core/ may not.
 * It joins the bundled stack, the environment it gives the functions, and the in-process deps.
 * The CLI and the rehearsal tests share this one wiring.
 */
import type { RehearsalOptions } from '../core/rehearsal/run-rehearsal';
import { awsConfigToEnv, GIT_SHA_ENV, TOOL_VERSION_ENV, type AwsBackendConfig } from '../core/backends/aws/config';
import { toolInfo } from '../core/cli/tool-info';
import { athenaJudge } from '../core/regression/judge';
import { buildAwsTaskDeps } from '../core/task-deps/aws-task-deps';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { lambdaRuntimeModules } from '../core/rehearsal/lambda-sandbox';
import { synthesizeBundledCached, synthesizeTemplateCached } from '../lib/synthesized-workflow';
import { renderedBootUserData } from '../lib/client-user-data';

/** Where syntheses are kept between processes. */
export function synthesisCacheDir(): string {
  const base = process.env['XDG_CACHE_HOME'];
  return join(base !== undefined && base !== '' ? base : join(homedir(), '.cache'), 'aurora-bench');
}

/**
 * CDK's bundling writes its progress to stderr, which the rehearsal keeps for failures.
 * So on a synthesis not cached yet, that progress goes to stdout with the rehearsal's own lines.
 */
function stderrToStdout<T>(synthesize: () => T): T {
  const { stderr, stdout } = process;
  const write = stderr.write.bind(stderr);
  stderr.write = stdout.write.bind(stdout);
  try {
    return synthesize();
  } finally {
    stderr.write = write;
  }
}

export function rehearsalWiring(
  repoRoot: string,
): Pick<
  RehearsalOptions,
  'synthesize' | 'buildTaskDeps' | 'boot' | 'taskEnvironment' | 'lambdaRuntimeModules' | 'trinoEndpoint'
> {
  const info = toolInfo(repoRoot);
  // One synthesis per region takes tens of seconds with the bundling.
  // A process that rehearses several runs reuses it, and the next process finds it on disk.
  const synthesized = new Map<string, ReturnType<RehearsalOptions['synthesize']>>();
  const cacheDir = synthesisCacheDir();
  const taskEnvironment = (config: AwsBackendConfig) => ({
    ...awsConfigToEnv(config),
    [TOOL_VERSION_ENV]: info.version,
    ...(info.gitSha ? { [GIT_SHA_ENV]: info.gitSha } : {}),
  });
  // A test run's one Trino, when there is one. Otherwise each rehearsal starts its own.
  const trino = process.env['AURORA_BENCH_TRINO'];
  return {
    ...(trino ? { trinoEndpoint: trino } : {}),
    synthesize: (region) => {
      if (!synthesized.has(region))
        synthesized.set(
          region,
          stderrToStdout(() => ({
            ...synthesizeBundledCached({ projectRoot: repoRoot, region }, cacheDir),
            template: synthesizeTemplateCached({ projectRoot: repoRoot, region }, cacheDir),
          })),
        );
      return synthesized.get(region)!;
    },
    taskEnvironment,
    lambdaRuntimeModules: () => lambdaRuntimeModules(join(repoRoot, 'node_modules'), cacheDir),
    // The launch templates' user data, rendered as the stack renders it for this bucket and region.
    boot: (config) => renderedBootUserData({ bucket: config.bucket, region: config.region }),
    buildTaskDeps: (config, clients) =>
      Promise.resolve().then(() =>
        buildAwsTaskDeps(taskEnvironment(config), {
          clients,
          judge: (c, cl) => athenaJudge(c, cl.athena),
        }),
      ),
  };
}
