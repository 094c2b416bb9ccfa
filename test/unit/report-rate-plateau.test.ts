/**
 * S5's saturation is where achieved levels off under offered load (the open-loop plateau), not the
 * unlimited-rate step's TPS (a closed loop that can run faster): the Answer, the per-repeat table, the
 * capacity ratio and the price section's TPS all read the same plateau.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import { analyzePrice } from '../../core/report/studies/price';
import { buildReport } from '../../core/report/report';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

/** One repeat: unlimited step at `cap`; 0.5x keeps up, 0.9x levels off at `plateau`, 1.5x a little below it. */
function repeatOf(variant: string, repeat: number, cap: number, plateau: number) {
  const at = (x: number, achieved: number, p99: number) =>
    stepResult({
      variant,
      repeat,
      step_id: `ins-t96-c${x * 100}`,
      workload: 'ins',
      threads: 96,
      rate: 1,
      offered_tps: cap * x,
      tps: achieved,
      lat_pct_ms: p99,
      lat_max_ms: p99 * 2,
    });
  return [
    stepResult({ variant, repeat, step_id: 'ins-t96', workload: 'ins', threads: 96, tps: cap }),
    at(0.5, cap * 0.5, 4),
    at(0.9, plateau, 600),
    at(1.5, plateau - 500, 3000),
  ];
}

describe("S5's saturation is the open-loop plateau", () => {
  // Unlimited-rate TPS 22,000 (r5) and 22,400 (r6g); offered rates level off at 17,000/18,000 and 17,500/18,500.
  const steps = [
    ...repeatOf('r5', 1, 22000, 17000),
    ...repeatOf('r5', 2, 22000, 18000),
    ...repeatOf('r6g', 1, 22400, 17500),
    ...repeatOf('r6g', 2, 22400, 18500),
  ];
  const ctx = makeContext(runData(steps), prices);

  it('reports the highest achieved at an offered rate as saturation and names the closed-loop TPS apart', () => {
    // Act
    const f = analyzeRate(ctx)!;
    const section = rateSection(f);
    const answer = section.answer!.lines.join('\n');

    // Assert
    const [r5, r6g] = f.sweeps[0]!.variants;
    expect(r5!.capacity.value).toBe(17500);
    expect(r6g!.capacity.value).toBe(18000);
    expect(f.sweeps[0]!.capacityRatios[0]!.ratio.estimate).toBeCloseTo(18000 / 17500, 6);
    expect(answer).toContain(
      'saturation (the highest achieved at an offered rate) r5 17,500/s (repeats 17,000, 18,000)',
    );
    expect(answer).toContain('unlimited-rate TPS (no rate set: closed loop) 22,000 and 22,400/s');
    expect(answer).not.toMatch(/capacity r5 22,000/);
    const knee = section.tables.find((t) => t.title.startsWith('Knee'))!;
    const col = knee.head.indexOf('saturation/s');
    expect(knee.rows.map((r) => r[col])).toEqual([
      '17,000 (at 0.9x)',
      '18,000 (at 0.9x)',
      '17,500 (at 0.9x)',
      '18,500 (at 0.9x)',
    ]);
  });

  it("prices each variant at the same plateau the rate sweep's Answer shows", () => {
    // Act
    const price = analyzePrice(ctx)!;

    // Assert
    const tps = price.rows.filter((r) => r.workload === 'ins').map((r) => [r.variant, r.tps]);
    expect(tps).toEqual([
      ['r5', 17500],
      ['r6g', 18000],
    ]);
  });
});

