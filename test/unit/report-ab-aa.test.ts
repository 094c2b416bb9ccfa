/**
 * S1's A/B Answer on a planted local A/A run (every server the same MariaDB): no repeats-to-resolve
 * figure from an observed size that is noise, the class column marked emulated, and the engine the
 * AWS run would use said in the Answer, not only in the Appendix.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import { pooledNoise, repeatsForGap } from '../../core/report/studies/ab';
import type { Report } from '../../core/report/model';
import type { NoiseModel } from '../../bench/noise-model';
import { experiment, plantedRunData } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));

/** Little noise (0.5% a run): identical servers stay within it. */
const quiet: NoiseModel = {
  runs: { sigma: 0.005, phi: 0, df: 100 },
  intervals: { sigma: 0.005, phi: 0, df: 100 },
  levels: {},
};

const report = (runId: string): Report =>
  buildReport(
    plantedRunData(experiment('graviton-vs-intel'), () => ({ tps: 1000, latPctMs: 40 }), {
      seed: 3,
      runId,
      scale: 'small',
      noise: quiet,
    }),
    prices,
  );

describe("S1's A/B Answer on a local A/A run", () => {
  it('gives no repeats a side to resolve a difference between one server and itself', () => {
    // Act
    const r = report('aa-resolve');
    // Assert: the per-AZ lines and the ratio table.
    const azLines = (r.answer?.lines ?? []).filter((l) => /^AZ [ab], /.test(l));
    expect(azLines).toHaveLength(2);
    for (const l of azLines) {
      expect(l).not.toMatch(/would take|a side|cannot resolve/);
      // "as expected of one server twice", or where chance put one beyond the noise, that it is this machine's.
      expect(l).toMatch(/as expected of one server twice|one server twice here, so what is beyond the noise is this/);
    }
    const ratios = r.answer!.tables.find((t) => t.title.startsWith('Per AZ: each variant over the baseline'))!;
    expect(ratios.head.some((h) => /to resolve/.test(h))).toBe(false);
    expect(ratios.notes!.join(' ')).toContain('No repeats-to-resolve column: locally both sides of each pair');
  });

  it('marks the class column emulated in every local table', () => {
    // Act
    const r = report('aa-class');
    // Assert
    const tables = [...r.answer!.tables, ...r.sections.find((s) => s.id === 'ab')!.tables];
    const withClass = tables.filter((t) => t.head.some((h) => h.startsWith('class')));
    expect(withClass.length).toBeGreaterThanOrEqual(3);
    for (const t of withClass) expect(t.head).toContain('class (emulated)');
  });

  it("says the interleaved rotation's order bias once for every pair, not as one AZ's", () => {
    // Act: 4 cells a round, rotated: each r6g runs right after its r5 in most rounds.
    const text = (report('aa-order').answer?.lines ?? []).join('\n');
    // Assert
    expect(text).toContain('Order: the interleaved rotation only shifts who goes first');
    expect(text).toMatch(/here r6g-a right after r5-a in \d of \d rounds, r6g-b right after r5-b in \d of \d rounds/);
    expect(text).toContain('a rotation of 4 cells does so in 3 of every 4');
    expect(text.match(/Order: /g)).toHaveLength(1);
    expect(text).not.toContain('fell on r6g-b each time');
    // Each repeat's server is fresh: what carries over is the host's state, not a warm cache of the server.
    expect(text).toContain('the OS page cache, CPU and disk state, which a fresh server does not reset');
    expect(text).not.toContain('warm caches');
    // It covers both AZs' pairs: with the other things besides the classes, not inside AZ b's line.
    const lines = report('aa-order').answer?.lines ?? [];
    expect(lines.filter((l) => /^AZ [ab], /.test(l)).some((l) => l.includes('Order: '))).toBe(false);
    expect(lines.find((l) => l.includes('Order: '))).toMatch(/^Besides the classes: /);
  });

  it("gives one planning figure from the machine's pooled noise, not one per step", () => {
    // Arrange: two steps of 3 repeats, each with a CV of exactly 4% (sd 40 on a mean of 1000).
    const samples = [
      { mean: 1000, sd: 40, n: 3 },
      { mean: 2000, sd: 80, n: 3 },
    ];
    // Act
    const p = pooledNoise(samples, 3)!;
    // Assert: (t(0.975, 4) + t(0.8, 4)) * 0.04 * sqrt(2/3) = (2.776 + 0.941) * 0.0327 on the log scale.
    expect(p.cv).toBeCloseTo(0.04, 10);
    expect(p.steps).toBe(2);
    expect(p.resolves).toBeCloseTo(Math.exp((2.7764 + 0.941) * 0.04 * Math.sqrt(2 / 3)) - 1, 3);
    // The run as --scale small stores it: the design's 2-3 rounds cut to 2-2 in the plan's repeats note.
    const planted = plantedRunData(experiment('graviton-vs-intel'), () => ({ tps: 1000, latPctMs: 40 }), {
      seed: 3,
      runId: 'aa-pooled',
      scale: 'small',
      noise: quiet,
    });
    const cut = { path: 'repeats', message: 'scaled for a local rehearsal: 2-3 rounds -> 2-2 rounds' };
    const notes = [...(JSON.parse(planted.run.notes || '[]') as unknown[]), cut];
    const lead =
      buildReport({ ...planted, run: { ...planted.run, notes: JSON.stringify(notes) } }, prices).answer?.lines[0] ?? '';
    expect(lead).toMatch(
      /This machine's run-to-run QPS noise \(not AWS's\), pooled over 12 variant steps: CV [\d.]+%; the design /,
    );
    // The design's rounds, one statement of them (repeats 2 to 3), and what they cannot tell apart.
    expect(lead).toMatch(/the design runs 2 to 3 rounds, and at that noise 2 repeats a side resolve about \d+%, 3 /);
    // At this quiet planted noise (CV under 1%) 3 repeats do resolve 5%: no "not a 5% gap".
    expect(lead).toContain('it tells a gap that size or larger from none.');
    expect(lead).not.toContain('would resolve');
  });

  it('says plainly that a gap under what the most rounds resolve cannot be told from none, and what 5% takes', () => {
    // Arrange: every step's two repeats 8% apart (a CV of about 5.7%), the design's 2-3 rounds.
    const planted = plantedRunData(experiment('graviton-vs-intel'), () => ({ tps: 1000, latPctMs: 40 }), {
      seed: 3,
      runId: 'aa-gap',
      scale: 'small',
      noise: quiet,
    });
    const steps = planted.steps.map((s) => {
      const k = s.repeat === 1 ? 0.96 : 1.04;
      return { ...s, tps: 1000 * k, qps: s.qps === null ? null : 10_000 * k };
    });
    const cut = { path: 'repeats', message: 'scaled for a local rehearsal: 2-3 rounds -> 2 rounds' };
    const notes = [...(JSON.parse(planted.run.notes || '[]') as unknown[]), cut];
    // Act
    const lead =
      buildReport({ ...planted, steps, run: { ...planted.run, notes: JSON.stringify(notes) } }, prices).answer
        ?.lines[0] ?? '';
    // Assert: the CV is sd/mean of (0.96, 1.04): 0.08 / sqrt(2) = 5.66%; 5% at that CV takes this many repeats.
    const five = repeatsForGap(0.08 / Math.SQRT2, 0.05)!;
    expect(five).toBeGreaterThan(3);
    expect(lead).toContain(
      `a smaller gap, such as 5%, it cannot tell from none (that takes about ${five} repeats a side at this noise).`,
    );
    expect(lead).not.toContain('not a 5% gap');
  });

  it('finds the fewest repeats a side that resolve a gap at a CV', () => {
    // Act / Assert: at 4% a side of 3 resolves about 15.3% (the test above), not 5%; at 0 noise 2 suffice.
    expect(repeatsForGap(0, 0.05)).toBe(2);
    const n = repeatsForGap(0.04, 0.05)!;
    const at = (k: number) => pooledNoise([{ mean: 1000, sd: 40, n: 3 }], k)!.resolves;
    expect(at(n)).toBeLessThanOrEqual(0.05);
    expect(at(n - 1)).toBeGreaterThan(0.05);
    expect(repeatsForGap(0.5, 0.01)).toBeNull();
  });

  it('says in the Answer which engine the AWS run uses, where it is not the study’s', () => {
    // Act
    const first = report('aa-engine').answer?.lines[0] ?? '';
    // Assert
    expect(first).toContain(
      "On AWS the engine is Aurora MySQL 3.10.4 (MySQL 8.0.42 compatible), not the study's Aurora MySQL 2.10.0 " +
        '(MySQL 5.7 compatible): the AWS run answers the question on that engine',
    );
  });
});

