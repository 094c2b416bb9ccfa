/**
 * Each series' stable history before a run, for the questions against history.
 * The history is the one `history` and ComputeVerdicts read, without the run itself.
 * A series' stable runs are those since its last change point.
 * Tonight's rounds are single repeats, with all of the within-night variance.
 * A mean of r repeats has only 1/r of it.
 * So one round's variance is the run means' variance plus the within-run variance times (1 - mean of 1/r).
 * This is a method-of-moments estimate.
 */
import type { AthenaClient } from '@aws-sdk/client-athena';
import type { RunContext } from '../backend';
import { AthenaLake } from '../backends/aws/athena-lake';
import type { AwsBackendConfig } from '../backends/aws/config';
import { NotFoundError } from '../lake/results';
import { mean, sampleStddev } from '../stats/student-t';
import type { SeriesLevel } from '../workflow/tasks/round-types';
import { buildHistory, HISTORY_DEFAULTS, type HistoryInput } from './history';
import { readerOpener, readHistoryInput, type LakeOpener } from './judge';
import { metricValue, notJudgedReason, stepKeyText, type RegressionMetric, type StepKey } from './metrics';

/** The pooled within-run variance of the repeats' log values, and the mean of 1/repeats. */
function withinRuns(
  input: HistoryInput,
  key: StepKey,
  metric: RegressionMetric,
  runIds: ReadonlySet<string>,
): { variance: number; meanInverseRepeats: number } {
  const byRun = new Map<string, number[]>();
  const k = stepKeyText(key);
  for (const r of input.steps) {
    if (!runIds.has(r.run_id) || stepKeyText(r) !== k || notJudgedReason(r) !== null) continue;
    const v = metricValue(r, metric);
    if (v !== null && v > 0) byRun.set(r.run_id, [...(byRun.get(r.run_id) ?? []), Math.log(v)]);
  }
  let ss = 0;
  let df = 0;
  let inverse = 0;
  for (const logs of byRun.values()) {
    const m = mean(logs);
    ss += logs.reduce((a, x) => a + (x - m) ** 2, 0);
    df += logs.length - 1;
    inverse += 1 / logs.length;
  }
  return { variance: df > 0 ? ss / df : 0, meanInverseRepeats: byRun.size > 0 ? inverse / byRun.size : 1 };
}

const TESTED: readonly SeriesLevel['metric'][] = ['tps', 'qps', 'latency'];

export async function historyLevels(
  open: LakeOpener,
  run: Pick<RunContext, 'runId' | 'specName'>,
): Promise<SeriesLevel[]> {
  let input;
  try {
    input = await readHistoryInput(open, run.specName, { window: HISTORY_DEFAULTS.window });
  } catch (e) {
    // The experiment's first run has no history at all.
    if (e instanceof NotFoundError) return [];
    throw e;
  }
  const before = {
    ...input,
    runs: input.runs.filter((r) => r.run_id !== run.runId),
    steps: input.steps.filter((s) => s.run_id !== run.runId),
  };
  if (before.runs.length === 0) return [];
  const history = buildHistory(before);
  // Only the series still going. An older one measured something else.
  return history.steps
    .filter((s) => s.current)
    .flatMap((s) =>
      s.metrics
        .filter((m) => (TESTED as readonly string[]).includes(m.metric))
        .map((m): SeriesLevel => {
          const from = m.changePoints.at(-1)?.runId;
          const start = from === undefined ? 0 : s.points.findIndex((p) => p.runId === from);
          const stable = s.points
            .map((p, i) => ({ runId: p.runId, value: m.values[i] ?? null }))
            .slice(Math.max(0, start))
            .filter((x): x is { runId: string; value: number } => x.value !== null && x.value > 0);
          const values = stable.map((x) => x.value);
          const series = { ...s.key, metric: m.metric as SeriesLevel['metric'] };
          const since = from === undefined ? '' : ` since the change point at run ${from}`;
          if (values.length < HISTORY_DEFAULTS.minStableRuns)
            return {
              ...series,
              why: `${values.length} stable run(s)${since}, fewer than ${HISTORY_DEFAULTS.minStableRuns}`,
            };
          const logs = values.map(Math.log);
          const within = withinRuns(before, s.key, m.metric, new Set(stable.map((p) => p.runId)));
          const logSd = Math.sqrt(sampleStddev(logs) ** 2 + within.variance * (1 - within.meanInverseRepeats));
          if (!(logSd > 0)) return { ...series, why: `no spread over its ${values.length} stable runs` };
          return { ...series, level: { logMean: mean(logs), logSd, df: logs.length - 1, runs: logs.length } };
        }),
    );
}

/**
 * TaskDeps.historyLevels on AWS, by Athena with the stack's work group and Glue database.
 * Without them every series counts as without history, so the run goes to its maximum.
 */
export function athenaHistoryLevels(
  config: AwsBackendConfig,
  athena: AthenaClient,
): (run: RunContext) => Promise<SeriesLevel[]> {
  return async (run) => {
    if (config.athenaWorkGroup === undefined || config.glueDatabase === undefined) return [];
    const lake = new AthenaLake({ client: athena, workGroup: config.athenaWorkGroup, database: config.glueDatabase });
    return historyLevels(readerOpener(lake), run);
  };
}
