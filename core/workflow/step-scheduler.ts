/**
 * Where a cell's steps are and what RunStep does next, as one pure function.
 * The cursor and what the Task observed go in, and the next cursor and commands come out.
 * A group's next phase starts only when every member's jobs are done, so a group of one is a plain cell.
 * RunStep is the shell that carries out the commands.
 * Nothing here reads the lake, a clock or a backend, so every transition is tested as a function.
 */
import type { CellResources, JobHandle, JobsState, RunContext } from '../backend';
import { BACKEND_TIMES } from '../plan/plan';
import { jobDeadlineS, lookAgainAfterS, preparesInRun } from '../plan/step-looks';
import type { CellPlan, StepPlan, StepSegment, WriteForwardingSupport } from '../plan/types';
import type { RunnerPhase } from '../sysbench/types';
import { InvalidTaskInputError } from './errors';

/**
 * Seconds after a prepare starts before its first look. Later looks back off.
 * @internal exported for its tests (a test seam)
 */
export const PREPARE_FIRST_LOOK_S = 10;

/**
 * Seconds after a step's prepare ended at which its clients' runs start.
 * It is more than an awaiting client takes to learn that the prepare ended.
 * So every client's run starts at the same moment, as when one call starts them all.
 */
export const START_AFTER_PREPARE_S: Record<RunContext['backend'], number> = { local: 2, aws: 5 };

/** A member's jobs of the phase in flight, and the resources a stop path needs to record the step. */
interface MemberJobs {
  readonly cellId: string;
  readonly jobs: readonly JobHandle[];
  readonly resources: CellResources;
}

/**
 * Why a step failed the cell, as a Catch's error payload.
 * The teardown reports it, since on AWS the segment's Map error does not carry it.
 */
interface StepFailure {
  readonly Error: string;
  readonly Cause?: string;
}

/**
 * Kept in the lake, so the state machine's state stays the same size whatever the step count.
 * A retried or repeated call finds the jobs it started.
 */
export interface StepCursor {
  /** The cell's id, or the duet's. */
  readonly cellId: string;
  /** Index of the next step to start. */
  readonly next: number;
  readonly inflight?: {
    readonly stepIndex: number;
    readonly phase: RunnerPhase;
    /** The run's jobs prepare the data first on every member. */
    readonly withPrepare?: boolean;
    /** Looks that found jobs still running. The next wait backs off with them. */
    readonly looks?: number;
    /** Per member, in the duet's member order. */
    readonly members: readonly MemberJobs[];
  };
  /** Seconds the slowest member's last prepare took. The next step's prepare is expected to take as long. */
  readonly lastPrepareS?: number;
  readonly failure?: StepFailure;
}

/** A cell's cursor as written before cells and duets shared one scheduler, with jobs not yet per member. */
interface CellCursorOfBefore {
  readonly cellId: string;
  readonly next: number;
  readonly inflight?: Omit<NonNullable<StepCursor['inflight']>, 'members'> & {
    readonly jobs: readonly JobHandle[];
    readonly resources: CellResources;
  };
  readonly lastPrepareS?: number;
  readonly failure?: StepFailure;
}

/** The cursor as the lake holds it, in the shape nextStepMove reads. */
export function storedCursor(stored: StepCursor | CellCursorOfBefore): StepCursor {
  const inflight = stored.inflight;
  if (inflight === undefined || 'members' in inflight) return stored as StepCursor;
  const { jobs, resources, ...rest } = inflight;
  return { ...stored, inflight: { ...rest, members: [{ cellId: stored.cellId, jobs, resources }] } };
}

/** What the scheduler knows of the cell or duet it schedules, read once per call. */
export interface StepSchedule {
  readonly backend: RunContext['backend'];
  readonly cellId: string;
  /** The members' plans and resources, in the duet's member order. */
  readonly members: readonly { readonly cell: CellPlan; readonly resources: CellResources }[];
  readonly segment: StepSegment;
  /** What the backend does with writes sent to a reader decides whether run jobs can prepare data. */
  readonly writeForwarding: WriteForwardingSupport;
}

/** A member's jobs once looked at, and whether they were stopped at their deadline. */
export interface MemberJobsState extends JobsState {
  readonly timedOut: boolean;
}

