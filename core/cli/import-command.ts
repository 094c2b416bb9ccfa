/** `aurora-bench import PATHS` checks the flags and sorts them into what importLogs takes. */
import { resolve } from 'node:path';
import { checkRunId } from '../plan/run-id';
import { importLogs } from './import-logs';
import type { ImportFlags } from './import-mapping';
import { printOut } from './terminal';
import type { CliContext } from './cli-context';

export interface ImportCommandFlags extends ImportFlags {
  readonly mapping?: string;
  readonly runId?: string;
  readonly allowFailed?: boolean;
  readonly runPerDate?: boolean;
  readonly lake: string;
}

export function importAction(
  paths: readonly string[],
  opts: ImportCommandFlags,
  context: Pick<CliContext, 'repoRoot'>,
): void {
  const { mapping, runId, allowFailed, runPerDate, lake, ...flags } = opts;
  checkRunId(runId);
  importLogs({
    paths,
    lakeDir: resolve(lake),
    repoRoot: context.repoRoot,
    ...(mapping !== undefined ? { mappingFile: mapping } : {}),
    flags,
    ...(runId !== undefined ? { runId } : {}),
    ...(allowFailed ? { allowFailed: true } : {}),
    ...(runPerDate ? { runPerDate: true } : {}),
    log: (l) => printOut(l + '\n'),
  });
}
