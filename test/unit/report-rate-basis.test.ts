/**
 * S5's Answer names the system the experiment runs even on AWS against the study it adapts, and gives the
 * per-money result with its noise, rounded, on the price list it rests on.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import { runData, stepResult } from '../helpers/step-results';

const repoRoot = resolve(__dirname, '../..');
const prices = loadPrices(repoRoot);

/** One repeat: unlimited step at `cap`; 0.5x keeps up, 0.9x levels off at `plateau`. */
function repeatOf(variant: string, instanceClass: string, repeat: number, cap: number, plateau: number) {
  const base = { variant, repeat, instance_class: instanceClass, workload: 'insert', threads: 96 };
  const at = (x: number, achieved: number, p99: number) =>
    stepResult({
      ...base,
      step_id: `insert-t96-c${x * 100}`,
      rate: 1,
      offered_tps: cap * x,
      tps: achieved,
      lat_pct_ms: p99,
      lat_max_ms: p99 * 2,
    });
  return [stepResult({ ...base, step_id: 'insert-t96', tps: cap }), at(0.5, cap * 0.5, 4), at(0.9, plateau, 600)];
}

describe("S5's Answer on the experiment's basis", () => {
  // Plateaus 19,000/18,000 (r5) and 18,300/18,700 (r6g): a capacity ratio of 99.5% with a wide interval.
  const steps = [
    ...repeatOf('r5-2xl', 'db.r5.2xlarge', 1, 22000, 19000),
    ...repeatOf('r5-2xl', 'db.r5.2xlarge', 2, 21000, 18000),
    ...repeatOf('r6g-2xl', 'db.r6g.2xlarge', 1, 22000, 18300),
    ...repeatOf('r6g-2xl', 'db.r6g.2xlarge', 2, 22500, 18700),
  ];
  const spec = validateSpec(
    JSON.parse(readFileSync(join(repoRoot, 'experiments/rate-sweep.json'), 'utf8')),
    'rate-sweep.json',
  );
  const data = runData(steps, spec);
  // The plan says what each variant ran as (locally: the same server for both classes' memory and parameters).
  const plan = planRun(spec, { backend: 'local', now: new Date('2026-11-22T10:00:00Z'), runId: 'run-1' });
  const local = {
    ...data,
    plan,
    run: { ...data.run, backend: 'local' as const, server_version: '10.11.19-MariaDB' },
  };
  const ctx = makeContext(local, prices);

  it('says the experiment runs sysbench on Aurora MySQL even on AWS, not the system it adapts', () => {
    // Act
    const answer = rateSection(analyzeRate(ctx)!, ctx).answer!.lines.join('\n');

    // Assert
    expect(answer).toContain(
      "What ran: sysbench's SQL transactions (insert) on 10.11.19-MariaDB. The experiment itself runs sysbench " +
        "on Aurora MySQL 3.10.4, adapting the original study's YCSB on MongoDB: even on AWS it measures these SQL " +
        'transactions on that engine, not the original system.',
    );
    expect(answer).not.toMatch(/stand-ins for the workloads the experiment line/);
  });

  it('gives per-USD ratios rounded, with intervals, as the capacity ratio over the price ratio', () => {
    // Act
    const f = analyzeRate(ctx)!;
    const answer = rateSection(f, ctx).answer!.lines.join('\n');

    // Assert: the per-USD figure is the capacity ratio (and its interval) over 1.038 / 1.16 = 89.48%.
    const c = f.sweeps[0]!.capacityRatios[0]!.ratio;
    const usd = (x: number) => `${Math.round((x / 0.8948) * 100)}%`;
    expect(answer).toContain(
      'Per USD: priced as Aurora MySQL instances (us-east-1 on-demand list prices), r6g-2xl costs 89.48% of ' +
        `r5-2xl an hour; r6g-2xl gives insert ${usd(c.estimate!)} (${usd(c.interval!.low)}–` +
        `${usd(c.interval!.high)}) of r5-2xl's transactions per USD (the capacity table): on identical servers ` +
        'that is the price list ' +
        '(1 / 89.48% = 111.76%), nothing about the classes.',
    );
    expect(answer).not.toMatch(/\d{2},\d{3},\d{3}/);
    // The same figure beside the capacity ratio it comes from.
    const row = rateSection(f, ctx).answer!.tables[0]!.rows.find((r) => r[1] === 'r6g-2xl/r5-2xl')!;
    expect(row[3]).toContain(`; per USD ${usd(c.estimate!)} (${usd(c.interval!.low)}–${usd(c.interval!.high)})`);
  });
});
