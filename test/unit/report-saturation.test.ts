/**
 * Saturated clients left out of ratios, scores and price-performance unless asked, and said so;
 * a rate sweep's price-performance from its capacity at the knee (core/report/sections.ts, report.ts).
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import { makeContext } from '../../core/report/sections';
import { analyzePrice } from '../../core/report/studies/price';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

describe('client-bound repeats', () => {
  // Three repeats of one step; in the third the client saturated its CPU and measured itself.
  const steps = [1, 2, 3].map((repeat) =>
    stepResult({
      variant: 'a',
      step_id: 'rw',
      repeat,
      tps: repeat === 3 ? 400 : 1000 + repeat,
      saturated_clients: repeat === 3 ? 1 : 0,
    }),
  );

  it('are left out of what the estimates use (group.ok) by default, and the report says which', () => {
    const ctx = makeContext(runData(steps), prices);
    const report = buildReport(runData(steps), prices);

    expect(ctx.groups[0]!.ok.map((r) => r.repeat)).toEqual([1, 2]);
    expect(ctx.leftOutSaturated.map((s) => s.repeat)).toEqual([3]);
    expect(report.notes[0]).toMatch(
      new RegExp(
        /^Left out of every ratio, score and price-performance figure: 1 step result whose client/.source +
          / saturated its CPU .*a rw \(repeat 3\).*--include-saturated/.source,
      ),
    );
  });

  it('are kept when asked', () => {
    const ctx = makeContext(runData(steps), prices, { includeSaturated: true });

    expect(ctx.groups[0]!.ok.map((r) => r.repeat)).toEqual([1, 2, 3]);
    expect(
      buildReport(runData(steps), prices, { includeSaturated: true }).notes.some((n) => n.startsWith('Left out')),
    ).toBe(false);
  });

  it('rate-sweep points keep theirs (the rate section marks them on the curve)', () => {
    const rated = [
      stepResult({ variant: 'a', step_id: 'rw-r100', rate: 100, offered_tps: 100, tps: 100, saturated_clients: 1 }),
    ];

    expect(makeContext(runData(rated), prices).groups[0]!.ok).toHaveLength(1);
  });
});

describe('price-performance of a rate sweep', () => {
  it('uses the capacity (highest achieved rate without an unlimited step), not the mean over offered rates', () => {
    // Achieved tracks offered up to 2000/s and then plateaus at ~2500: the mean over the offered
    // rates would be (1000 + 2000 + 2500 + 2520) / 4 = 2005.
    const sweep = ['a', 'b'].flatMap((variant) =>
      [
        [1000, 1000],
        [2000, 2000],
        [4000, 2500],
        [8000, 2520],
      ].map(([rate, tps], i) =>
        stepResult({
          variant,
          instance_class: 'db.r6g.large',
          step_id: `rw-r${rate}`,
          workload: 'rw',
          step_index: i,
          rate,
          offered_tps: rate,
          tps,
        }),
      ),
    );

    const f = analyzePrice(makeContext(runData(sweep), prices))!;

    expect(f.rows.find((r) => r.workload === 'rw' && r.variant === 'a')!.tps).toBe(2520);
    expect(f.sweptAtRates).toEqual(['rw']);
  });
});