/** Stop a member's jobs that ran past their deadline. */
interface StopCommand {
  readonly kind: 'stop';
  readonly cellId: string;
  readonly jobs: readonly JobHandle[];
}
/** Write the cursor to the lake. */
interface PersistCommand {
  readonly kind: 'persist';
  readonly cursor: StepCursor;
}
/**
 * Collect a phase, judging every member's prepare first when the runs prepared first.
 * A failed prepare then fails the cell before any member has rows of the step.
 * Answered by a 'collected' or 'failed' observation.
 */
export interface CollectCommand {
  readonly kind: 'collect';
  readonly stepIndex: number;
  readonly phase: RunnerPhase;
  readonly withPrepare: boolean;
  /** Every member started no job, so the rows say skipped and the call returns at once. */
  readonly skipped: boolean;
  readonly members: readonly (MemberJobs & { readonly jobsState: MemberJobsState })[];
}
/** Build and start every member's jobs of a phase in one call. Answered by 'started' or 'failed'. */
export interface StartCommand {
  readonly kind: 'start';
  readonly stepIndex: number;
  readonly phase: RunnerPhase;
  readonly withPrepare: boolean;
}
export type StepCommand = StopCommand | PersistCommand | CollectCommand | StartCommand;

/** What RunStep returns. The Choice reads done, and the Wait reads waitS. */
export interface StepReply {
  /** The segment's last step is collected, so the segment's execution ends. */
  readonly done: boolean;
  /** Seconds until the phase just started should be over, or until the next look. */
  readonly waitS: number;
  /** The phase this call started, if any. */
  readonly started: { readonly phase: RunnerPhase; readonly withPrepare?: boolean; readonly stepIndex: number } | null;
  /** Jobs this look found still running. */
  readonly running?: number;
  /** Milliseconds between the first and last job start of the phase just started, or null. */
  readonly startSpreadMs: number | null;
}

export type StepObservation =
  /** A RunStep call begins, with the jobs in flight looked at per member. */
  | { readonly kind: 'call'; readonly nowMs: number; readonly jobs?: readonly JobsState[] }
  /** A collect was carried out, with each member's prepare seconds. */
  | { readonly kind: 'collected'; readonly of: CollectCommand; readonly preparedS: readonly (number | undefined)[] }
  /** A start was carried out, with the jobs each member started. */
  | { readonly kind: 'started'; readonly of: StartCommand; readonly jobs: readonly (readonly JobHandle[])[] }
  /** A command threw. Transient means the state retries the call and nothing is recorded. */
  | {
      readonly kind: 'failed';
      readonly error: { readonly name: string; readonly message: string };
      readonly transient: boolean;
    };

export interface StepMove {
  readonly cursor: StepCursor;
  /** Carried out in order. A collect or start, which the next observation answers, comes last. */
  readonly commands: readonly StepCommand[];
  /** The call ends with this reply once the commands are carried out. */
  readonly reply?: StepReply;
  /** The call ends by throwing the error the 'failed' observation reported. */
  readonly raise?: true;
}

function stepOf(schedule: StepSchedule, member: number, index: number): StepPlan {
  const { cell } = schedule.members[member]!;
  const step = cell.steps[index];
  if (step === undefined) throw new InvalidTaskInputError(`cell ${cell.cellId} has no step ${index}`);
  return step;
}

/**
 * Seconds a step's prepare is expected to take, for the Wait before the first look.
 * Every step prepares the same data, so the last prepare is the best guess. Else the plan's estimate counts.
 * A slower prepare costs looks, and a faster one only waiting time.
 * @internal exported for its tests (a test seam)
 */
export function expectedPrepareS(
  backend: RunContext['backend'],
  cell: Pick<CellPlan, 'data'>,
  lastPrepareS: number | undefined,
): number {
  if (lastPrepareS !== undefined) return Math.ceil(lastPrepareS);
  return Math.ceil((cell.data.tables * cell.data.tableSize) / BACKEND_TIMES[backend].rowsPerS);
}

const withLastPrepare = (cursor: StepCursor) =>
  cursor.lastPrepareS !== undefined ? { lastPrepareS: cursor.lastPrepareS } : {};