describe("S5's appendix step counts", () => {
  it('counts a step overloaded in its warm-up (nothing measured) apart from one that measured a rate', () => {
    // Arrange: 1.5x overloaded after measuring 7,800/s; 6x overloaded within its warm-up (no rate).
    const steps = [
      ...repeatOf('r5', 1, 10000, 8000),
      stepResult({
        variant: 'r5',
        repeat: 1,
        step_id: 'ins-t96-c200',
        workload: 'ins',
        threads: 96,
        rate: 1,
        offered_tps: 20000,
        tps: 7000,
        lat_pct_ms: 3000,
        status: 'overloaded',
      }),
      stepResult({
        variant: 'r5',
        repeat: 1,
        step_id: 'ins-t96-c600',
        workload: 'ins',
        threads: 96,
        rate: 1,
        offered_tps: 60000,
        tps: null,
        lat_pct_ms: null,
        status: 'overloaded',
      }),
    ];

    // Act
    const meta = new Map(buildReport(runData(steps), prices).meta);

    // Assert
    expect(meta.get('steps')).toContain(
      "1 overloaded (sysbench's queue filled; measured before it did), 1 overloaded in warm-up (not measured)",
    );
    expect(meta.get('steps')).not.toMatch(/2 overloaded/);
  });
});

describe("S5's charts and client sentence", () => {
  // Unlimited 10,000/s: 0.5x keeps up, 0.9x levels off, 1.5x (15,000/s) and 6x (60,000/s) overload.
  const overloadAt = (x: number, achieved: number) =>
    stepResult({
      variant: 'r5',
      repeat: 1,
      step_id: `ins-t96-c${x * 100}`,
      workload: 'ins',
      threads: 96,
      rate: 1,
      offered_tps: 10000 * x,
      tps: achieved,
      lat_pct_ms: 3000,
      status: 'overloaded',
      client_cpu_max_pct: 40,
    });
  const steps = [
    ...repeatOf('r5', 1, 10000, 8000).filter((r) => !r.step_id.endsWith('c150')),
    overloadAt(1.5, 7800),
    overloadAt(6, 7000),
  ];

  it('draws every point at the rate it was offered: none at the axis edge, one far past it not drawn', () => {
    // Act
    const local = { ...runData(steps), run: { ...runData(steps).run, backend: 'local' as const } };
    const ctx = makeContext(local, prices);
    const section = rateSection(analyzeRate(ctx)!, ctx);

    // Assert
    const option = section.answer!.charts[0]!.option as {
      xAxis: { max?: number };
      series: { name?: string; data?: unknown[] }[];
    };
    // The points drawn, not the ideal line's ends.
    const xs = option.series
      .filter((s) => !(s.name ?? '').startsWith('ideal'))
      .flatMap((s) => (s.data ?? []).flatMap((d) => (Array.isArray(d) && typeof d[0] === 'number' ? [d[0]] : [])));
    expect(xs).toContain(15000);
    expect(xs).not.toContain(60000);
    expect(xs).not.toContain(option.xAxis.max);
    expect(section.findings.join('\n')).toContain(
      "shared this machine's CPUs, so that does not say whether the machine was the bottleneck",
    );
  });
});

describe("S5's two resolution criteria", () => {
  it('says why 80% power can need more repeats than ran where the interval already resolves under 10%', () => {
    // Arrange: plateaus 7,540 and 7,734 (r5), 7,546 and 7,783 (r6g): the interval resolves ~1.09x, power asks 3.
    const steps = [
      ...repeatOf('r5', 1, 9000, 7540),
      ...repeatOf('r5', 2, 9000, 7734),
      ...repeatOf('r6g', 1, 9000, 7546),
      ...repeatOf('r6g', 2, 9000, 7783),
    ];

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const answer = rateSection(f).answer!.lines.join('\n');

    // Assert
    const c = f.sweeps[0]!.capacityRatios[0]!;
    expect(c.resolves!).toBeLessThan(1.1);
    expect(c.repeatsFor!).toBeGreaterThan(2);
    expect(answer).toContain(
      "(80% power asks more than this run's interval excluding 100%: more repeats than ran even where the " +
        'interval resolves under 10%).',
    );
  });
});

