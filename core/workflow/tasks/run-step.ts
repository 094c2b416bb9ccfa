/** The RunStep Task: the shell that carries out nextStepMove's commands for a group. */
import { TransientBackendError, type JobHandle, type JobsState } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import {
  nextStepMove,
  storedCursor,
  type CollectCommand,
  type StartCommand,
  type StepCommand,
  type StepCursor,
  type StepObservation,
  type StepReply,
  type StepSchedule,
} from '../step-scheduler';
import { allMembers, memberPlans, memberResources } from './group';
import { preparedSeconds } from './client-output';
import { checkRunPrepare, collectStepTask } from './collect-step';
import { readJson } from './lake-json';
import { need } from './need';
import { jobsToStart, prepareOutputPrefix, preparingTogether } from './step-jobs';
import { stepSummary } from './step-summary';
import type { CollectedStep, CollectStepEvent, RunStepEvent, RunStepOutput } from './step-types';
import type { TaskDeps } from './types';

/**
 * One step of a group's segment forward.
 * The cursor lives in the lake, so a repeated call neither starts jobs twice nor loses them.
 * Every member's jobs are built before any starts, so the members' starts are as close as the backend allows.
 */
export async function runStepTask(deps: TaskDeps, event: RunStepEvent): Promise<RunStepOutput> {
  need(event, ['run', 'group', 'resources', 'segment'], 'run-step');
  const { run, segment } = event;
  const lake = deps.backend.lake;
  const cells = await memberPlans(deps, run, event.group);
  const groupId = event.group.groupId;
  const schedule: StepSchedule = {
    backend: run.backend,
    cellId: groupId,
    members: cells.map((cell) => ({ cell, resources: memberResources(event.resources, cell.cellId) })),
    segment,
    writeForwarding: deps.backend.writeForwarding,
  };
  const cursorKey = lakeKeys.workflow.stepCursor(run.runId, groupId);
  const stored = await readJson<StepCursor>(deps, cursorKey);
  let cursor: StepCursor = stored !== undefined ? storedCursor(stored) : { cellId: groupId, next: segment.from };
  const collected: CollectedStep[] = [];

  const cellOf = (cellId: string) => {
    const cell = cells.find((c) => c.cellId === cellId);
    if (cell === undefined) throw new Error(`cell ${schedule.cellId} has no member ${cellId}`);
    return cell;
  };
  const collect = async (command: CollectCommand): Promise<StepObservation> => {
    const events: CollectStepEvent[] = command.members.map((m) => {
      const cell = cellOf(m.cellId);
      return {
        run,
        cell,
        resources: m.resources,
        step: cell.steps[command.stepIndex]!,
        phase: command.phase,
        jobs: m.jobs,
        jobsState: m.jobsState,
      };
    });
    // Every member's prepare is judged first, so a failed one leaves no member with rows of the step.
    if (command.withPrepare) await allMembers(events.map((e) => checkRunPrepare(deps, e)));
    const outcomes = await allMembers(events.map((e) => collectStepTask(deps, e)));
    const written = events.flatMap((e, i) => (outcomes[i] ? [{ cellId: e.cell.cellId, outcome: outcomes[i] }] : []));
    await Promise.all(
      written.map((c) =>
        lake.put(lakeKeys.workflow.stepOutcome(run.runId, c.cellId, c.outcome.stepId), JSON.stringify(c.outcome)),
      ),
    );
    collected.push(...written);
    const preparedS = await Promise.all(
      events.map((e) =>
        command.withPrepare && e.jobs.length > 0
          ? preparedSeconds(deps, prepareOutputPrefix(run, e.cell, e.step, e.jobs[0]!.clientId))
          : Promise.resolve(undefined),
      ),
    );
    return { kind: 'collected', of: command, preparedS };
  };
  const start = async (command: StartCommand): Promise<StepObservation> => {
    const { stepIndex, phase, withPrepare } = command;
    const built = await Promise.all(
      schedule.members.map(({ cell, resources }) =>
        jobsToStart(deps, { run, cell, resources, step: cell.steps[stepIndex]!, phase, withPrepare }),
      ),
    );
    // A group's runs that prepare first await every member's prepare and start together.
    const planned = withPrepare && cells.length > 1 ? preparingTogether(run, built) : built;
    const settled = await Promise.allSettled(
      schedule.members.map(({ cell, resources }, i) =>
        planned[i]!.length === 0 ? Promise.resolve([]) : deps.backend.startJobs(run, cell, resources, planned[i]!),
      ),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // A step that cannot start on every member runs on none, since a lone member's intervals pair with nothing.
      const started = settled.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
      if (started.length > 0) await deps.backend.stopJobs(run, started).catch(() => undefined);
      throw failed.reason;
    }
    return { kind: 'started', of: command, jobs: settled.map((r) => (r as PromiseFulfilledResult<JobHandle[]>).value) };
  };
  const carryOut = async (command: StepCommand): Promise<StepObservation | undefined> => {
    switch (command.kind) {
      case 'stop':
        await deps.backend.stopJobs(run, command.jobs);
        return undefined;
      case 'persist':
        await lake.put(cursorKey, JSON.stringify(command.cursor));
        return undefined;
      case 'collect':
        return collect(command);
      case 'start':
        return start(command);
    }
  };
  const output = (reply: StepReply): RunStepOutput => {
    const started = reply.started
      ? {
          phase: reply.started.phase,
          ...(reply.started.withPrepare ? { withPrepare: true } : {}),
          step: stepSummary(cells[0]!.steps[reply.started.stepIndex]!),
        }
      : null;
    return {
      done: reply.done,
      waitS: reply.waitS,
      started,
      collected,
      startSpreadMs: reply.startSpreadMs,
      ...(reply.running !== undefined ? { running: reply.running } : {}),
    };
  };

  let failure: unknown;
  try {
    const inflight = cursor.inflight;
    const jobs: JobsState[] | undefined = inflight
      ? await Promise.all(
          inflight.members.map((m) =>
            m.jobs.length === 0
              ? Promise.resolve({ done: true, running: 0, jobs: [] })
              : deps.backend.checkJobs(run, m.jobs),
          ),
        )
      : undefined;
    let observation: StepObservation = {
      kind: 'call',
      nowMs: deps.now().getTime(),
      ...(jobs !== undefined ? { jobs } : {}),
    };
    for (;;) {
      const move = nextStepMove(schedule, cursor, observation);
      cursor = move.cursor;
      let answer: StepObservation | undefined;
      for (const command of move.commands) answer = await carryOut(command);
      if (move.reply) return output(move.reply);
      if (answer === undefined)
        throw new Error(
          `step scheduler of ${schedule.cellId}: a move without a reply must end with a collect or a start`,
        );
      observation = answer;
    }
  } catch (e) {
    failure = e;
  }
  // Not transient, so the cell fails and its teardown reports why.
  // The cursor keeps the reason, because on AWS the segment Map's own error does not.
  const err = failure as Error;
  const move = nextStepMove(schedule, cursor, {
    kind: 'failed',
    error: { name: err.name, message: err.message },
    transient: failure instanceof TransientBackendError,
  });
  for (const command of move.commands) await carryOut(command).catch(() => undefined);
  throw failure;
}
