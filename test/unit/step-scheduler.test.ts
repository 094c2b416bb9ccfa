/**
 * core/workflow/step-scheduler.ts as a function: each transition of a cell's (a duet of one) and a
 * duet's step schedule from a cursor and an observation, then seeded random sequences of
 * observations (jobs that finish, hang, fail to start, fail to collect, transient errors) driven
 * through it as the RunStep shell drives it: every sequence ends in done or failed within the looks
 * the deadlines allow, and no step's phase is started twice.
 */
import type { CellResources, JobHandle, JobsState } from '../../core/backend';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';
import { jobDeadlineS, lookAgainAfterS, looksUntil, prepareDeadlineS } from '../../core/plan/step-looks';
import type { CellPlan } from '../../core/plan/types';
import {
  expectedPrepareS,
  nextStepMove,
  PREPARE_FIRST_LOOK_S,
  START_AFTER_PREPARE_S,
  storedCursor,
  type CollectCommand,
  type StartCommand,
  type StepCursor,
  type StepMove,
  type StepObservation,
  type StepSchedule,
} from '../../core/workflow/step-scheduler';

const T0 = Date.parse('2026-01-01T00:00:00Z');

const planned = new Map<string, CellPlan[]>();
function cellsOf(reuse: 'cell' | 'step', variants: number, threads: number[] = [1, 2, 4]): CellPlan[] {
  const key = `${reuse} ${variants} ${threads.join(',')}`;
  const cached = planned.get(key);
  if (cached) return cached;
  const spec: SpecInput = {
    name: 'sched',
    engine: { version: '3.04.0' },
    variants: Array.from({ length: variants }, (_, i) => ({
      name: `v${i}`,
      instanceClass: 'db.r6g.large',
      readers: 0,
    })),
    data: { tables: 2, tableSize: 10_000, reuse },
    defaults: { durationS: 30, warmupS: 5, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads }],
    ...(variants > 1 ? { order: 'duet' as const } : {}),
  };
  const plan = planRun(validateSpec(spec), { backend: 'aws', runId: 'sched-1' });
  const cells = variants > 1 ? plan.cells.filter((c) => c.duet === plan.cells[0]!.duet) : [plan.cells[0]!];
  planned.set(key, cells);
  return cells;
}

function resourcesOf(cell: CellPlan): CellResources {
  return {
    cellId: cell.cellId,
    clusterId: `cluster-${cell.cellId}`,
    writer: { host: 'w', port: 3306 },
    readers: [],
    clients: [{ clientId: 'client-1' }, { clientId: 'client-2' }],
    credentials: { user: 'sbtest', secretRef: 's' },
    notes: [],
    backendState: {},
  } as unknown as CellResources;
}

function scheduleOf(cells: CellPlan[], segment = { from: 0, to: cells[0]!.steps.length }): StepSchedule {
  return {
    backend: 'aws',
    writeForwarding: 'native',
    cellId: cells.length > 1 ? cells[0]!.duet! : cells[0]!.cellId,
    members: cells.map((cell) => ({ cell, resources: resourcesOf(cell) })),
    segment,
  };
}

function handle(
  cellId: string,
  stepIndex: number,
  phase: 'prepare' | 'run',
  client: number,
  startedMs: number,
): JobHandle {
  return {
    jobId: `${cellId}/s${stepIndex}/${phase}/client-${client}`,
    clientId: `client-${client}`,
    phase,
    outputPrefix: `raw/${cellId}/s${stepIndex}/${phase}/client-${client}/`,
    ref: `ref-${cellId}-${stepIndex}-${phase}-${client}`,
    startedAt: new Date(startedMs).toISOString(),
  };
}

const running = (jobs: readonly JobHandle[]): JobsState => ({
  done: false,
  running: jobs.length,
  jobs: jobs.map((j) => ({ jobId: j.jobId, state: 'running' })),
});
const exited = (jobs: readonly JobHandle[]): JobsState => ({
  done: true,
  running: 0,
  jobs: jobs.map((j) => ({ jobId: j.jobId, state: 'exited' })),
});