describe("S5's unlimited-rate TPS beside the saturation", () => {
  it('gives each repeat’s plateau as a share of its own closed loop, never "higher" from the means', () => {
    // Arrange: r5 repeat 1's plateau 7,540/s is above its unlimited 7,516/s, the means (7,359 < 7,625) are not.
    const steps = [
      ...repeatOf('r5', 1, 7516, 7540),
      ...repeatOf('r5', 2, 7734, 7177),
      ...repeatOf('r6g', 1, 12000, 9000),
      ...repeatOf('r6g', 2, 12000, 9000),
    ];

    // Act
    const answer = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.lines.join('\n');

    // Assert: 9,000 / 12,000 = 75%, 7,540 / 7,516 = 100%.
    expect(answer).toContain(
      'unlimited-rate TPS (no rate set: closed loop) 7,625 and 12,000/s; the open loop levelled off at 75% to 100% ' +
        "of its repeat's closed loop. Knee",
    );
    expect(answer).not.toMatch(/higher than where the open loop levels off|above every/);
  });
});

describe("S5's Answer on the shared machine's CPU", () => {
  it('gives the machine and server CPU where the repeats levelled off, and says what that cannot tell', () => {
    // Arrange: a local run; the server at 60% and 65%, the machine at 90% and 95% at the unlimited step
    // and at 0.9x (each repeat's plateau); 0.5x (not sampled into the sentence) at 40% and 70%.
    const steps = [...repeatOf('r5', 1, 10000, 8000), ...repeatOf('r6g', 1, 10000, 8000)];
    const metric = (cell: string, step: string, name: string, value: number) => ({
      cell_id: cell,
      step_id: step,
      role: name === 'CPUUtilization' ? 'writer' : 'client',
      instance_id: `${cell}-${name === 'CPUUtilization' ? 'writer' : 'client-1'}`,
      metric: name,
      avg_value: value,
      max_value: value,
      samples: 8,
      source: 'local',
      partial: false,
    });
    const metrics = ['r5-r1', 'r6g-r1'].flatMap((cell, i) => [
      metric(cell, 'ins-t96', 'CPUUtilization', 60 + 5 * i),
      metric(cell, 'ins-t96', 'ClientHostCPU', 90 + 5 * i),
      metric(cell, 'ins-t96-c90', 'CPUUtilization', 60),
      metric(cell, 'ins-t96-c90', 'ClientHostCPU', 90),
      metric(cell, 'ins-t96-c50', 'CPUUtilization', 40),
      metric(cell, 'ins-t96-c50', 'ClientHostCPU', 70),
    ]);
    const data = runData(steps);
    const local = { ...data, metrics, run: { ...data.run, backend: 'local' as const } };
    const ctx = makeContext(local, prices);

    // Act
    const answer = rateSection(analyzeRate(ctx)!, ctx).answer!.lines.join('\n');

    // Assert
    expect(answer).toContain(
      "At the unlimited-rate steps and where each repeat levelled off, this machine's CPUs were 90% to 95% busy " +
        'and the server used 60% to 65% of them (the rest: the sysbench client and the system): this rehearsal ' +
        'cannot tell whether the server or the shared machine set the plateau.',
    );
  });
});

describe("S5's Answer names what ran", () => {
  it('says locally that sysbench SQL stand-ins ran on the recorded server, in the Answer', () => {
    // Arrange: a local run on MariaDB.
    const steps = [...repeatOf('r5', 1, 10000, 8000), ...repeatOf('r6g', 1, 10000, 8000)];
    const data = runData(steps);
    const local = { ...data, run: { ...data.run, backend: 'local' as const, server_version: '10.11.19-MariaDB' } };
    const ctx = makeContext(local, prices);

    // Act
    const answer = rateSection(analyzeRate(ctx)!, ctx).answer!.lines.join('\n');

    // Assert
    expect(answer).toContain("What ran: sysbench's SQL transactions (ins) on 10.11.19-MariaDB.");
  });
});
