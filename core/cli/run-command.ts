/**
 * `aurora-bench run` checks the flags, then runs locally, on AWS or as the AWS rehearsal.
 * Each path is loaded only when it runs, and the exit code is the run's.
 */
import { resolve } from 'node:path';
import { UsageError } from '../errors';
import { checkRunId } from '../plan/run-id';
import type { Scale } from '../experiment/scale';
import type { CliContext } from './cli-context';
import type { RehearsalCommandOptions } from './run-rehearsal-command';

export interface RunFlags {
  readonly aws?: boolean;
  readonly awsRehearsal?: boolean;
  readonly lake: string;
  readonly runId?: string;
  readonly stack: string;
  readonly region?: string;
  readonly scale: Scale;
}

/** What the rehearsal takes from outside core: the synthesized stack and the Lambda handlers. */
type RehearsalWiring = Pick<
  RehearsalCommandOptions,
  'synthesize' | 'buildTaskDeps' | 'boot' | 'taskEnvironment' | 'lambdaRuntimeModules' | 'trinoEndpoint'
>;

export interface RunContext extends Pick<CliContext, 'repoRoot' | 'runRoot'> {
  /** Loads the rehearsal's wiring, only for --aws-rehearsal. */
  readonly rehearsalWiring: () => Promise<RehearsalWiring>;
}

export async function runAction(file: string, opts: RunFlags, context: RunContext): Promise<number> {
  const { repoRoot, runRoot } = context;
  if (opts.aws && opts.awsRehearsal) throw new UsageError('give either --aws or --aws-rehearsal');
  checkRunId(opts.runId);
  if (opts.awsRehearsal) {
    const { runRehearsalCommand } = await import('./run-rehearsal-command');
    return runRehearsalCommand({
      specFile: file,
      repoRoot,
      scale: opts.scale,
      lakeDir: resolve(opts.lake),
      ...(opts.runId ? { runId: opts.runId } : {}),
      ...(runRoot ? { runRoot } : {}),
      ...(await context.rehearsalWiring()),
    });
  }
  if (opts.aws) {
    if (opts.scale !== 'full')
      throw new UsageError('--scale small is for local rehearsals; on AWS run the experiment as written');
    const { runAwsCommand } = await import('./run-aws-command');
    return runAwsCommand({
      specFile: file,
      repoRoot,
      stackName: opts.stack,
      ...(opts.region ? { region: opts.region } : {}),
      ...(opts.runId ? { runId: opts.runId } : {}),
    });
  }
  const { runLocalCommand } = await import('./run-local-command');
  return runLocalCommand({
    specFile: file,
    repoRoot,
    lakeDir: resolve(opts.lake),
    ...(opts.runId ? { runId: opts.runId } : {}),
    ...(runRoot ? { runRoot } : {}),
    scale: opts.scale,
  });
}