/** A cursor with a phase in flight: each member's jobs (one or two clients) started at `startedMs`. */
function inflightCursor(
  schedule: StepSchedule,
  stepIndex: number,
  phase: 'prepare' | 'run',
  startedMs = T0,
  extra: Partial<NonNullable<StepCursor['inflight']>> = {},
): StepCursor {
  return {
    cellId: schedule.cellId,
    next: stepIndex,
    inflight: {
      stepIndex,
      phase,
      ...extra,
      members: schedule.members.map((m) => ({
        cellId: m.cell.cellId,
        jobs: [handle(m.cell.cellId, stepIndex, phase, 1, startedMs)],
        resources: m.resources,
      })),
    },
  };
}

const kinds = (move: StepMove) => move.commands.map((c) => c.kind);

describe('the step scheduler, transition by transition', () => {
  it('starts the first step of a fresh segment with its prepare when the data is prepared once per cell', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const move = nextStepMove(schedule, { cellId: schedule.cellId, next: 0 }, { kind: 'call', nowMs: T0 });
    expect(move.reply).toBeUndefined();
    expect(move.commands).toEqual([{ kind: 'start', stepIndex: 0, phase: 'prepare', withPrepare: false }]);
  });

  it('records the started prepare in the cursor and first looks after PREPARE_FIRST_LOOK_S', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const cursor: StepCursor = { cellId: schedule.cellId, next: 0 };
    const of: StartCommand = { kind: 'start', stepIndex: 0, phase: 'prepare', withPrepare: false };
    const jobs = [[handle(schedule.cellId, 0, 'prepare', 1, T0)]];
    const move = nextStepMove(schedule, cursor, { kind: 'started', of, jobs });
    expect(move.reply).toEqual({
      done: false,
      waitS: PREPARE_FIRST_LOOK_S,
      started: { phase: 'prepare', stepIndex: 0 },
      startSpreadMs: 0,
    });
    expect(move.commands).toEqual([{ kind: 'persist', cursor: move.cursor }]);
    expect(move.cursor.inflight).toEqual({
      stepIndex: 0,
      phase: 'prepare',
      members: [{ cellId: schedule.cellId, jobs: jobs[0], resources: schedule.members[0]!.resources }],
    });
  });

  it("starts the step's run in the same call once its prepare is collected, the cursor kept until then", () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const cursor = inflightCursor(schedule, 0, 'prepare');
    const look = nextStepMove(schedule, cursor, {
      kind: 'call',
      nowMs: T0 + 20_000,
      jobs: [exited(cursor.inflight!.members[0]!.jobs)],
    });
    expect(kinds(look)).toEqual(['collect']);
    const collect = look.commands[0] as CollectCommand;
    expect(collect).toMatchObject({ stepIndex: 0, phase: 'prepare', withPrepare: false, skipped: false });
    const move = nextStepMove(schedule, look.cursor, { kind: 'collected', of: collect, preparedS: [undefined] });
    expect(move.cursor).toBe(cursor);
    expect(move.commands).toEqual([{ kind: 'start', stepIndex: 0, phase: 'run', withPrepare: false }]);
  });

  it('records a failed prepare in the cursor and raises; a transient error records nothing', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const cursor = inflightCursor(schedule, 0, 'prepare');
    const error = {
      name: 'DataPrepareFailedError',
      message: 'sysbench prepare for cell x failed on client-1: exit code 1',
    };
    const failed = nextStepMove(schedule, cursor, { kind: 'failed', error, transient: false });
    expect(failed.raise).toBe(true);
    expect(failed.cursor).toEqual({ ...cursor, failure: { Error: error.name, Cause: error.message } });
    expect(failed.commands).toEqual([{ kind: 'persist', cursor: failed.cursor }]);
    const transient = nextStepMove(schedule, cursor, {
      kind: 'failed',
      error: { name: 'TransientBackendError', message: 'throttled' },
      transient: true,
    });
    expect(transient).toEqual({ cursor, commands: [], raise: true });
  });

  it('waits for a running step, backing off with each look (10, 15, 23 s), counting looks in the cursor', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    let cursor = inflightCursor(schedule, 1, 'run');
    const waits: number[] = [];
    for (let look = 1; look <= 3; look++) {
      const move = nextStepMove(schedule, cursor, {
        kind: 'call',
        nowMs: T0 + look * 1000,
        jobs: [running(cursor.inflight!.members[0]!.jobs)],
      });
      expect(move.reply).toMatchObject({ done: false, started: null, running: 1 });
      expect(move.cursor.inflight!.looks).toBe(look);
      expect(move.commands).toEqual([{ kind: 'persist', cursor: move.cursor }]);
      waits.push(move.reply!.waitS);
      cursor = move.cursor;
    }
    expect(waits).toEqual([10, 15, 23]);
    expect(waits).toEqual([1, 2, 3].map(lookAgainAfterS));
  });

  it('stops jobs past their deadline and collects them as timed out, their running jobs lost', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const cursor = inflightCursor(schedule, 1, 'run');
    const step = schedule.members[0]!.cell.steps[1]!;
    const deadlineS = jobDeadlineS(step, schedule.members[0]!.cell.data, 'run');
    const jobs = cursor.inflight!.members[0]!.jobs;
    const atDeadline = nextStepMove(schedule, cursor, {
      kind: 'call',
      nowMs: T0 + deadlineS * 1000,
      jobs: [running(jobs)],
    });
    expect(kinds(atDeadline)).toEqual(['persist']);
    const past = nextStepMove(schedule, cursor, {
      kind: 'call',
      nowMs: T0 + deadlineS * 1000 + 1,
      jobs: [running(jobs)],
    });
    expect(kinds(past)).toEqual(['stop', 'collect']);
    expect(past.commands[0]).toEqual({ kind: 'stop', cellId: schedule.cellId, jobs });
    const collect = past.commands[1] as CollectCommand;
    expect(collect.members[0]!.jobsState).toEqual({
      done: true,
      running: 0,
      timedOut: true,
      jobs: [{ jobId: jobs[0]!.jobId, state: 'lost', detail: `still running after ${deadlineS} s: stopped` }],
    });
  });

  it("moves to the next step after collecting a run, and is done after the segment's last step", () => {
    const schedule = scheduleOf(cellsOf('cell', 1), { from: 0, to: 2 });
    const collect = (stepIndex: number): CollectCommand => ({
      kind: 'collect',
      stepIndex,
      phase: 'run',
      withPrepare: false,
      skipped: false,
      members: [],
    });
    const middle = nextStepMove(schedule, inflightCursor(schedule, 0, 'run'), {
      kind: 'collected',
      of: collect(0),
      preparedS: [undefined],
    });
    expect(middle.cursor).toEqual({ cellId: schedule.cellId, next: 1 });
    expect(middle.commands).toEqual([
      { kind: 'persist', cursor: middle.cursor },
      { kind: 'start', stepIndex: 1, phase: 'run', withPrepare: false },
    ]);
    const last = nextStepMove(schedule, inflightCursor(schedule, 1, 'run'), {
      kind: 'collected',
      of: collect(1),
      preparedS: [undefined],
    });
    expect(last.cursor).toEqual({ cellId: schedule.cellId, next: 2 });
    expect(last.reply).toEqual({ done: true, waitS: 0, started: null, startSpreadMs: null });
    expect(kinds(last)).toEqual(['persist']);
  });

  it('writes a run that started no job as skipped at once and goes on after no wait', () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const cursor: StepCursor = { cellId: schedule.cellId, next: 2 };
    const of: StartCommand = { kind: 'start', stepIndex: 2, phase: 'run', withPrepare: false };
    const started = nextStepMove(schedule, cursor, { kind: 'started', of, jobs: [[]] });
    expect(kinds(started)).toEqual(['collect']);
    const collect = started.commands[0] as CollectCommand;
    expect(collect).toMatchObject({ stepIndex: 2, skipped: true });
    const move = nextStepMove(schedule, started.cursor, { kind: 'collected', of: collect, preparedS: [undefined] });
    expect(move.reply).toEqual({ done: false, waitS: 0, started: null, startSpreadMs: null });
    expect(move.cursor).toEqual({ cellId: schedule.cellId, next: 3 });
  });

  it("reads a cell's cursor written before cells and duets shared the scheduler as a duet of one member", () => {
    const schedule = scheduleOf(cellsOf('cell', 1));
    const jobs = [handle(schedule.cellId, 0, 'run', 1, T0)];
    const resources = schedule.members[0]!.resources;
    const before = {
      cellId: schedule.cellId,
      next: 0,
      inflight: { stepIndex: 0, phase: 'run', looks: 2, jobs, resources },
      lastPrepareS: 3,
    };
    expect(storedCursor(before as never)).toEqual({
      cellId: schedule.cellId,
      next: 0,
      inflight: { stepIndex: 0, phase: 'run', looks: 2, members: [{ cellId: schedule.cellId, jobs, resources }] },
      lastPrepareS: 3,
    });
  });
});