/** The next step of the segment started, or the segment done. */
function startNext(schedule: StepSchedule, cursor: StepCursor, commands: StepCommand[]): StepMove {
  const next = Math.max(cursor.next, schedule.segment.from);
  if (next >= schedule.segment.to || schedule.members[0]!.cell.steps[next] === undefined) {
    return { cursor, commands, reply: { done: true, waitS: 0, started: null, startSpreadMs: null } };
  }
  const steps = schedule.members.map((_, m) => stepOf(schedule, m, next));
  // One phase only when it is one for every member.
  // A member that must prepare by a job of its own keeps its prepare job.
  const withPrepare = schedule.members.every((m, i) => preparesInRun(m.cell, steps[i]!, schedule.writeForwarding));
  const phase: RunnerPhase = steps[0]!.prepare && !withPrepare ? 'prepare' : 'run';
  return { cursor, commands: [...commands, { kind: 'start', stepIndex: next, phase, withPrepare }] };
}

/** Jobs past their deadline are stopped and count as done, lost. */
function lookedAt(
  schedule: StepSchedule,
  inflight: NonNullable<StepCursor['inflight']>,
  jobs: readonly JobsState[],
  nowMs: number,
): { states: MemberJobsState[]; stops: StopCommand[] } {
  if (jobs.length !== inflight.members.length) {
    throw new InvalidTaskInputError(
      `step cursor ` +
        inflight.members.map((m) => m.cellId).join(', ') +
        `: ${jobs.length} job states for ${inflight.members.length} members`,
    );
  }
  const stops: StopCommand[] = [];
  const states = inflight.members.map((member, i): MemberJobsState => {
    const state = jobs[i]!;
    if (state.done || member.jobs.length === 0) return { ...state, timedOut: false };
    const index = schedule.members.findIndex((m) => m.cell.cellId === member.cellId);
    if (index < 0) throw new InvalidTaskInputError(`cell ${schedule.cellId} has no member ${member.cellId}`);
    const step = stepOf(schedule, index, inflight.stepIndex);
    const deadlineS = jobDeadlineS(
      step,
      schedule.members[index]!.cell.data,
      inflight.phase,
      inflight.withPrepare === true,
    );
    const started = Math.min(...member.jobs.map((j) => Date.parse(j.startedAt)));
    if (nowMs - started <= deadlineS * 1000) return { ...state, timedOut: false };
    stops.push({ kind: 'stop', cellId: member.cellId, jobs: member.jobs });
    return {
      done: true,
      running: 0,
      timedOut: true,
      jobs: state.jobs.map((j) =>
        j.state === 'running'
          ? { ...j, state: 'lost' as const, detail: `still running after ${deadlineS} s: stopped` }
          : j,
      ),
    };
  });
  return { states, stops };
}

function spreadMs(jobs: readonly (readonly JobHandle[])[]): number | null {
  const starts = jobs.flatMap((member) => member.map((j) => Date.parse(j.startedAt)));
  return starts.length === 0 ? null : Math.max(...starts) - Math.min(...starts);
}

/**
 * One move of a segment's step schedule. A call ends at the first move with a reply or raise.
 * - Jobs still running are counted as a look, and the reply waits lookAgainAfterS(looks).
 * - Once every member's jobs are done, the phase is collected.
 *   A collected prepare starts its run. A collected run moves on to the next step or ends the segment.
 * - A run phase that started no job writes its rows at once, and the next call goes on without a wait.
 * - A command that failed for good is recorded in the cursor, which the teardown reports.
 */
