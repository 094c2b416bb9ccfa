/**
 * Where a cell's steps are and what RunStep does next, as one pure function: the cursor (kept in the
 * lake, lakeKeys.workflow.stepCursor) and what the Task observed go in, the next cursor and the
 * commands to carry out come out (nextStepMove). It schedules a group (core/workflow/tasks/group.ts): every
 * member's jobs of a step are started in one call and the next phase starts only when every member's are
 * done (the barrier), which for a group of one is a cell's plain sequence.
 *
 * The RunStep Task (core/workflow/tasks/run-step.ts) is the shell around it: it reads the observation
 * (the jobs' states, what starting or collecting did), calls nextStepMove, carries out the commands
 * (stop, collect, start jobs; write the cursor) and feeds the result of the last one back, until a
 * move carries the reply the state machine's Choice reads ({ done, waitS }). Nothing here reads
 * the lake, a clock or a backend, so every transition is tested as a function
 * (test/unit/step-scheduler.test.ts).
 */
import type { CellResources, JobHandle, JobsState, RunContext } from '../backend';
import { BACKEND_TIMES } from '../plan/plan';
import { jobDeadlineS, lookAgainAfterS, preparesInRun } from '../plan/step-looks';
import type { CellPlan, StepPlan, StepSegment, WriteForwardingSupport } from '../plan/types';
import type { RunnerPhase } from '../sysbench/types';
import { InvalidTaskInputError } from './errors';

/**
 * A prepare's first look, seconds after it started; later looks back off (core/plan/step-looks.ts lookAgainAfterS).
 * @internal exported for its tests (a test seam)
 */
export const PREPARE_FIRST_LOOK_S = 10;

/**
 * Seconds after a step's prepare ended at which the runs of its clients start (a run that prepares
 * first, on more than one client): more than an awaiting client takes to learn that the prepare
 * ended (a look a second; on AWS each look is an `aws s3 cp` of its result.json), so that every
 * client's run starts at the same moment, as when one call starts them all.
 */
export const START_AFTER_PREPARE_S: Record<RunContext['backend'], number> = { local: 2, aws: 5 };

/**
 * A member's jobs of the phase in flight, and the resources they
 * were started with (what a stop path needs to record the step).
 */
interface MemberJobs {
  readonly cellId: string;
  readonly jobs: readonly JobHandle[];
  readonly resources: CellResources;
}

/**
 * Why a step failed the cell, as a Catch's error payload (the teardown
 * reports it; on AWS the segment's Map error does not carry it).
 */
interface StepFailure {
  readonly Error: string;
  readonly Cause?: string;
}

/**
 * Where a cell's (or duet's) steps are, in the lake: the state machine's state stays the same size
 * whatever the step count, and a retried or repeated call finds the jobs it started.
 */
export interface StepCursor {
  /** The cell's id, or the duet's (DuetPlan.cellId). */
  readonly cellId: string;
  /** Index of the next step to start. */
  readonly next: number;
  readonly inflight?: {
    readonly stepIndex: number;
    readonly phase: RunnerPhase;
    /** The run's jobs prepare the data first (preparesInRun on every member). */
    readonly withPrepare?: boolean;
    /** Looks that found a member's jobs still running: the next wait backs off with them (lookAgainAfterS). */
    readonly looks?: number;
    /** Per member, in the duet's member order (one for a cell). */
    readonly members: readonly MemberJobs[];
  };
  /**
   * Seconds the slowest member's last prepare took (its result.json):
   * the next step's prepare is expected to take as long.
   */
  readonly lastPrepareS?: number;
  readonly failure?: StepFailure;
}

/**
 * A cell's cursor as runs planned before cells and duets shared one scheduler wrote it: its jobs not yet per member.
 */
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

/** The cursor as the lake holds it, in the shape nextStepMove reads (a cell's older cursor has one member). */
export function storedCursor(stored: StepCursor | CellCursorOfBefore): StepCursor {
  const inflight = stored.inflight;
  if (inflight === undefined || 'members' in inflight) return stored as StepCursor;
  const { jobs, resources, ...rest } = inflight;
  return { ...stored, inflight: { ...rest, members: [{ cellId: stored.cellId, jobs, resources }] } };
}

/** What the scheduler knows of the cell or duet it schedules: plain data, read once per call. */
export interface StepSchedule {
  readonly backend: RunContext['backend'];
  /** The cell or duet's id: the cursor's. */
  readonly cellId: string;
  /** The members' plans and resources, in the duet's member order; a cell is its one member. */
  readonly members: readonly { readonly cell: CellPlan; readonly resources: CellResources }[];
  readonly segment: StepSegment;
  /**
   * What the backend does with writes sent to a reader
   * (Backend.writeForwarding): whether a step's run jobs can prepare its data.
   */
  readonly writeForwarding: WriteForwardingSupport;
}

/** A member's jobs once looked at: JobsState, and whether they were stopped at their deadline. */
export interface MemberJobsState extends JobsState {
  readonly timedOut: boolean;
}

/** Stop a member's jobs of the phase in flight: they ran past their deadline (jobDeadlineS). */
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
 * Collect a phase: judge every member's prepare first when the runs prepared first (a failed one
 * fails the cell before any member has rows of the step), then write each member's rows and
 * outcome. Answered by a 'collected' observation (or 'failed').
 */