describe("S1's per-AZ table flags an interval two agreeing repeats made narrow", () => {
  it('marks the one step whose repeats agreed, against the pooled noise of the others', () => {
    // Arrange: every step's two repeats 10% apart (CV about 7%), but r5-b write-only's agree to 0.1%.
    const planted = plantedRunData(experiment('graviton-vs-intel'), () => ({ tps: 1000, latPctMs: 40 }), {
      seed: 3,
      runId: 'aa-lucky',
      scale: 'small',
      noise: quiet,
    });
    const lucky = (s: (typeof planted.steps)[number]) => s.variant === 'r5-b' && s.workload === 'write-only';
    const steps = planted.steps.map((s) => {
      const k = lucky(s) ? (s.repeat === 1 ? 0.9995 : 1.0005) : s.repeat === 1 ? 0.95 : 1.05;
      return { ...s, tps: 1000 * k, qps: s.qps === null ? null : 10_000 * k };
    });
    // Act
    const table = buildReport({ ...planted, steps }, prices)
      .answer!.tables.concat(buildReport({ ...planted, steps }, prices).sections.flatMap((s) => s.tables))
      .find((t) => t.title.startsWith('Per AZ: QPS, TPS'))!;
    // Assert
    const marked = table.rows.filter((r) => r[4]!.endsWith(' ‡')).map((r) => `${r[2]} ${r[1]}`);
    expect(marked).toEqual(['r5-b write-only t64']);
    // Two decimals: the planted 0.001 / sqrt(2) = 0.07%, not a one-decimal 0.1%.
    expect(table.notes!.join('\n')).toMatch(/‡: 2 repeats that happened to agree \(QPS run CV 0\.07% against this /);
  });
});
