/**
 * `aurora-bench run SPEC --aws-rehearsal`: the AWS path of a run, executed on this machine.
 * The synthesized state machine runs locally, each Task in the Lambda sandbox with its bundled asset.
 * Their SDK calls go to a moto server, through emulations of what moto does not do.
 * The backend and the handlers do not know they are rehearsing.
 *
 * The spec first goes through what the local backend refuses.
 * Afterwards the rehearsal checks that nothing is left in moto, in processes or on disk.
 * Each phase has its own module in this directory.
 */
import type { LocalExecutionResult } from '../workflow/local-runner';
import { startControlPlane } from './control-plane';
import { removeOnExit } from './exit-removal';
import { RunRowCopy } from './lake-copy';
import { leftBehind } from './left-behind';
import { controlPlaneDied } from './moto-server';
import type { RehearsalOptions, RehearsalResult } from './rehearsal-options';
import { preflight, type Preflight } from './rehearsal-preflight';
import { reportRun } from './rehearsal-report';
import { newRehearsalState, type RehearsalState } from './rehearsal-state';
import { DEFAULT_METRICS_LAG_S } from './rehearsal-timings';
import { claimRun, type RunClaim } from './run-claim';
import { runWorkflow } from './run-workflow';
import { settleUnsuccessful } from './safety-net';
import { startEmulations } from './start-emulations';
import { startTaskSandbox } from './task-sandbox';
import { tearDown } from './teardown';

export type { RehearsalOptions, RehearsalResult } from './rehearsal-options';

interface Rehearsed {
  readonly result: LocalExecutionResult;
  readonly results: string;
}

/** Everything between the claim and the teardown. Each phase records in `state` what it started. */
async function rehearse(
  options: RehearsalOptions,
  pre: Preflight,
  claim: RunClaim,
  state: RehearsalState,
  lagS: number,
  log: (line: string) => void,
): Promise<Rehearsed> {
  const { plan } = pre;
  const control = await startControlPlane(options, pre, claim, state, lagS, log);
  const { config, raw } = control;
  const { clients, rds, agent } = await startEmulations(options, pre, claim, control, state, lagS, log);
  const deps = await options.buildTaskDeps(config, clients);
  const sandbox = await startTaskSandbox(options, pre, claim, control, clients, state);
  const runRow = new RunRowCopy(raw.s3, config, options.lakeDir, log);
  const executed = await runWorkflow(options, pre, deps, sandbox, rds, runRow, state, log);
  const result = await settleUnsuccessful(options, plan, deps, clients, config, executed, state.safetyNetDeleted, log);
  state.leftBehind.push(...(await leftBehind(control.moto.endpoint, plan.region, rds, agent)));
  await runRow.done();
  const results = await reportRun(options, plan, claim, raw.s3, config, state, sandbox.iam, log);
  return { result, results };
}

export async function runRehearsal(options: RehearsalOptions): Promise<RehearsalResult> {
  const log = options.log ?? (() => undefined);
  const lagS = options.metricsLagS ?? DEFAULT_METRICS_LAG_S;
  const pre = await preflight(options, lagS, log);
  const claim = await claimRun(options, pre.plan);
  const removeDir = removeOnExit(claim.dir, claim.tracker);
  const state = newRehearsalState();
  let rehearsed: Rehearsed;
  try {
    rehearsed = await rehearse(options, pre, claim, state, lagS, log);
  } catch (e) {
    // A dead moto server fails every later AWS call. The run fails with one line saying so, not the SDK's stack.
    const died = await controlPlaneDied(state.moto, e, state.doing);
    if (died === undefined) throw e;
    rehearsed = {
      result: { status: 'FAILED', error: died.name, cause: died.message, events: [], runId: pre.plan.runId },
      results: '(no results table: the lake was in the moto server)',
    };
  } finally {
    await tearDown(state, claim, options.account, removeDir);
  }
  return {
    ...rehearsed.result,
    plan: pre.plan,
    results: rehearsed.results,
    leftBehind: state.leftBehind,
    notCleaned: state.notCleaned,
    safetyNetDeleted: state.safetyNetDeleted,
    functions: state.functionsOf(),
    ...(state.gated ? { iam: state.gated } : {}),
  };
}
