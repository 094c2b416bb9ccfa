/** `aurora-bench results`: the local lake through DuckDB, or Athena with --aws. */
import { resolve } from 'node:path';
import { UsageError } from '../errors';
import { withLake } from '../lake/duckdb';
import { findRun, resultsText } from '../lake/results';
import { defaultRunRoot, ownerAlive, readClaim } from '../backends/local/registry';
import { printOut } from './terminal';
import type { CliContext } from './cli-context';

export interface ResultsCommandOptions {
  readonly lakeDir: string;
  readonly repoRoot: string;
  readonly run?: string;
  readonly sql?: string;
  /** Write the --sql result to this new file instead of printing it. Local lake only. */
  readonly export?: string;
  readonly json?: boolean;
  readonly aws?: boolean;
  readonly stack?: string;
  /** The local run root, where a running run whose owner is gone is noted. */
  readonly runRoot?: string;
}

/** The `results` flags as commander gives them. */
export interface ResultsFlags {
  readonly run?: string;
  readonly sql?: string;
  readonly export?: string;
  readonly json?: boolean;
  readonly lake: string;
  readonly aws?: boolean;
  readonly stack: string;
}

export async function resultsAction(
  opts: ResultsFlags,
  context: Pick<CliContext, 'repoRoot' | 'runRoot'>,
): Promise<void> {
  if (opts.export && opts.aws)
    throw new UsageError(
      '--export writes a local lake query; Athena writes its results to the workgroup output location',
    );
  printOut(
    await resultsCommand({
      ...opts,
      ...(opts.export ? { export: resolve(opts.export) } : {}),
      lakeDir: resolve(opts.lake),
      repoRoot: context.repoRoot,
      runRoot: context.runRoot ?? defaultRunRoot(),
    }),
  );
}

export async function resultsCommand(options: ResultsCommandOptions): Promise<string> {
  // --sql queries the whole lake, so a --run beside it would be silently ignored.
  if (options.sql !== undefined && options.run !== undefined)
    throw new UsageError(
      `--run selects the run whose step table is printed; --sql queries the whole lake and does not take it: ` +
        `put the run in the query, e.g. --sql "select * from step_summary where run_id = ` +
        `'${options.run.replace(/'/g, "''")}'"`,
    );
  if (options.aws) {
    const { athenaResultsText } = await import('./results-aws');
    return athenaResultsText({
      stackName: options.stack ?? 'AuroraBench',
      ...(options.run ? { runId: options.run } : {}),
      ...(options.sql ? { sql: options.sql } : {}),
      json: options.json === true,
    });
  }
  const note =
    options.sql === undefined && options.runRoot !== undefined
      ? await ownerGoneNote(options.lakeDir, options.runRoot, options.run)
      : '';
  return (
    note +
    (await resultsText(options.lakeDir, {
      ...(options.run ? { runId: options.run } : {}),
      ...(options.sql ? { sql: options.sql } : {}),
      ...(options.export ? { exportFile: options.export } : {}),
      ...(options.json ? { json: true } : {}),
    }))
  );
}

/**
 * Says that the run shown is marked running but no aurora-bench here runs it any more.
 * Its status in the lake would otherwise lie until `aurora-bench cleanup` settles it.
 * Empty when the run is not marked running or its owner lives.
 */
export async function ownerGoneNote(lakeDir: string, runRoot: string, runId?: string): Promise<string> {
  const run = await withLake(lakeDir, (lake) => findRun(lake, runId)).catch(() => undefined);
  if (run?.status !== 'running') return '';
  const claim = await readClaim(runRoot, run.run_id);
  if (claim && ownerAlive(claim)) return '';
  const who = claim
    ? `its aurora-bench (pid ${claim.ownerPid}) is gone`
    : `no aurora-bench on this machine runs it (nothing of it under ${runRoot})`;
  return (
    `warning: run ${run.run_id} is marked running, but ${who}: it was interrupted (killed, crashed, a ` +
    `forced exit or a full disk); \`aurora-bench cleanup\` records it as aborted\n`
  );
}