describe('the step scheduler for a duet', () => {
  it('starts a step whose runs prepare first as one phase on every member, in one start command', () => {
    const schedule = scheduleOf(cellsOf('step', 2));
    expect(schedule.members).toHaveLength(2);
    const move = nextStepMove(schedule, { cellId: schedule.cellId, next: 0 }, { kind: 'call', nowMs: T0 });
    expect(move.commands).toEqual([{ kind: 'start', stepIndex: 0, phase: 'run', withPrepare: true }]);
  });

  it("synchronizes the members' start: looks when the slowest prepare, start delay and run should be over", () => {
    const schedule = scheduleOf(cellsOf('step', 2));
    const of: StartCommand = { kind: 'start', stepIndex: 0, phase: 'run', withPrepare: true };
    const jobs = schedule.members.map((m, i) => [handle(m.cell.cellId, 0, 'run', 1, T0 + i * 7)]);
    const move = nextStepMove(
      schedule,
      { cellId: schedule.cellId, next: 0, lastPrepareS: 41.2 },
      { kind: 'started', of, jobs },
    );
    const step = schedule.members[0]!.cell.steps[0]!;
    expect(move.reply).toEqual({
      done: false,
      waitS: 42 + START_AFTER_PREPARE_S.aws + step.waitS,
      started: { phase: 'run', withPrepare: true, stepIndex: 0 },
      startSpreadMs: 7,
    });
    expect(move.cursor.inflight!.members.map((m) => m.cellId)).toEqual(schedule.members.map((m) => m.cell.cellId));
    expect(move.cursor.lastPrepareS).toBe(41.2);
    // A cell (one member) with one client adds no start delay: its run follows its own prepare.
    const cell = scheduleOf(cellsOf('step', 1));
    const alone = nextStepMove(
      cell,
      { cellId: cell.cellId, next: 0 },
      { kind: 'started', of, jobs: [[handle(cell.cellId, 0, 'run', 1, T0)]] },
    );
    expect(alone.reply!.waitS).toBe(expectedPrepareS('aws', cell.members[0]!.cell, undefined) + step.waitS);
  });

  it("awaits another member's prepare: nothing is collected while any member's jobs still run", () => {
    const schedule = scheduleOf(cellsOf('step', 2));
    const cursor = inflightCursor(schedule, 0, 'run', T0, { withPrepare: true });
    const [a, b] = cursor.inflight!.members;
    const move = nextStepMove(schedule, cursor, {
      kind: 'call',
      nowMs: T0 + 60_000,
      jobs: [exited(a!.jobs), running(b!.jobs)],
    });
    expect(kinds(move)).toEqual(['persist']);
    expect(move.reply).toMatchObject({ done: false, waitS: lookAgainAfterS(1), running: 1 });
    const both = nextStepMove(schedule, move.cursor, {
      kind: 'call',
      nowMs: T0 + 90_000,
      jobs: [exited(a!.jobs), exited(b!.jobs)],
    });
    expect(kinds(both)).toEqual(['collect']);
    expect(both.commands[0]).toMatchObject({
      withPrepare: true,
      members: [{ cellId: a!.cellId }, { cellId: b!.cellId }],
    });
  });

  it("keeps the slowest member's prepare time for the next step's wait", () => {
    const schedule = scheduleOf(cellsOf('step', 2));
    const of: CollectCommand = {
      kind: 'collect',
      stepIndex: 0,
      phase: 'run',
      withPrepare: true,
      skipped: false,
      members: [],
    };
    const move = nextStepMove(schedule, inflightCursor(schedule, 0, 'run'), {
      kind: 'collected',
      of,
      preparedS: [12.5, 30.25],
    });
    expect(move.cursor).toEqual({ cellId: schedule.cellId, next: 1, lastPrepareS: 30.25 });
  });

  it('stops only the member past its deadline and waits for the other', () => {
    const schedule = scheduleOf(cellsOf('cell', 2));
    const cursor: StepCursor = {
      ...inflightCursor(schedule, 1, 'run'),
    };
    const late = cursor.inflight!.members[0]!;
    const onTime = {
      ...cursor.inflight!.members[1]!,
      jobs: [handle(cursor.inflight!.members[1]!.cellId, 1, 'run', 1, T0 + 3_600_000)],
    };
    const step = schedule.members[0]!.cell.steps[1]!;
    const nowMs = T0 + jobDeadlineS(step, schedule.members[0]!.cell.data, 'run') * 1000 + 1;
    const move = nextStepMove(
      schedule,
      { ...cursor, inflight: { ...cursor.inflight!, members: [late, onTime] } },
      { kind: 'call', nowMs, jobs: [running(late.jobs), running(onTime.jobs)] },
    );
    expect(move.commands.map((c) => (c.kind === 'stop' ? `stop ${c.cellId}` : c.kind))).toEqual([
      `stop ${late.cellId}`,
      'persist',
    ]);
    expect(move.reply).toMatchObject({ running: 1 });
  });
});

