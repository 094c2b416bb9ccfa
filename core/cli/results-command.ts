/** `aurora-bench results`: the local lake through DuckDB, or Athena with --aws. */
import { resultsText } from '../lake/results';

export interface ResultsCommandOptions {
  readonly lakeDir: string;
  readonly repoRoot: string;
  readonly run?: string;
  readonly sql?: string;
  /** Write the --sql result to this new file instead of printing it (local lake only). */
  readonly export?: string;
  readonly json?: boolean;
  readonly aws?: boolean;
  readonly stack?: string;
}

export async function resultsCommand(options: ResultsCommandOptions): Promise<string> {
  if (options.aws) {
    const { athenaResultsText } = await import('./results-aws');
    return athenaResultsText({
      stackName: options.stack ?? 'AuroraBench',
      ...(options.run ? { runId: options.run } : {}),
      ...(options.sql ? { sql: options.sql } : {}),
      json: options.json === true,
    });
  }
  return resultsText(options.lakeDir, {
    ...(options.run ? { runId: options.run } : {}),
    ...(options.sql ? { sql: options.sql } : {}),
    ...(options.export ? { exportFile: options.export } : {}),
    ...(options.json ? { json: true } : {}),
  });
}
