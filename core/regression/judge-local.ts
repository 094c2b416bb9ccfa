/** The local lake's side of judge.ts, by DuckDB. The Lambdas ship no DuckDB, so it lives apart. */
import type { RunContext } from '../backend';
import { withLake } from '../lake/duckdb';
import type { VerdictsRow } from '../lake/rows';
import type { SeriesLevel } from '../workflow/tasks/round-types';
import { historyLevels } from './history-levels';
import { judgeRun, type LakeOpener } from './judge';

/** Each read opens the lake directory over the files its scope names. */
export const localLakeOpener =
  (lakeDir: string): LakeOpener =>
  (read, scope) =>
    withLake(lakeDir, read, scope);

/** TaskDeps.judgeRun of the local backend. */
export function localJudge(
  lakeDir: string,
  now: () => Date = () => new Date(),
): (run: RunContext) => Promise<VerdictsRow[]> {
  return (run) => judgeRun(localLakeOpener(lakeDir), run, now());
}

/** TaskDeps.historyLevels of the local backend. */
export function localHistoryLevels(lakeDir: string): (run: RunContext) => Promise<SeriesLevel[]> {
  return (run) => historyLevels(localLakeOpener(lakeDir), run);
}
