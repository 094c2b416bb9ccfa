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
import { synthesizeWorkflow } from '../lib/synthesized-workflow';

export function rehearsalWiring(repoRoot: string): Pick<RehearsalOptions, 'synthesize' | 'buildTaskDeps'> {
  const info = toolInfo(repoRoot);
  // One synthesis per region (seconds each): a process that rehearses several runs reuses it.
  const synthesized = new Map<string, ReturnType<typeof synthesizeWorkflow>>();
  return {
    synthesize: (region) => {
      if (!synthesized.has(region)) synthesized.set(region, synthesizeWorkflow({ projectRoot: repoRoot, region }));
      return synthesized.get(region)!;
    },
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
