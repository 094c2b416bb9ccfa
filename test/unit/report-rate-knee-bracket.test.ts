/**
 * S5's knee is a bracket between two offered rates, never the lowest rate offered printed as a measured point;
 * one rule for every repeat of a variant; repeats that disagree are shown each, never merged into one bracket.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

/** One repeat of a relative-rate sweep: its unlimited step, then [multiple, achieved, p99 ms, status] points. */
function sweepRepeat(
  repeat: number,
  cap: number,
  at: readonly (readonly [number, number, number, ('ok' | 'overloaded')?])[],
  variant = 'r6g',
) {
  return [
    stepResult({ variant, repeat, step_id: 'ins-t96', workload: 'ins', threads: 96, tps: cap }),
    ...at.map(([x, achieved, p99, status]) =>
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
        status: status ?? 'ok',
      }),
    ),
  ];
}

describe("S5's knee", () => {
  it('is "between 0.5x and 0.9x" of capacity when only the lowest rate kept up; the grid cannot place it', () => {
    // Arrange: two repeats, each probed at its own capacity; 0.5x keeps up, 0.9x falls behind, 1.5x overloads.
    const steps = [1, 2].flatMap((repeat) => {
      const cap = repeat === 1 ? 8600 : 9000;
      const at = (x: number, achieved: number, status: 'ok' | 'overloaded' = 'ok') =>
        stepResult({
          variant: 'r6g',
          repeat,
          step_id: `ins-t96-c${x * 100}`,
          workload: 'ins',
          threads: 96,
          rate: 1,
          offered_tps: cap * x,
          tps: achieved,
          lat_pct_ms: 5,
          status,
        });
      return [
        stepResult({ variant: 'r6g', repeat, step_id: 'ins-t96', workload: 'ins', threads: 96, tps: cap }),
        at(0.5, cap * 0.5),
        at(0.9, cap * 0.7),
        at(1.5, cap * 0.9, 'overloaded'),
      ];
    });

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const answer = rateSection(f).answer!.lines.join('\n');

    // Assert
    // Over the repeats: the lowest rate one kept up with and the highest one did not keep up with (lower < upper).
    expect(answer).toMatch(
      /Knee: r6g between 4,300 and 8,100\/s offered \(0\.5x and 0\.9x each repeat's own unlimited-rate TPS, the union /,
    );
    expect(answer).toMatch(/A sweep of 3 rates .* cannot place a knee closer than the brackets above: .* add rates/);
    expect(answer).not.toMatch(/cannot place a knee:/);
    expect(answer).not.toMatch(/knee \(highest offered rate kept up with\) r6g 4,300–4,500\/s/);
  });

  it("judges every repeat against one p99 limit: one curve, one verdict, whatever its lowest rate's noise", () => {
    // Arrange: the same curve in both repeats (p99 15 ms at 0.9x, achieved on target), except the p99 at 0.5x:
    // 3 ms in repeat 1, 9 ms in repeat 2. Against its own lowest rate repeat 1's limit was 10 ms, repeat 2's 27.
    const curve = (p0: number) =>
      [
        [0.5, 5000, p0],
        [0.9, 9000, 15],
        [1.5, 9500, 900, 'overloaded'],
      ] as const;
    const steps = [...sweepRepeat(1, 10000, curve(3)), ...sweepRepeat(2, 10000, curve(9))];

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const section = rateSection(f);
    const answer = section.answer!.lines.join('\n');

    // Assert: one limit, 3x the median of 3 and 9 ms; both repeats kept up at 0.9x, and the Answer says one bracket.
    const v = f.sweeps[0]!.variants[0]!;
    expect(v.latencyLimitMs).toBe(18);
    expect(v.repeats.map((r) => [r.kneeOffered, r.saturatedAtOffered, r.reason])).toEqual([
      [9000, 15000, 'overloaded'],
      [9000, 15000, 'overloaded'],
    ]);
    expect(answer).toMatch(
      /Knee: r6g between 9,000 and 15,000\/s offered \(0\.9x and 1\.5x .*the union of both repeats' brackets\)/,
    );
    expect(answer).not.toMatch(/disagree/);
    const kneeTable = section.tables.find((t) => t.title.startsWith('Knee'))!;
    expect(kneeTable.rows.map((r) => r[5])).toEqual(['18.0', '18.0']);
  });

  it('says the repeats disagree and shows each bracket, instead of one bracket spanning both', () => {
    // Arrange: repeat 1 keeps up at 0.9x of its capacity, repeat 2 falls behind there.
    const steps = [
      ...sweepRepeat(1, 10000, [
        [0.5, 5000, 5],
        [0.9, 9000, 6],
        [1.5, 9500, 900, 'overloaded'],
      ]),
      ...sweepRepeat(2, 10000, [
        [0.5, 5000, 5],
        [0.9, 7000, 6],
        [1.5, 9000, 900, 'overloaded'],
      ]),
    ];

    // Act
    const section = rateSection(analyzeRate(makeContext(runData(steps), prices))!);
    const answer = section.answer!.lines.join('\n');
    const knee = section.answer!.tables[0]!.rows[0]![4]!;

    // Assert
    expect(answer).toContain(
      "Knee: r6g, its 2 repeats disagree (run-to-run noise; each repeat's knee is in the capacity table).",
    );
    expect(answer).not.toMatch(/more repeats would tell/);
    expect(answer).not.toMatch(/between 5,000 and 15,000/);
    expect(knee).toBe(
      'repeats disagree: repeat 1 between 9,000 and 15,000/s offered (0.9x and 1.5x), ' +
        'repeat 2 between 5,000 and 9,000/s offered (0.5x and 0.9x)',
    );
  });

  it("shows each repeat's unlimited-rate TPS, the base of its rates, apart from its saturation", () => {
    // Arrange: repeat 1's unlimited step achieves 10,000/s, its 1.5x step 10,400/s (its capacity).
    const steps = [
      ...sweepRepeat(1, 10000, [
        [0.5, 5000, 5],
        [1.5, 10400, 900, 'overloaded'],
      ]),
      ...sweepRepeat(2, 8000, [
        [0.5, 4000, 5],
        [1.5, 7900, 900, 'overloaded'],
      ]),
    ];

    // Act
    const table = rateSection(analyzeRate(makeContext(runData(steps), prices))!).tables.find((t) =>
      t.title.startsWith('Knee'),
    )!;

    // Assert
    const col = (name: string) => table.head.indexOf(name);
    expect(table.rows.map((r) => [r[col('unlimited-rate TPS')], r[col('saturation/s')]])).toEqual([
      ['10,000', '10,400 (at 1.5x)'],
      ['8,000', '7,900 (at 1.5x)'],
    ]);
    expect(table.notes!.join(' ')).toMatch(/its rates \(0\.5x \.\.\.\) are multiples of it/);
  });

  it('shows a capacity interval that falls below 0 as reaching 0, and says what 2 repeats can resolve', () => {
    // Arrange: r6g's two repeats reach 10,000 and 2,000/s (their interval falls far below 0); r5's 6,000 and 6,200.
    const curve = (cap: number) =>
      [
        [0.5, cap * 0.5, 5],
        [0.9, cap * 0.9, 6],
        [1.5, cap * 0.95, 900, 'overloaded'],
      ] as const;
    const steps = [
      ...sweepRepeat(1, 6000, curve(6000), 'r5'),
      ...sweepRepeat(2, 6200, curve(6200), 'r5'),
      ...sweepRepeat(1, 10000, curve(10000)),
      ...sweepRepeat(2, 2000, curve(2000)),
    ];

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const section = rateSection(f);
    const answer = section.answer!.lines.join('\n');
    const rows = section.answer!.tables[0]!.rows;

    // Assert: no "(0–…)" that reads like a measured low end; the resolution is said, with the repeats it needs.
    expect(rows.find((r) => r[1] === 'r6g')![3]).toMatch(/^5,700 \(reaches 0; up to [\d,]+\)$/);
    expect(rows.find((r) => r[1] === 'r5')![3]).toMatch(/^5,795 \([\d,]+–[\d,]+\)$/);
    const ratio = f.sweeps[0]!.capacityRatios[0]!;
    expect(ratio.resolves).toBeGreaterThan(2);
    expect(ratio.repeatsFor).toBeGreaterThan(2);
    expect(rows.find((r) => r[1] === 'r6g/r5')![4]).toMatch(
      new RegExp(
        `^resolves only past >10x either way \\(95% interval, 2 repeats\\); 10% at 80% power: ~${ratio.repeatsFor} ` +
          `repeats$`,
      ),
    );
    expect(answer).toMatch(
      new RegExp(
        `With 2 repeats a variant, the smallest capacity ratio the 95% intervals tell from 1\\.0 is >10x \\(ins\\) ` +
          `either way; finding a 10% difference 4 times in 5 \\(80% power\\) takes about ${ratio.repeatsFor} ` +
          `\\(ins\\) repeats a variant, counts estimated from 2 repeats' spread and themselves very uncertain\\.`,
      ),
    );
  });

  it('leaves out the client column when no client saturated', () => {
    // Arrange: no step has a saturated client.
    const steps = [1, 2].flatMap((repeat) =>
      sweepRepeat(repeat, 10000, [
        [0.5, 5000, 5],
        [0.9, 9000, 6],
      ]),
    );

    // Act
    const section = rateSection(analyzeRate(makeContext(runData(steps), prices))!);

    // Assert
    const kneeTable = section.tables.find((t) => t.title.startsWith('Knee'))!;
    expect(kneeTable.head).not.toContain('client saturated at');
    expect(kneeTable.rows.every((r) => r.length === kneeTable.head.length)).toBe(true);
  });
});
