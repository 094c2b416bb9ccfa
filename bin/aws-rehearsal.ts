/**
 * What `aurora-bench run --aws-rehearsal` is made of, put together where core/ may not: the state
 * machine synthesized from the real stack (lib/), and the deps a Task Lambda builds from the
 * environment the stack gives it (core/task-deps/aws-task-deps.ts), here from the rehearsal's
 * AwsBackendConfig through the same environment variables (awsConfigToEnv, parsed back by the
 * handler code). The CLI and the rehearsal tests use this one wiring.
 */
import type { RehearsalOptions } from '../core/rehearsal/run-rehearsal';
import { awsConfigToEnv, GIT_SHA_ENV, TOOL_VERSION_ENV } from '../core/backends/aws/config';
import { toolInfo } from '../core/cli/tool-info';
import { athenaJudge } from '../core/regression/judge';
import { buildAwsTaskDeps } from '../core/task-deps/aws-task-deps';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { synthesizeWorkflowCached, type SynthesizedWorkflow } from '../lib/synthesized-workflow';
import { renderedBootUserData } from '../lib/client-user-data';

/** Where syntheses are kept between processes: $XDG_CACHE_HOME/aurora-bench, else ~/.cache/aurora-bench. */
export function synthesisCacheDir(): string {
  const base = process.env['XDG_CACHE_HOME'];
  return join(base !== undefined && base !== '' ? base : join(homedir(), '.cache'), 'aurora-bench');
}

export function rehearsalWiring(repoRoot: string): Pick<RehearsalOptions, 'synthesize' | 'buildTaskDeps' | 'boot'> {
  const info = toolInfo(repoRoot);
  // One synthesis per region (seconds each): a process that rehearses several runs reuses it, and the
  // next process finds it on disk while nothing it depends on has changed (synthesizeWorkflowCached).
  const synthesized = new Map<string, SynthesizedWorkflow>();
  const cacheDir = synthesisCacheDir();
  return {
    synthesize: (region) => {
      if (!synthesized.has(region)) synthesized.set(region, synthesizeWorkflowCached({ projectRoot: repoRoot, region }, cacheDir));
      return synthesized.get(region)!;
    },
    // The launch templates' user data, rendered as the stack renders it for this bucket and region.
    boot: (config) => renderedBootUserData({ bucket: config.bucket, region: config.region }),
    buildTaskDeps: (config, clients) =>
      Promise.resolve().then(() =>
        buildAwsTaskDeps(
          { ...awsConfigToEnv(config), [TOOL_VERSION_ENV]: info.version, ...(info.gitSha ? { [GIT_SHA_ENV]: info.gitSha } : {}) },
          {
            clients,
            judge: (c, cl) => athenaJudge(c, cl.athena),
          },
        ),
      ),
  };
}