/** mulberry32: a small seeded generator, so every sequence is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Ended {
  readonly end: 'done' | 'failed';
  readonly calls: number;
  readonly starts: string[];
  readonly collectedRuns: number[];
  readonly cursor: StepCursor;
}

/**
 * A segment driven as RunStep's shell drives it, against a world whose jobs finish after a random
 * time or hang, whose starts and collects fail now and then (transiently: the state calls again;
 * or for good: the cell fails), and whose rate steps are sometimes skipped by every member.
 */
function drive(schedule: StepSchedule, random: () => number, maxCalls: number): Ended {
  let stored: StepCursor = { cellId: schedule.cellId, next: schedule.segment.from };
  let nowMs = T0;
  const finishAt = new Map<string, number>();
  const starts: string[] = [];
  const collectedRuns: number[] = [];
  let nextStored = stored;
  for (let calls = 1; calls <= maxCalls; calls++) {
    let cursor = stored;
    const jobs = cursor.inflight?.members.map((m): JobsState => {
      const left = m.jobs.filter((j) => (finishAt.get(j.jobId) ?? 0) > nowMs);
      return left.length === 0
        ? exited(m.jobs)
        : {
            done: false,
            running: left.length,
            jobs: m.jobs.map((j) => ({ jobId: j.jobId, state: left.includes(j) ? 'running' : 'exited' })),
          };
    });
    let observation: StepObservation = { kind: 'call', nowMs, ...(jobs ? { jobs } : {}) };
    let waitS = 0;
    let transient = false;
    for (let moves = 0; ; moves++) {
      if (moves > 10) throw new Error('a call that never replies');
      const move = nextStepMove(schedule, cursor, observation);
      cursor = move.cursor;
      const answering = move.commands.filter((c) => c.kind === 'collect' || c.kind === 'start');
      expect(answering.length).toBeLessThanOrEqual(1);
      if (answering.length === 1) expect(move.commands.at(-1)).toBe(answering[0]);
      if (move.raise) {
        for (const c of move.commands) if (c.kind === 'persist') nextStored = c.cursor;
        stored = nextStored;
        if (observation.kind === 'failed' && observation.transient) {
          transient = true;
          break;
        }
        expect(stored.failure).toBeDefined();
        return { end: 'failed', calls, starts, collectedRuns, cursor: stored };
      }
      let answer: StepObservation | undefined;
      for (const c of move.commands) {
        if (c.kind === 'persist') {
          expect(c.cursor.next).toBeGreaterThanOrEqual(nextStored.next);
          nextStored = c.cursor;
        } else if (c.kind === 'stop') {
          for (const j of c.jobs) finishAt.set(j.jobId, nowMs);
        } else if (c.kind === 'collect') {
          const roll = random();
          if (roll < 0.02)
            answer = {
              kind: 'failed',
              error: { name: 'DataPrepareFailedError', message: 'prepare failed' },
              transient: false,
            };
          else if (roll < 0.06)
            answer = {
              kind: 'failed',
              error: { name: 'TransientBackendError', message: 'throttled' },
              transient: true,
            };
          else {
            if (c.phase === 'run') collectedRuns.push(c.stepIndex);
            answer = {
              kind: 'collected',
              of: c,
              preparedS: c.members.map(() => (c.withPrepare ? 1 + random() * 60 : undefined)),
            };
          }
        } else {
          const roll = random();
          if (roll < 0.01)
            answer = { kind: 'failed', error: { name: 'Error', message: 'no client answered' }, transient: false };
          else if (roll < 0.04)
            answer = {
              kind: 'failed',
              error: { name: 'TransientBackendError', message: 'throttled' },
              transient: true,
            };
          else if (c.phase === 'run' && roll < 0.12) {
            starts.push(`${c.stepIndex} ${c.phase}`);
            answer = { kind: 'started', of: c, jobs: schedule.members.map(() => []) };
          } else {
            starts.push(`${c.stepIndex} ${c.phase}`);
            const handles = schedule.members.map((m) =>
              Array.from({ length: 1 + Math.floor(random() * 2) }, (_, i) => {
                const h = handle(m.cell.cellId, c.stepIndex, c.phase, i + 1, nowMs);
                // Most jobs end within a few minutes; some hang until their deadline stops them.
                finishAt.set(h.jobId, random() < 0.1 ? Infinity : nowMs + random() * 400_000);
                return h;
              }),
            );
            answer = { kind: 'started', of: c, jobs: handles };
          }
        }
      }
      if (move.reply) {
        stored = nextStored;
        if (move.reply.done) return { end: 'done', calls, starts, collectedRuns, cursor: stored };
        expect(Number.isInteger(move.reply.waitS) && move.reply.waitS >= 0).toBe(true);
        waitS = move.reply.waitS;
        break;
      }
      expect(answer).toBeDefined();
      observation = answer!;
    }
    // A transient failure: the state's Retry calls again after a few seconds.
    nowMs += (transient ? 2 : waitS) * 1000;
  }
  throw new Error(`segment ${schedule.cellId} neither done nor failed after ${maxCalls} calls`);
}

