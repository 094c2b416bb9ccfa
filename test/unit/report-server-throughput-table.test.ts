/**
 * The server's statement-rate table (core/report/server-throughput-table.ts) of a rate sweep: a step overloaded in
 * its warm-up measured nothing, so the counters sampled while it ran get no row beside the measured steps.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import { makeContext } from '../../core/report/sections';
import { serverThroughputTable } from '../../core/report/server-throughput-table';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

type Metric = RunData['metrics'][number];
const dml = (cell: string, step: string, value: number): Metric => ({
  cell_id: cell,
  step_id: step,
  role: 'writer',
  instance_id: `${cell}-writer`,
  metric: 'DMLThroughput',
  avg_value: value,
  max_value: value,
  samples: 5,
  source: 'local',
  partial: false,
});

describe('the server throughput table of a rate sweep', () => {
  it('gives no row to a step overloaded in its warm-up, and says why', () => {
    // Arrange: 0.5x measured in both repeats; 6x overloaded before its first interval (no tps) in both.
    const base = { variant: 'r5', workload: 'upd', threads: 96, rate: 1, writes: 1000, reads: 0, other: 0 };
    const steps = [1, 2].flatMap((repeat) => [
      stepResult({ ...base, repeat, step_id: 'upd-t96-c50', offered_tps: 5000, tps: 5000 }),
      stepResult({ ...base, repeat, step_id: 'upd-t96-c600', offered_tps: 60000, tps: null, status: 'overloaded' }),
    ]);
    const metrics = ['r5-r1', 'r5-r2'].flatMap((cell) => [
      dml(cell, 'upd-t96-c50', 4900),
      dml(cell, 'upd-t96-c600', 10795),
    ]);
    const ctx = makeContext({ ...runData(steps), metrics }, prices);

    // Act
    const table = serverThroughputTable(ctx)!;

    // Assert
    expect(table.rows.map((r) => r[1])).toEqual(['upd t96 @0.5x unlimited-rate TPS']);
    expect(table.rows.flat().join(' ')).not.toContain('10,795');
    expect(table.notes!.join(' ')).toMatch(
      /No row for a repeat overloaded in its warm-up \(upd t96 @6x unlimited-rate TPS\): sysbench stopped it/,
    );
  });
});
