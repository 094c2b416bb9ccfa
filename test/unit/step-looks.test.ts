/**
 * core/plan/step-looks.ts: the waits between looks at a step not done yet back off as RunStep's
 * answers say (10 s x 1.5 per look, at most 300 s), the looks it counts until a deadline are those, and a cell's
 * segments keep every step's worst case within half of Step Functions' 25,000-event history (Developer Guide, "Step
 * Functions service quotas"), whatever the data's size: with data.reuse "step" every step prepares.
 */
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRun, PlanError } from '../../core/plan/plan';
import { preparePlan } from '../../core/plan/prepare';
import { groupSegments } from '../../core/plan/segments';
import {
  jobDeadlineS,
  lookAgainAfterS,
  looksUntil,
  prepareDeadlineS,
  preparesInRun,
  SEGMENT_EVENTS_BUDGET,
  worstStepEvents,
} from '../../core/plan/step-looks';
import type { CellPlan } from '../../core/plan/types';
import { allStates, loadDefinition } from '../../core/workflow/asl';
import { localFunctionArn } from '../../core/workflow/local-runner';
import { STATE } from '../../core/workflow/state-names';

function cellOf(data: SpecInput['data'], steps: number, durationS = 1): CellPlan {
  const threads = Array.from({ length: Math.min(100, steps) }, (_, i) => i + 1);
  const rates = Array.from({ length: steps / threads.length }, (_, i) => i + 1);
  const spec: SpecInput = {
    name: 'looks',
    engine: { version: '3.04.0' },
    variants: [{ name: 'v', instanceClass: 'db.r6g.large', readers: 0 }],
    data,
    defaults: { durationS, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads, rates }],
  };
  return planRun(validateSpec(spec), { backend: 'aws', runId: 'looks-1' }).cells[0]!;
}

/** Events of a segment whose every step's jobs are looked at until their deadline. */
const worstOf = (cell: CellPlan, from: number, to: number) =>
  cell.steps.slice(from, to).reduce((sum, s) => sum + worstStepEvents(cell, s, 'native'), 0);

