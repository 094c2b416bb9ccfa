/**
 * `aurora-bench run SPEC --aws-rehearsal`: the AWS path of a run, executed on this machine. The
 * state machine as synthesized from the real stack runs through aws-local-stepfunctions with every
 * Task bound to its function's bundled asset, run in the Lambda sandbox (lambda-sandbox.ts), whose
 * SDK calls come back over IPC (sdk-bridge.ts) to the rehearsal's SDK clients, which go to a moto
 * server this rehearsal starts and stops. Between those clients and moto
 * sit the emulations of what moto does not do (this directory): RDS instances become real MariaDB
 * servers (rds-emulation.ts), client and self-managed server instances are Debian 12 roots that
 * boot the stack's user data and run the SSM commands (ssm-agent.ts, instance-root.ts), CloudWatch gets the servers'
 * metrics late (cloudwatch-publisher.ts). The backend and the handlers do not know they are rehearsing.
 *
 * Before anything starts, the spec goes through what the local backend refuses (instance classes
 * without a local shape, writes sent to a reader for write forwarding, which MariaDB replicas
 * cannot forward: those workloads are left out with the local plan's own message). Afterwards the
 * rehearsal checks that nothing is left: first what the workflow (and, for a run that did not
 * succeed, the safety net's teardownRun, as the stack's EventBridge rule would run it) left in moto,
 * then, after stopping everything itself, every process it started and its directory.
 *
 * Its phases, one module each: rehearsal-preflight.ts, run-claim.ts and exit-removal.ts,
 * control-plane.ts, start-emulations.ts, task-sandbox.ts, run-workflow.ts, safety-net.ts,
 * left-behind.ts, rehearsal-report.ts, teardown.ts.
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
  /** The results table of the run (RehearsalResult.results). */
  readonly results: string;
}

/** Everything between the claim and the teardown: each phase records in `state` what it started. */
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
    // A dead moto server fails every later AWS call: the run FAILED with one line saying so, not the SDK's stack.
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