describe('the step scheduler over seeded random sequences of observations', () => {
  it('ends every sequence done or failed within the looks the deadlines allow, never starting a phase twice', () => {
    const ends = { done: 0, failed: 0 };
    for (let seed = 1; seed <= 300; seed++) {
      const random = seeded(seed);
      const reuse = random() < 0.5 ? 'cell' : 'step';
      const members = random() < 0.5 ? 1 : 2;
      const cells = cellsOf(reuse, members, [1, 2, 4, 8].slice(0, 1 + Math.floor(random() * 4)));
      const from = Math.floor(random() * cells[0]!.steps.length);
      const schedule = scheduleOf(cells, { from, to: cells[0]!.steps.length });
      // Each step: at most two phases, each looked at until its deadline,
      // plus its start and collect calls; and the transient retries.
      const steps = cells[0]!.steps.slice(from);
      const bound =
        steps.reduce(
          (sum, s) =>
            sum +
            2 *
              (looksUntil(Math.max(prepareDeadlineS(cells[0]!.data), jobDeadlineS(s, cells[0]!.data, 'run', true))) +
                2),
          0,
        ) + 200;
      const ended = drive(schedule, random, bound);
      ends[ended.end]++;
      expect(new Set(ended.starts).size).toBe(ended.starts.length);
      if (ended.end === 'done') {
        expect(ended.collectedRuns).toEqual(steps.map((s) => s.index));
        expect(ended.cursor.next).toBe(cells[0]!.steps.length);
        expect(ended.cursor.inflight).toBeUndefined();
      } else {
        expect(ended.cursor.failure?.Error).toMatch(/DataPrepareFailedError|Error/);
      }
    }
    // The sequences cover both ends.
    expect(ends.done).toBeGreaterThan(100);
    expect(ends.failed).toBeGreaterThan(10);
  });
});
