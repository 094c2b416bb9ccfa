/**
 * S5's overload as a measurement: a --rate step whose sysbench event queue filled is recorded as
 * overloaded with the achieved rate of the intervals before the abort (core/lake/step-rows.ts),
 * rates relative to a measured capacity and stopAtOverload are decided from the cell's earlier
 * steps (core/workflow/step-rates.ts), and --scale small sweeps around this machine's capacity.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scaleSpec } from '../../core/experiment/scale';
import { validateSpec } from '../../core/experiment/validate';
import { overloadOf, stepRowsOf, stepTotals, type ClientStepOutput } from '../../core/lake/step-rows';
import { planRun } from '../../core/plan/plan';
import { parseSysbenchOutput } from '../../core/sysbench/parser';
import type { Interval, ParsedOutput } from '../../core/sysbench/types';
import { decideStep } from '../../core/workflow/step-rates';

const repoRoot = join(__dirname, '..', '..');
const QUEUE_FULL =
  'The event queue is full. This means the worker threads are unable to keep up with the specified event ' +
  'generation rate';

const interval = (t: number, tps: number, latencyMs: number, queueLength: number): Interval => ({
  t,
  threads: 8,
  tps,
  qps: tps * 2,
  readsPerS: tps,
  writesPerS: tps,
  otherPerS: 0,
  latencyMs,
  errorsPerS: 0,
  reconnectsPerS: 0,
  queueLength,
  concurrency: 8,
});
const aborted = (intervals: Interval[], error = QUEUE_FULL): ParsedOutput => ({
  status: 'failed',
  error,
  summary: null,
  intervals,
});

function planOf(workload: Record<string, unknown>) {
  const spec = validateSpec(
    {
      name: 'rates',
      engine: { version: '3.04.0' },
      variants: [{ name: 'v', instanceClass: 'db.r6g.large' }],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'ins', test: 'oltp_insert', threads: [8], durationS: 10, ...workload }],
    },
    'rates.json',
  );
  return planRun(spec, { backend: 'local', now: new Date('2026-11-22T10:00:00Z'), runId: 'run-1' });
}

describe('overloadOf: the event queue filled', () => {
  it(
    'the recorded sysbench output (FATAL: The event queue is full) of a rate step is an overload, its ' +
      "achieved rate the intervals' mean",
    () => {
      // Arrange: the message as sysbench 1.0.20 prints it
      // (test/fixtures/sysbench/rate_queue_full.log), with intervals before it
      const parsed = parseSysbenchOutput(
        readFileSync(join(repoRoot, 'test/fixtures/sysbench/rate_queue_full.log'), 'utf8'),
        { exitCode: 1 },
      );
      const withIntervals = {
        ...parsed,
        intervals: [interval(1, 3000, 40, 20000), interval(2, 3200, 400, 60000), interval(3, 3100, 900, 100000)],
      };
      // Act
      const overload = overloadOf(withIntervals, 48000);
      // Assert
      expect(parsed.error).toBe(QUEUE_FULL);
      expect(overload).toEqual({ tps: 3100, qps: 6200, latPctMs: 900, totalTimeS: 3 });
    },
  );

  it('is not an overload without --rate, or when another failure came with it', () => {
    // Arrange
    const ivs = [interval(1, 3000, 40, 20000)];
    // Act / Assert
    expect(overloadOf(aborted(ivs), 0)).toBeNull();
    expect(
      overloadOf(
        aborted(
          ivs,
          `${QUEUE_FULL}; mysql_stmt_execute() returned error 2013 (Lost connection to server during query)`,
        ),
        1000,
      ),
    ).toBeNull();
    expect(overloadOf(aborted(ivs, 'aurora-bench runner: sysbench not found'), 1000)).toBeNull();
    expect(overloadOf({ status: 'ok', error: null, summary: null, intervals: ivs }, 1000)).toBeNull();
  });

  it(
    "stepRowsOf records an overloaded client as overloaded with its achieved numbers; the step's totals are " +
      'overloaded, not failed',
    () => {
      // Arrange
      const plan = planOf({ rates: [4000, 8000] });
      const cell = plan.cells[0]!;
      const step = cell.steps[1]!;
      const output = (clientId: string, parsed: ParsedOutput): ClientStepOutput => ({
        clientId,
        jobStartedAt: '2026-11-22T10:00:00.000Z',
        parsed,
        result: undefined,
        cpuSamples: [],
      });
      const input = (parsed: ParsedOutput) => ({
        run: { runId: 'run-1', dt: '2026-11-22' },
        cell,
        step,
        outputs: [output('c1', parsed)],
        endpointOf: () => ({ instanceId: 'writer' }),
        sharedHost: true,
        timedOut: false,
        now: '2026-11-22T10:01:00.000Z',
      });
      // Act
      const rows = stepRowsOf(input(aborted([interval(1, 3000, 40, 20000), interval(2, 3400, 600, 90000)]))).steps;
      const crashed = stepRowsOf(
        input(aborted([interval(1, 3000, 40, 20000)], 'sysbench crashed (signal 11 / exit 139)')),
      ).steps;
      // Assert
      expect(rows[0]).toMatchObject({
        status: 'overloaded',
        tps: 3200,
        qps: 6400,
        lat_pct_ms: 600,
        total_time_s: 2,
        error: QUEUE_FULL,
      });
      expect(stepTotals(rows)).toMatchObject({ status: 'overloaded', tps: 3200 });
      expect(crashed[0]).toMatchObject({ status: 'failed', tps: null });
      expect(stepTotals([...rows, ...crashed.map((r) => ({ ...r, client_id: 'c2' }))]).status).toBe('failed');
    },
  );
});

describe('decideStep: rates relative to the measured capacity, and stopAtOverload', () => {
  it('plans the unlimited-rate probe first, then each multiple; the multiple is of the probe’s achieved rate', () => {
    // Arrange
    const plan = planOf({ ratesOfCapacity: [1.5, 0.5], stopAtOverload: true });
    const cell = plan.cells[0]!;
    const [probe, half, oneAndHalf] = cell.steps;
    // Act
    const decided = decideStep(cell, half!, [{ stepId: probe!.stepId, rows: [{ status: 'ok', tps: 2001, rate: 0 }] }]);
    const noProbe = decideStep(cell, half!, [
      { stepId: probe!.stepId, rows: [{ status: 'failed', tps: null, rate: 0 }] },
    ]);
    // Assert
    expect(cell.steps.map((s) => [s.stepId, s.rate, s.rateOfCapacity])).toEqual([
      ['ins-t8', 0, undefined],
      ['ins-t8-c50', 0, 0.5],
      ['ins-t8-c150', 0, 1.5],
    ]);
    expect(decided).toMatchObject({ run: true, step: { rate: 1001 } });
    expect(noProbe).toMatchObject({
      run: false,
      reason: expect.stringMatching(/capacity probe ins-t8 measured no throughput/),
    });
    expect(oneAndHalf!.stopAtOverload).toBe(true);
  });

  it('skips a higher rate once a lower one overloaded, and runs it when none did', () => {
    // Arrange
    const plan = planOf({ rates: [1000, 2000, 4000], stopAtOverload: true });
    const cell = plan.cells[0]!;
    const [r1, r2, r4] = cell.steps;
    // Act
    const afterOverload = decideStep(cell, r4!, [
      { stepId: r1!.stepId, rows: [{ status: 'ok', tps: 1000, rate: 1000 }] },
      { stepId: r2!.stepId, rows: [{ status: 'overloaded', tps: 1700, rate: 2000 }] },
    ]);
    const allTracked = decideStep(cell, r4!, [
      { stepId: r1!.stepId, rows: [{ status: 'ok', tps: 1000, rate: 1000 }] },
      { stepId: r2!.stepId, rows: [{ status: 'ok', tps: 2000, rate: 2000 }] },
    ]);
    const withoutOption = decideStep(planOf({ rates: [1000, 2000, 4000] }).cells[0]!, r4!, []);
    // Assert
    expect(afterOverload).toMatchObject({
      run: false,
      reason: expect.stringMatching(/ins-t8-r2000 already overloaded at 2000\/s/),
    });
    expect(allTracked).toMatchObject({ run: true, step: { rate: 4000 } });
    expect(withoutOption.run).toBe(true);
  });

  it('refuses rates and ratesOfCapacity together, naming the path', () => {
    // Act / Assert
    expect(() => planOf({ rates: [1000], ratesOfCapacity: [0.5] })).toThrow(
      /workloads\[0\]\.ratesOfCapacity.*either rates/s,
    );
  });
});

describe('--scale small: rate sweeps around this machine’s capacity', () => {
  it('turns the study’s absolute rates into a capacity probe plus multiples, and says so', () => {
    // Arrange
    const spec = validateSpec(
      JSON.parse(readFileSync(join(repoRoot, 'experiments/rate-sweep.json'), 'utf8')),
      'rate-sweep.json',
    );
    // Act
    const { spec: small, notes } = scaleSpec(spec, 'small');
    // Assert
    expect(small.workloads.map((w) => [w.rates, w.ratesOfCapacity])).toEqual(
      small.workloads.map(() => [[0], [0.5, 0.9, 1.5, 6]]),
    );
    expect(notes.some((n) => n.path === 'workloads[0].rates' && /capacity probe first/.test(n.message))).toBe(true);
  });
});
