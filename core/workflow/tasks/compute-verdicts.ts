import type { RunContext, VerdictPublication } from '../../backend';
import { lakeKeys, toJsonLines } from '../../lake/rows';
import type { RoundsJudged } from './judge-round';
import { readJson } from './lake-json';
import { need } from './need';
import { withRoundCalls } from './round-verdicts';
import type { TaskDeps } from './types';

export interface ComputeVerdictsEvent {
  readonly run: RunContext;
}

/** Small, since it is state data. */
export interface ComputeVerdictsOutput {
  readonly runId: string;
  readonly verdicts: number;
  readonly regressed: number;
  readonly improved: number;
  readonly withinNoise: number;
  readonly unknown: number;
  readonly notJudged: number;
  /** The first few regressions, as "<variant> <workload> t<threads> <metric> <ratio>". */
  readonly regressions: readonly string[];
  readonly lakeKey: string;
  readonly published: VerdictPublication;
}

const MAX_REGRESSIONS_LISTED = 5;

/**
 * After FinishRun, the run is judged against its experiment's history and the verdicts are published.
 * The verdicts file is rewritten if the Task runs again.
 * The ASL catches its failure, so it changes neither the run's status nor its teardown.
 */
export async function computeVerdictsTask(deps: TaskDeps, event: ComputeVerdictsEvent): Promise<ComputeVerdictsOutput> {
  need(event, ['run'], 'compute-verdicts');
  const { run } = event;
  // A run judged against its history after each round keeps those calls.
  const judged = await readJson<RoundsJudged>(deps, lakeKeys.workflow.roundsJudged(run.runId));
  const verdicts = withRoundCalls(await deps.judgeRun(run), judged);
  const lakeKey = lakeKeys.verdicts(run.dt, run.runId);
  await deps.backend.lake.put(lakeKey, toJsonLines(verdicts));
  const published = await deps.backend.publishVerdicts(run, verdicts);
  const count = (verdict: string) => verdicts.filter((v) => v.verdict === verdict).length;
  return {
    runId: run.runId,
    verdicts: verdicts.length,
    regressed: count('regressed'),
    improved: count('improved'),
    withinNoise: count('within-noise'),
    unknown: count('unknown'),
    notJudged: count('not-judged'),
    regressions: verdicts
      .filter((v) => v.verdict === 'regressed')
      .slice(0, MAX_REGRESSIONS_LISTED)
      .map((v) =>
        (
          `${v.variant} ${v.workload} t${v.threads}` +
          (v.rate > 0 ? ` @${v.rate}/s` : '') +
          ` ${v.metric_label} ` +
          (v.ratio === null ? '' : `${(v.ratio * 100).toFixed(1)}%`)
        ).trim(),
      ),
    lakeKey,
    published,
  };
}
