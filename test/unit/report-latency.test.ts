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
      const chart = section.charts[0]!;
      expect(chart.id).toBe('latency-p99-vs-rate');
      expect((chart.option.series as { data: number[][] }[])[0]!.data).toEqual([
        [1000, 6],
        [1000, 12],
        [2000, 30],
        [2000, 60],
      ]);
    },
  );

  it('does not apply to a run without histograms', () => {
    // Arrange
    const steps = [stepResult({ variant: 'r6g', step_id: 'rw', workload: 'rw', tps: 100 })];

    // Act / Assert
    expect(latencySection(makeContext(runData(steps), prices))).toBeNull();
  });
});
