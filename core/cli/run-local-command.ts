/**
 * The `run --local` command around runLocal.
 * It exits 0 when all steps are ok, 1 for a failed run, and 128 + the signal's number when stopped.
 */
import { printOut } from './terminal';
import { listenForStopSignals, stoppedExitCode } from './stop-signals';
import { LocalBackend } from '../backends/local/local-backend';
import { checkLocalDependencies } from '../backends/local/preflight';
import type { Scale } from '../experiment/scale';
import { runLocal } from './run-local';
import { resultsCommand } from './results-command';
import { commandLine } from '../format';

export interface RunLocalCommandOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly lakeDir: string;
  readonly runId?: string;
  /** Where run directories go. The default is the local backend's, under the temp dir. */
  readonly runRoot?: string;
  readonly scale?: Scale;
}

export async function runLocalCommand(options: RunLocalCommandOptions): Promise<number> {
  const log = (line: string) => printOut(line + '\n');
  // A missing mariadbd or sysbench is said, with how to install it, before anything starts.
  const versions = await checkLocalDependencies();
  const backend = new LocalBackend({
    lakeDir: options.lakeDir,
    repoRoot: options.repoRoot,
    ...(options.runRoot ? { runRoot: options.runRoot } : {}),
  });
  const stop = listenForStopSignals('run', 'forced exit: run `aurora-bench cleanup` to remove what is left');
  try {
    const result = await runLocal({
      specFile: options.specFile,
      repoRoot: options.repoRoot,
      lakeDir: options.lakeDir,
      backend,
      serverVersion: versions.serverVersion,
      signal: stop.signal,
      log,
      ...(options.runId ? { runId: options.runId } : {}),
      ...(options.scale ? { scale: options.scale } : {}),
    });
    if (result.status === 'ABORTED') {
      log(`run ${result.plan.runId} aborted (${result.cause ?? 'stopped'}); everything was torn down.`);
      return stoppedExitCode(stop.signal.reason);
    }
    if (result.status === 'TIMED_OUT') {
      log(`run ${result.plan.runId} TIMED OUT (${result.error}): ${result.cause ?? ''}; everything was torn down.`);
      return 1;
    }
    log('');
    log(await resultsCommand({ lakeDir: options.lakeDir, run: result.plan.runId, repoRoot: options.repoRoot }));
    if (result.status === 'SUCCEEDED') {
      log(
        `run ${result.plan.runId} succeeded: ${result.output?.steps ?? 0} steps. Query ` +
          `with: ${queryHint(options.lakeDir, result.plan.runId)}`,
      );
      return 0;
    }
    log(`run ${result.plan.runId} FAILED (${result.error}):\n${result.cause ?? ''}`);
    return 1;
  } finally {
    stop.dispose();
  }
}

/**
 * The command that queries this run's steps, as it must be typed anywhere.
 * The default lake is relative to the working directory, so it is named.
 * `results --sql` queries the whole lake, so the run goes in the SQL.
 */
function queryHint(lakeDir: string, runId: string): string {
  return commandLine([
    'aurora-bench',
    'results',
    '--lake',
    lakeDir,
    '--sql',
    `select * from step_summary where run_id = '${runId.replace(/'/g, "''")}'`,
  ]);
}