export interface CollectCommand {
  readonly kind: 'collect';
  readonly stepIndex: number;
  readonly phase: RunnerPhase;
  readonly withPrepare: boolean;
  /**
   * Every member started no job (a rate step decided not to run): the rows say skipped, and the call returns at once.
   */
  readonly skipped: boolean;
  readonly members: readonly (MemberJobs & { readonly jobsState: MemberJobsState })[];
}
/** Build and start every member's jobs of a phase in one call. Answered by a 'started' observation (or 'failed'). */
export interface StartCommand {
  readonly kind: 'start';
  readonly stepIndex: number;
  readonly phase: RunnerPhase;
  readonly withPrepare: boolean;
}
export type StepCommand = StopCommand | PersistCommand | CollectCommand | StartCommand;

/** What RunStep returns once a move carries it (the Choice reads done, the Wait waitS). */
export interface StepReply {
  /** The segment's last step is collected: the segment's execution ends. */
  readonly done: boolean;
  /** Seconds until the phase just started should be over, or until the next look at jobs still running. */
  readonly waitS: number;
  /** The phase this call started, if any. */
  readonly started: { readonly phase: RunnerPhase; readonly withPrepare?: boolean; readonly stepIndex: number } | null;
  /** Jobs this look found still running (nothing collected nor started). */
  readonly running?: number;
  /** Milliseconds between the first and the last job start of the phase just started (null: none started). */
  readonly startSpreadMs: number | null;
}

export type StepObservation =
  /** A RunStep call begins: the jobs in flight looked at (per member; absent when nothing is in flight). */
  | { readonly kind: 'call'; readonly nowMs: number; readonly jobs?: readonly JobsState[] }
  /** A collect command was carried out: per member, seconds its prepare took (a run that prepared first). */
  | { readonly kind: 'collected'; readonly of: CollectCommand; readonly preparedS: readonly (number | undefined)[] }
  /** A start command was carried out: per member, the jobs it started (none for a member that skips the step). */
  | { readonly kind: 'started'; readonly of: StartCommand; readonly jobs: readonly (readonly JobHandle[])[] }
  /** A command threw. Transient: the state retries the call, nothing is recorded. */
  | {
      readonly kind: 'failed';
      readonly error: { readonly name: string; readonly message: string };
      readonly transient: boolean;
    };

export interface StepMove {
  readonly cursor: StepCursor;
  /** Carried out in order; a collect or start, which the next observation answers, comes last. */
  readonly commands: readonly StepCommand[];
  /** Present: the call ends with this reply once the commands are carried out. */
  readonly reply?: StepReply;
  /** The call ends by throwing the error the 'failed' observation reported, once the commands are carried out. */
  readonly raise?: true;
}

function stepOf(schedule: StepSchedule, member: number, index: number): StepPlan {
  const { cell } = schedule.members[member]!;
  const step = cell.steps[index];
  if (step === undefined) throw new InvalidTaskInputError(`cell ${cell.cellId} has no step ${index}`);
  return step;
}

/**
 * Seconds a step's prepare is expected to take, for the Wait before the first look at a run that
 * prepares first: the last prepare (every step prepares the same data), else the plan's estimate
 * (BACKEND_TIMES rowsPerS, what the run's ETA assumes). A prepare slower than this costs looks
 * (backing off, lookAgainAfterS), one faster only waiting time.
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
  // One phase only when it is one for every member (a step some
  // member must prepare by a job of its own keeps its prepare job).
  const withPrepare = schedule.members.every((m, i) => preparesInRun(m.cell, steps[i]!, schedule.writeForwarding));
  const phase: RunnerPhase = steps[0]!.prepare && !withPrepare ? 'prepare' : 'run';
  return { cursor, commands: [...commands, { kind: 'start', stepIndex: next, phase, withPrepare }] };
}

/** Each member's jobs as looked at: those past their deadline are stopped and count as done, lost. */
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
 * One move of a segment's step schedule. A call begins with a 'call' observation and ends at the
 * first move with a reply (or raise):
 * - jobs in flight still running (past their deadline: stopped, and done): the look is counted in
 *   the cursor and the reply waits lookAgainAfterS(looks);
 * - every member's jobs done: the phase is collected; a collected prepare starts its step's run, a
 *   collected run moves the cursor to the next step, which starts (its prepare, or its run: one
 *   phase when every member's run jobs prepare their data first), or the segment is done;
 * - a run phase that started no job on any member (rate steps decided not to run): its rows are
 *   written at once and the next call, after no wait, goes on (one progress line per step);
 * - a command that failed (not transiently) is recorded in the cursor, which the teardown reports.
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
        // Not done yet: a value, not an error. The state waits (WaitForStep) longer after each such look.
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
      // The data is there: the step's run starts now, in this call.
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
        // Looked at when the slowest prepare, the start delay and the run should be over. Several
        // clients' (or members') runs start together, a few seconds after the last prepare ended.
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
      // Transient: the state's Retry calls again, and the cursor still finds the jobs in flight.
      if (observation.transient) return { cursor, commands: [], raise: true };
      const failed: StepCursor = {
        ...cursor,
        failure: { Error: observation.error.name, Cause: observation.error.message },
      };
      return { cursor: failed, commands: [{ kind: 'persist', cursor: failed }], raise: true };
    }
  }
}