export function nextStepMove(schedule: StepSchedule, cursor: StepCursor, observation: StepObservation): StepMove {
  switch (observation.kind) {
    case 'call': {
      const inflight = cursor.inflight;
      if (inflight === undefined) return startNext(schedule, cursor, []);
      if (observation.jobs === undefined)
        throw new InvalidTaskInputError(`cell ${schedule.cellId}: a step is in flight but its jobs were not looked at`);
      const { states, stops } = lookedAt(schedule, inflight, observation.jobs, observation.nowMs);
      const running = states.filter((s) => !s.done);
      if (running.length > 0) {
        // Not done yet is a value, not an error. The state waits longer after each such look.
        const looks = (inflight.looks ?? 0) + 1;
        const looked: StepCursor = { ...cursor, inflight: { ...inflight, looks } };
        const reply: StepReply = {
          done: false,
          waitS: lookAgainAfterS(looks),
          started: null,
          running: running.reduce((a, s) => a + s.running, 0),
          startSpreadMs: null,
        };
        return { cursor: looked, commands: [...stops, { kind: 'persist', cursor: looked }], reply };
      }
      const collect: CollectCommand = {
        kind: 'collect',
        stepIndex: inflight.stepIndex,
        phase: inflight.phase,
        withPrepare: inflight.withPrepare === true,
        skipped: false,
        members: inflight.members.map((m, i) => ({ ...m, jobsState: states[i]! })),
      };
      return { cursor, commands: [...stops, collect] };
    }
    case 'collected': {
      const { of } = observation;
      // The data is there, so the step's run starts now, in this call.
      if (of.phase === 'prepare')
        return { cursor, commands: [{ kind: 'start', stepIndex: of.stepIndex, phase: 'run', withPrepare: false }] };
      // The slowest member's prepare is what the next step's runs wait for.
      const prepared = observation.preparedS.filter((s): s is number => s !== undefined);
      const lastPrepareS = prepared.length > 0 ? Math.max(...prepared) : cursor.lastPrepareS;
      const advanced: StepCursor = {
        cellId: cursor.cellId,
        next: of.stepIndex + 1,
        ...(lastPrepareS !== undefined ? { lastPrepareS } : {}),
      };
      const persist: PersistCommand = { kind: 'persist', cursor: advanced };
      if (of.skipped)
        return {
          cursor: advanced,
          commands: [persist],
          reply: { done: false, waitS: 0, started: null, startSpreadMs: null },
        };
      return startNext(schedule, advanced, [persist]);
    }
    case 'started': {
      const { of, jobs } = observation;
      if (jobs.length !== schedule.members.length)
        throw new InvalidTaskInputError(
          `cell ${schedule.cellId}: jobs started for ${jobs.length} of ${schedule.members.length} members`,
        );
      const count = jobs.reduce((a, j) => a + j.length, 0);
      const resting: MemberJobsState = { done: true, running: 0, timedOut: false, jobs: [] };
      const members = schedule.members.map((m, i) => ({
        cellId: m.cell.cellId,
        jobs: jobs[i]!,
        resources: m.resources,
      }));
      if (of.phase === 'run' && count === 0) {
        const collect: CollectCommand = {
          kind: 'collect',
          stepIndex: of.stepIndex,
          phase: 'run',
          withPrepare: false,
          skipped: true,
          members: members.map((m) => ({ ...m, jobsState: resting })),
        };
        return { cursor, commands: [collect] };
      }
      const started: StepCursor = {
        cellId: cursor.cellId,
        next: of.stepIndex,
        inflight: {
          stepIndex: of.stepIndex,
          phase: of.phase,
          ...(of.withPrepare ? { withPrepare: true } : {}),
          members,
        },
        ...withLastPrepare(cursor),
      };
      const step = stepOf(schedule, 0, of.stepIndex);
      let waitS = step.waitS;
      if (of.phase === 'prepare') waitS = PREPARE_FIRST_LOOK_S;
      else if (of.withPrepare) {
        // Looked at when the slowest prepare, the start delay and the run should be over.
        // Several clients' runs start together, a few seconds after the last prepare ended.
        const prepareS = Math.max(
          ...schedule.members.map((m) => expectedPrepareS(schedule.backend, m.cell, cursor.lastPrepareS)),
        );
        const together = schedule.members.length > 1 || count > 1 ? START_AFTER_PREPARE_S[schedule.backend] : 0;
        waitS = prepareS + together + step.waitS;
      }
      const reply: StepReply = {
        done: false,
        waitS,
        started: { phase: of.phase, ...(of.withPrepare ? { withPrepare: true } : {}), stepIndex: of.stepIndex },
        startSpreadMs: spreadMs(jobs),
      };
      return { cursor: started, commands: [{ kind: 'persist', cursor: started }], reply };
    }
    case 'failed': {
      // The state's Retry calls again, and the cursor still finds the jobs in flight.
      if (observation.transient) return { cursor, commands: [], raise: true };
      const failed: StepCursor = {
        ...cursor,
        failure: { Error: observation.error.name, Cause: observation.error.message },
      };
      return { cursor: failed, commands: [{ kind: 'persist', cursor: failed }], raise: true };
    }
  }
}
