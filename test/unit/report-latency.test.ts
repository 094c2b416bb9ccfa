/** The report's latency distribution section (core/report/latency-section.ts). */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { latencySection } from '../../core/report/latency-section';
import { makeContext } from '../../core/report/sections';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

const dist = (p50: number) => ({
  lat_p50_ms: p50,
  lat_p90_ms: p50 * 2,
  lat_p95_ms: p50 * 3,
  lat_p99_ms: p50 * 6,
  lat_p999_ms: p50 * 10,
  lat_max_ms: p50 * 20,
});

describe('latencySection', () => {
  it(
    "shows p50 ... max per step (mean over repeats), the widest tail, and each repeat's p99 against the rate " +
      'it was offered',
    () => {
      // Arrange: two repeats of each point of a rate sweep; the 2000/s point has a long tail.
      const steps = [1000, 2000].flatMap((rate, i) =>
        [1, 2].map((repeat) =>
          stepResult({
            variant: 'r6g',
            cell_id: `r6g-r${repeat}`,
            repeat,
            step_id: `rw-r${rate}`,
            workload: 'rw',
            step_index: i,
            rate,
            offered_tps: rate,
            tps: rate,
            ...dist(rate === 1000 ? repeat : 2 * repeat),
            ...(rate === 2000 ? { lat_p99_ms: 30 * repeat } : {}),
          }),
        ),
      );

      // Act
      const section = latencySection(makeContext(runData(steps), prices))!;

      // Assert
      expect(section.tables[0]!.rows).toEqual([
        ['r6g', 'rw t8 @1,000/s', '2', '1.50', '3.00', '4.50', '9.00', '15.00', '30.00'],
        ['r6g', 'rw t8 @2,000/s', '2', '3.00', '6.00', '9.00', '45.00', '30.00', '60.00'],
      ]);
      expect(section.findings[0]).toBe('Widest tail: r6g rw t8 @2,000/s, p99 45.00 ms is 15× its p50 (3.00 ms).');
      // A sweep of two rates: the rate section draws its p99 curve; it is not drawn twice.
      expect(section.charts).toEqual([]);
      expect(section.tables[0]!.notes!.join(' ')).toMatch(/p99 against the offered rate: the rate sweep’s charts/);
    },
  );

  it('draws p99 against the offered rate one chart per workload, never two workloads on one axis', () => {
    // Arrange: two workloads, each offered 0.5x of each repeat's own capacity (repeats at different rates).
    const steps = ['ins', 'upd'].flatMap((workload, w) =>
      [1, 2].map((repeat) =>
        stepResult({
          variant: 'r6g',
          cell_id: `r6g-r${repeat}`,
          repeat,
          step_id: `${workload}-c50`,
          workload,
          step_index: w,
          rate: 1,
          offered_tps: 1000 * repeat + 100 * w,
          tps: 1000 * repeat + 100 * w,
          ...dist(1 + w),
        }),
      ),
    );

    // Act
    const section = latencySection(makeContext(runData(steps), prices))!;

    // Assert
    expect(section.charts.map((c) => c.title)).toEqual([
      'ins t8: p99 latency against offered rate (from the histogram)',
      'upd t8: p99 latency against offered rate (from the histogram)',
    ]);
    expect(section.charts.map((c) => (c.option.series as { data: number[][] }[])[0]!.data)).toEqual([
      [
        [1000, 6],
        [2000, 6],
      ],
      [
        [1100, 12],
        [2100, 12],
      ],
    ]);
  });

  it('keeps an overloaded step, marked, with the p99 it has (no histogram was printed)', () => {
    // Arrange: 1,000/s kept up with; 8,000/s overloaded (sysbench stopped it: tps and an interval p99 only).
    const steps = [
      stepResult({ variant: 'r6g', step_id: 'rw-r1000', workload: 'rw', rate: 1000, offered_tps: 1000, ...dist(1) }),
      stepResult({
        variant: 'r6g',
        step_id: 'rw-r8000',
        workload: 'rw',
        step_index: 1,
        rate: 8000,
        offered_tps: 8000,
        tps: 3000,
        status: 'overloaded',
        lat_pct_ms: 4200,
        lat_p50_ms: null,
        lat_p90_ms: null,
        lat_p95_ms: null,
        lat_p99_ms: null,
        lat_p999_ms: null,
        lat_max_ms: null,
      }),
    ];

    // Act
    const table = latencySection(makeContext(runData(steps), prices))!.tables[0]!;

    // Assert
    expect(table.rows[1]).toEqual([
      'r6g',
      'rw t8 @8,000/s, repeat 1 (overloaded)',
      '1',
      '-',
      '-',
      '-',
      '4,200.00 *',
      '-',
      '-',
    ]);
    expect(table.notes!.join(' ')).toMatch(/\(overloaded\): sysbench stopped the step .* worst 1 s interval/);
  });

  it('does not apply to a run without histograms', () => {
    // Arrange
    const steps = [stepResult({ variant: 'r6g', step_id: 'rw', workload: 'rw', tps: 100 })];

    // Act / Assert
    expect(latencySection(makeContext(runData(steps), prices))).toBeNull();
  });
});

describe('latencySection: the widest tail of a rate step', () => {
  it("says when it is above the p99 of the workload's unlimited-rate step: not a queue, cause not measured", () => {
    // Arrange: with no rate set p99 is 12 ms (p50 4 ms); at 1,000/s p50 is 0.5 ms and p99 60 ms (a stall).
    const steps = [
      stepResult({ variant: 'r6g', step_id: 'up', workload: 'up', ...dist(4), lat_p99_ms: 12 }),
      ...[1000, 2000].map((rate, i) =>
        stepResult({
          variant: 'r6g',
          step_id: `up-r${rate}`,
          workload: 'up',
          step_index: i + 1,
          rate,
          offered_tps: rate,
          tps: rate,
          ...dist(0.5),
          lat_p99_ms: rate === 1000 ? 60 : 2,
          lat_max_ms: 100,
        }),
      ),
    ];

    // Act
    const section = latencySection(makeContext(runData(steps), prices))!;

    // Assert
    expect(section.findings.join('\n')).toContain(
      'Widest tail: r6g up t8 @1,000/s, p99 60.00 ms is 120× its p50 (0.50 ms), above its ' +
        "unlimited-rate step's p99 at full load (12.00 ms): not a queue, cause not measured.",
    );
  });
});

describe("latencySection's slowest transaction", () => {
  it('prints a sub-ms p50 to 3 digits, so the printed figures give the printed ratio', () => {
    // Arrange: p50 0.102 ms, max 28.62 ms (280.6x), p99 only 6x the p50
    const steps = [
      stepResult({ variant: 'a', step_id: 'w', workload: 'w', ...dist(0.102), lat_max_ms: 28.62 }),
      stepResult({ variant: 'b', step_id: 'w', workload: 'w', ...dist(1) }),
    ];
    // Act
    const section = latencySection(makeContext(runData(steps), prices))!;
    // Assert
    expect(section.findings.join('\n')).toContain('max 28.62 ms is 280.6× its p50 (0.102 ms).');
  });
});