describe('step looks and segments', () => {
  it('waits 10 s after the first look finding jobs running, x1.5 after each next, whole seconds, max 300 s', () => {
    // Act
    const waits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 50, 10_000].map(lookAgainAfterS);

    // Assert
    expect(waits).toEqual([10, 15, 23, 34, 51, 76, 114, 171, 257, 300, 300, 300, 300]);
  });

  it('the definition polls a step by the loop step-looks.ts counts: RunStep, AreStepsLeft, WaitForStep', () => {
    // Arrange
    const states = allStates(loadDefinition(localFunctionArn));

    // Act
    const runStep = states.get(STATE.RunStep) as
      { Type?: string; Next?: string; ResultPath?: string; Retry?: unknown[] } | undefined;
    const choice = states.get(runStep?.Next ?? '') as
      { Type?: string; Choices?: { Variable?: string }[]; Default?: string } | undefined;
    const wait = states.get(choice?.Default ?? '') as
      { Type?: string; SecondsPath?: string; Next?: string } | undefined;

    // Assert: 9 history events per look (a Task's 5, a Choice's 2,
    // a Wait's 2), no retrier that would look without the Wait.
    expect([runStep?.Type, choice?.Type, wait?.Type]).toEqual(['Task', 'Choice', 'Wait']);
    expect(choice?.Choices?.map((c) => c.Variable)).toEqual(['$.step.done']);
    expect(wait?.SecondsPath).toBe('$.step.waitS');
    expect(wait?.Next).toBe(STATE.RunStep);
    expect(runStep?.ResultPath).toBe('$.step');
    expect(runStep?.Retry).toHaveLength(1);
  });

  it('counts the looks until a deadline from the backoff: 10, 15, 23 ... s, at most 300 s apart', () => {
    // 10, 25, 48, 82, 133 s: the fifth look is past 120 s.
    expect(looksUntil(120)).toBe(5);
    expect(looksUntil(0)).toBe(1);
    // Past the cap the looks are 300 s apart: a deadline 3,000 s later is 10 looks more.
    expect(looksUntil(10_000) - looksUntil(7_000)).toBe(10);
  });

  it('a run that prepares first has one deadline and one phase of events; a separate prepare job has two', () => {
    // Arrange
    const perStep = cellOf({ tables: 10, tableSize: 1_000_000, reuse: 'step' }, 2);
    const perCell = cellOf({ tables: 10, tableSize: 1_000_000, reuse: 'cell' }, 2);
    const [first, second] = perStep.steps;

    // Act / Assert
    expect([
      preparesInRun(perStep, first!, 'native'),
      preparesInRun(perStep, second!, 'native'),
      preparesInRun(perCell, perCell.steps[0]!, 'native'),
      preparesInRun(perCell, perCell.steps[1]!, 'native'),
    ]).toEqual([true, true, false, false]);
    // A step whose writes go to a reader: Aurora forwards them, so its run prepares too; a backend that emulates
    // write forwarding waits for the replicas between a prepare job and the run (core/backends/local)
    const forwarded = { ...first!, forwardedWrites: { consistency: 'SESSION' } };
    expect([
      preparesInRun(perStep, forwarded, 'native'),
      preparesInRun(perStep, forwarded, 'emulated'),
      preparesInRun(perStep, first!, 'emulated'),
    ]).toEqual([true, false, true]);
    expect(prepareDeadlineS(perStep.data)).toBe(5_000);
    expect(jobDeadlineS(first!, perStep.data, 'run', true)).toBe(5_000 + 1 + 60);
    expect(worstStepEvents(perStep, first!, 'native')).toBe(9 + 9 * looksUntil(5_061));
    expect(worstStepEvents(perCell, perCell.steps[0]!, 'native')).toBe(
      9 + 9 * looksUntil(5_000) + 9 + 9 * looksUntil(61),
    );
    expect(worstStepEvents(perCell, perCell.steps[1]!, 'native')).toBe(9 + 9 * looksUntil(61));
  });

  it('keeps 200 steps a segment where every step fits (short runs, the data prepared once per cell)', () => {
    // Arrange
    const cell = cellOf({ tables: 1, tableSize: 1000, reuse: 'cell' }, 1000);

    // Act
    const segments = groupSegments([cell], 'native');

    // Assert
    expect(segments.map((s) => s.to - s.from)).toEqual([200, 200, 200, 200, 200]);
    for (const s of segments) expect(worstOf(cell, s.from, s.to)).toBeLessThanOrEqual(SEGMENT_EVENTS_BUDGET);
  });

  it('with data.reuse "step" bounds even a small data set by its prepare deadline (at least 600 s)', () => {
    // Arrange
    const cell = cellOf({ tables: 1, tableSize: 1000, reuse: 'step' }, 1000);

    // Act
    const segments = groupSegments([cell], 'native');

    // Assert: 9 + 9 x looksUntil(600 + 61) = 90 events a step, 138 steps within 12,500 - 50.
    expect(worstStepEvents(cell, cell.steps[0]!, 'native')).toBe(90);
    expect(segments.map((s) => s.to - s.from)).toEqual([138, 138, 138, 138, 138, 138, 138, 34]);
    for (const s of segments) expect(worstOf(cell, s.from, s.to)).toBeLessThanOrEqual(SEGMENT_EVENTS_BUDGET);
  });

  it('with data.reuse "step" and 100M rows, splits the steps so every segment stays within half the limit', () => {
    // Arrange: 100 x 1M rows: every step's prepare may take 50,000 s, looked at every 300 s.
    const cell = cellOf({ tables: 100, tableSize: 1_000_000, reuse: 'step' }, 1000);

    // Act
    const segments = groupSegments([cell], 'native');

    // Assert: contiguous, covering every step, each within the budget, and no more segments than it takes.
    expect(segments[0]!.from).toBe(0);
    expect(segments.at(-1)!.to).toBe(1000);
    segments.slice(1).forEach((s, i) => expect(s.from).toBe(segments[i]!.to));
    for (const s of segments) expect(worstOf(cell, s.from, s.to)).toBeLessThanOrEqual(SEGMENT_EVENTS_BUDGET);
    segments
      .slice(1)
      .forEach((s, i) =>
        expect(worstOf(cell, segments[i]!.from, s.from + 1)).toBeGreaterThan(SEGMENT_EVENTS_BUDGET - 50),
      );
    expect(segments.length).toBeGreaterThan(5);
  });

  it("bounds a duet's segments as a cell's: a step costs at most its costliest member's worst case", () => {
    // Arrange: members of 1,000 steps with data.reuse "step", one over 100M rows and one over 1,000 (a duet's members
    // share their data in a real plan; different sizes show which member bounds the segments).
    const big = cellOf({ tables: 100, tableSize: 1_000_000, reuse: 'step' }, 1000);
    const small = cellOf({ tables: 1, tableSize: 1000, reuse: 'step' }, 1000);

    // Act
    const segments = groupSegments([small, big], 'native');

    // Assert: the costlier member's segments (the small data's alone would be 7 x 138 + 34 steps).
    expect(segments).toEqual(groupSegments([big], 'native'));
    expect(segments).not.toEqual(groupSegments([small], 'native'));
    expect(groupSegments([small, small], 'native')).toEqual(groupSegments([small], 'native'));
    for (const s of segments) expect(worstOf(big, s.from, s.to)).toBeLessThanOrEqual(SEGMENT_EVENTS_BUDGET);
  });

  it('refuses on AWS, by data.tableSize, a data set whose prepare alone could pass the budget; plans one under', () => {
    // Arrange: 10 tables of 90M rows = 900 million: a prepare deadline
    // of 450,000 s, about 1,500 looks of 9 events; 10 x 80M fits.
    const specOf = (tableSize: number): SpecInput => ({
      name: 'huge',
      engine: { version: '3.04.0' },
      variants: [{ name: 'v', instanceClass: 'db.r6g.large', readers: 0 }],
      data: { tables: 10, tableSize },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
    });
    const prepare = (tableSize: number) =>
      preparePlan(
        { spec: validateSpec(specOf(tableSize)), scripts: {} },
        { backend: 'aws', runId: 'huge-1', source: 'huge.json' },
      );

    // Act
    const refused = () => prepare(90_000_000);
    const fits = prepare(80_000_000);

    // Assert
    expect(refused).toThrow(PlanError);
    expect(refused).toThrow(
      new RegExp(
        /huge\.json[\s\S]*data\.tableSize: 900,000,000 rows: their prepare may run 5\.2 days .* more/.source +
          / than half of Step Functions' 25,000 per execution/.source,
      ),
    );
    expect(worstStepEvents(fits.plan.cells[0]!, fits.plan.cells[0]!.steps[0]!, 'native')).toBeLessThanOrEqual(
      SEGMENT_EVENTS_BUDGET,
    );
    expect(() =>
      preparePlan({ spec: validateSpec(specOf(90_000_000)), scripts: {} }, { backend: 'local', runId: 'huge-2' }),
    ).not.toThrow();
  });
});
