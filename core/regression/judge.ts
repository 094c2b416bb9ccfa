/**
 * A finished run judged against its experiment's history, and the history read `history` does.
 * The history is taken as of the run, over the window change points are searched in.
 * The local lake's judge lives in judge-local.ts, so nothing here loads DuckDB.
 */
import type { AthenaClient } from '@aws-sdk/client-athena';
import type { RunContext } from '../backend';
import type { AwsBackendConfig } from '../backends/aws/config';
import { AuroraBenchError } from '../errors';
import { AthenaLake } from '../backends/aws/athena-lake';
import type { LakeReader, LakeScope } from '../lake/duckdb';
import type { VerdictsRow } from '../lake/rows';
import { buildHistory, HISTORY_DEFAULTS, verdictRows, type HistoryInput, type HistoryOptions } from './history';
import { loadHistoryDetails, loadHistoryRuns, runsToRead, withoutRehearsals, type HistoryReadOptions } from './load';

/**
 * Runs one read over a lake.
 * A local lake opens only the files `scope` names, since DuckDB's cost is per file. Athena ignores it.
 */
export type LakeOpener = <T>(read: (lake: LakeReader) => Promise<T>, scope: LakeScope) => Promise<T>;

export const readerOpener =
  (lake: LakeReader): LakeOpener =>
  (read) =>
    read(lake);

/** The history input. The runs table comes first, then the files of the runs read. */
export async function readHistoryInput(
  open: LakeOpener,
  experiment: string,
  options: HistoryReadOptions = {},
): Promise<HistoryInput> {
  const all = await open((lake) => loadHistoryRuns(lake, experiment, options.untilRunId), { tables: ['runs'] });
  const { runs, rehearsals } = withoutRehearsals(all, options.untilRunId);
  const read = runsToRead(runs, options.window);
  const input = await open((lake) => loadHistoryDetails(lake, experiment, read, runs.length), {
    runIds: read.map((r) => r.run_id),
  });
  return rehearsals.length > 0 ? { ...input, rehearsalsLeftOut: rehearsals } : input;
}

class VerdictError extends AuroraBenchError {
  override readonly name = 'VerdictError';
}

/** The run's verdicts, one row per step and metric of its current series. */
export async function judgeRun(
  open: LakeOpener,
  run: Pick<RunContext, 'runId' | 'specName' | 'dt'>,
  now: Date,
  options: HistoryOptions = {},
): Promise<VerdictsRow[]> {
  const opts = { ...HISTORY_DEFAULTS, ...options };
  const input = await readHistoryInput(open, run.specName, { window: opts.window, untilRunId: run.runId });
  const history = buildHistory(input, opts);
  if (history.latestRunId !== run.runId)
    throw new VerdictError(
      `run ${run.runId}: the history of ${run.specName} read as of the run ends at ${history.latestRunId ?? 'no run'}`,
    );
  const computedAt = now.toISOString();
  return verdictRows(history)
    .filter((r) => r.run_id === run.runId)
    .map((r) => ({ ...r, computed_at: computedAt, dt: run.dt }));
}

/**
 * TaskDeps.judgeRun on AWS, by Athena with the stack's work group and Glue database.
 * Without them it says which settings are missing.
 */
export function athenaJudge(
  config: AwsBackendConfig,
  athena: AthenaClient,
  now: () => Date = () => new Date(),
  pollMs?: number,
): (run: RunContext) => Promise<VerdictsRow[]> {
  return async (run) => {
    if (config.athenaWorkGroup === undefined || config.glueDatabase === undefined) {
      throw new VerdictError(
        'the verdicts need the lake through Athena, and the Task environment has no ' +
          'AURORA_BENCH_ATHENA_WORK_GROUP / AURORA_BENCH_GLUE_DATABASE: redeploy the stack (npx cdk deploy), ' +
          'which sets them',
      );
    }
    const lake = new AthenaLake({
      client: athena,
      workGroup: config.athenaWorkGroup,
      database: config.glueDatabase,
      ...(pollMs !== undefined ? { pollMs } : {}),
    });
    return judgeRun(readerOpener(lake), run, now());
  };
}
