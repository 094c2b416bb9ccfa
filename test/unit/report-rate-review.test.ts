/**
 * S5's rate sweep as its author reads it: a point's status says what the knee rule says of it, and a step
 * that overloaded before its first measured interval says it measured nothing.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import type { TableBlock } from '../../core/report/model';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

type Point = readonly [number, number | null, number | null, ('ok' | 'overloaded')?];

/** One repeat of a relative-rate sweep: its unlimited step, then [multiple, achieved, p99 ms, status] points. */
function sweepRepeat(repeat: number, cap: number, at: readonly Point[], variant = 'r6g', workload = 'ins') {
  return [
    stepResult({ variant, repeat, step_id: `${workload}-t96`, workload, threads: 96, tps: cap }),
    ...at.map(([x, achieved, p99, status]) =>
      stepResult({
        variant,
        repeat,
        step_id: `${workload}-t96-c${x * 100}`,
        workload,
        threads: 96,
        rate: 1,
        offered_tps: cap * x,
        tps: achieved,
        lat_pct_ms: p99,
        // The slowest transaction past the p99 (the fixture's default max, 30 ms, would cap it).
        lat_max_ms: p99 !== null ? p99 * 2 : null,
        status: status ?? 'ok',
      }),
    ),
  ];
}

const tableOf = (s: ReturnType<typeof rateSection>, title: string): TableBlock =>
  [...s.tables, ...(s.answer?.tables ?? [])].find((t) => t.title === title)!;

describe("S5's Points table", () => {
  it('calls a step that ran to its end but fell behind or passed the p99 limit saturated, not "ok"', () => {
    // Arrange: 0.5x keeps up (p99 4 ms); 0.9x achieves 100% with p99 60 ms (limit 12 ms); 1.5x achieves 60%.
    const steps = [1, 2].flatMap((repeat) =>
      sweepRepeat(repeat, 10000, [
        [0.5, 5000, 4],
        [0.9, 9000, 60],
        [1.5, 6000, 3000],
      ]),
    );

    // Act
    const points = tableOf(rateSection(analyzeRate(makeContext(runData(steps), prices))!), 'Points');

    // Assert
    const status = (x: string) => points.rows.filter((r) => r[3]!.includes(`(${x})`)).map((r) => r[7]);
    expect(status('0.5x')).toEqual(['ok', 'ok']);
    expect(status('0.9x')).toEqual(['saturated (p99 past limit)', 'saturated (p99 past limit)']);
    expect(status('1.5x')).toEqual(['saturated (fell behind)', 'saturated (fell behind)']);
    expect(points.notes!.join(' ')).toMatch(/Saturated: the step ran to its end .* did not keep up by the knee rule/);
  });

  it('says an overloaded step that stopped before its first measured interval measured nothing', () => {
    // Arrange: 6x overloaded within the warm-up: no achieved rate, no p99.
    const steps = sweepRepeat(1, 10000, [
      [0.5, 5000, 4],
      [6, null, null, 'overloaded'],
    ]);

    // Act
    const points = tableOf(rateSection(analyzeRate(makeContext(runData(steps), prices))!), 'Points');

    // Assert
    const row = points.rows.find((r) => r[3]!.includes('(6x)'))!;
    expect(row.slice(4)).toEqual(['-', '-', '-', 'overloaded in warm-up (not measured)']);
    expect(points.notes!.join(' ')).toMatch(/Overloaded in warm-up: the queue filled before the first measured/);
  });
});

describe("S5's Answer on the grid and the repeats", () => {
  // Two sweeps: ins overloads at 1.5x and skips 6x; upd runs all four rates. Both keep up only at 0.5x.
  const steps = [1, 2].flatMap((repeat) => [
    ...sweepRepeat(repeat, 10000 + repeat * 100, [
      [0.5, 5000 + repeat * 50, 4],
      [0.9, 6000, 9],
      [1.5, 6500, 900, 'overloaded'],
      [6, null, null],
    ]).map((r) => (r.step_id.endsWith('c600') ? { ...r, status: 'skipped' } : r)),
    ...sweepRepeat(
      repeat,
      8000 + repeat * 100,
      [
        [0.5, 4000 + repeat * 50, 4],
        [0.9, 5000, 9],
        [1.5, 5200, 3000],
        [6, 5000, 2000, 'overloaded'],
      ],
      'r6g',
      'upd',
    ),
  ]);

  it('names the rates each sweep really ran and how far apart the bracket ends are', () => {
    // Act
    const answer = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.lines.join('\n');

    // Assert: ins ran 3 rates (6x skipped), upd 4; 0.5x to 0.9x is 80% apart, not "more than 20%".
    expect(answer).toContain(
      "A sweep of 3 to 4 rates (ins 0.5x, 0.9x, 1.5x; upd 0.5x, 0.9x, 1.5x, 6x each repeat's " + 'unlimited-rate TPS)',
    );
    expect(answer).toMatch(/each lies between two offered rates 80% apart; add rates between them\./);
    expect(answer).not.toMatch(/more than 20% apart/);
  });

  it('names the two criteria behind "resolves" and gives the low-load efficiency the knee rule used', () => {
    // Act
    const section = rateSection(analyzeRate(makeContext(runData(steps), prices))!);

    // Assert
    const knee = tableOf(section, 'Knee, unlimited-rate TPS and saturation per repeat');
    expect(knee.notes!.join(' ')).toMatch(
      /efficiency at low load \(achieved\/offered at its repeats' lowest rate, .*; here 100%\)/,
    );
    const capacity = section.answer!.tables[0]!;
    expect(capacity.notes!.join(' ')).toMatch(/80% power\): a different criterion/);
  });
});

describe("S5's p99 at matched rates", () => {
  it('compares p99 at each rate every variant kept up with, and says how far apart identical servers lie', () => {
    // Arrange: at 0.5x r5's repeats draw p99 10 and 12 ms, r6g's 10 and 25 ms (2.5x apart); at 0.9x r5 falls
    // behind (its p99 is queue time), so 0.9x is not compared.
    const curve = (p99: number, behind: boolean) =>
      [
        [0.5, 5000, p99],
        [0.9, behind ? 6000 : 9000, 40],
        [1.5, 9500, 900, 'overloaded'],
      ] as const;
    const steps = [
      ...sweepRepeat(1, 10000, curve(10, true), 'r5'),
      ...sweepRepeat(2, 10000, curve(12, true), 'r5'),
      ...sweepRepeat(1, 10000, curve(10, false)),
      ...sweepRepeat(2, 10000, curve(25, false)),
    ];

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const section = rateSection(f);
    const answer = section.answer!.lines.join('\n');

    // Assert: the same multiple, each p99 with the rate it was offered; the ratio is of geometric means,
    // sqrt(10 x 25) / sqrt(10 x 12) = 144.3% (the arithmetic means' 17.5 / 11 would read 159.1%).
    const table = tableOf(
      section,
      "p99 below the knee at the same multiple of each repeat's unlimited-rate TPS (ms at the rate offered; " +
        'each repeat that kept up) and its ratio',
    );
    expect(table.head[1]).toBe('multiple');
    expect(table.rows).toEqual([
      [
        'ins (96 threads)',
        '0.5x',
        '10.0 at 5,000/s, 12.0 at 5,000/s',
        '10.0 at 5,000/s, 25.0 at 5,000/s',
        expect.stringMatching(/^144\.3% \(.*\), within noise$/),
      ],
    ]);
    expect(answer).toContain(
      "the p99 of one variant's repeats at the same multiple lie up to 2.50x apart (ins r6g at 0.5x: " +
        '10.0 ms at 5,000/s and 25.0 ms at 5,000/s)',
    );
    expect(answer).toMatch(/no r6g\/r5 p99 ratio \(of geometric means\) is told from 100%/);
    expect(answer).toContain('Below the knee (every repeat kept up), the p99 of');
    expect(table.notes!.join(' ')).toMatch(/Ratio: of the geometric means of the repeats' p99s/);
    // The knee's base is said once a sentence, not again for each later variant.
    const later =
      /; r6g between [\d,]+ and [\d,]+\/s offered \(0\.5x and 0\.9x, the union of both repeats' brackets\)\./;
    expect(answer).toMatch(later);
    expect(answer).toMatch(/each repeat's own unlimited-rate TPS, the union of both repeats' brackets\); r6g between/);
  });
  it('compares no p99 past the knee: a rate held on throughput whose p99 passed the limit is queue time', () => {
    // Arrange: both variants achieve 100% at 0.9x, but with p99 60-300 ms against a limit of 3 x 4 = 12 ms;
    // r5 offered 9,000/s there and r6g 9,900/s (different rates at one multiple, deep in the queue).
    const curve = (p99: number) =>
      [
        [0.5, 5000, 4],
        [0.9, 9000, p99],
        [1.5, 9500, 900, 'overloaded'],
      ] as const;
    const steps = [
      ...sweepRepeat(1, 10000, curve(60), 'r5'),
      ...sweepRepeat(2, 10000, curve(70), 'r5'),
      ...sweepRepeat(
        1,
        11000,
        curve(250).map(([x, a, l, st]) => [x, a * 1.1, l, st] as const),
      ),
      ...sweepRepeat(
        2,
        11000,
        curve(300).map(([x, a, l, st]) => [x, a * 1.1, l, st] as const),
      ),
    ];

    // Act
    const section = rateSection(analyzeRate(makeContext(runData(steps), prices))!);

    // Assert: only 0.5x, below every repeat's knee, is compared; the note says why 0.9x is not.
    const table = section.answer!.tables[1]!;
    expect(table.rows.map((r) => r[1])).toEqual(['0.5x']);
    expect(table.notes!.join(' ')).toMatch(/Past its knee a repeat's p99 is queue time.*not compared/);
    expect(section.answer!.lines.join('\n')).not.toMatch(/57\.|at 0\.9x/);
  });
});

describe("S5's p99 limit", () => {
  const withProbeP99 = (steps: ReturnType<typeof sweepRepeat>, p99: number) =>
    steps.map((r) => (r.step_id === 'ins-t96' ? { ...r, lat_pct_ms: p99 } : r));
  const curve = (low: number) =>
    [
      [0.5, 5000, low],
      [0.9, 9000, 300],
      [1.5, 9500, 900, 'overloaded'],
    ] as const;

  it('says when it rests on a low-load p99 above the unlimited-rate p99, and which limits give the same knees', () => {
    // Arrange: p99 5 ms with no rate set, 30 and 40 ms at half that load (a stall) with p50 0.5 and 0.6 ms:
    // limit 3 x 35 = 105 ms.
    const p50At = (steps: ReturnType<typeof sweepRepeat>, p50: number) =>
      steps.map((r) => (r.step_id === 'ins-t96-c50' ? { ...r, lat_p50_ms: p50 } : r));
    const steps = [
      ...p50At(withProbeP99(sweepRepeat(1, 10000, curve(30)), 5), 0.5),
      ...p50At(withProbeP99(sweepRepeat(2, 10000, curve(40)), 5), 0.6),
    ];

    // Act
    const answer = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.lines.join('\n');

    // Assert
    expect(answer).toContain(
      'Its p99 limit (105.0 ms) rests on low-load p99s (30.0–40.0 ms) above the unlimited-rate ' +
        'p99 (median 5.0 ms) in 2 of 2 repeats: cause not measured; not sustained overload (p50 0.5–0.6 ms); ' +
        'any limit from 40.0 ms up to, not including, 300.0 ms gives the same knees.',
    );
    expect(answer).not.toMatch(/not a queue/);
    expect(answer).not.toMatch(/a stall in a short step/);
  });

  it('counts the repeats whose low-load p99 is above the unlimited-rate p99; one of two is not systematic', () => {
    // Arrange: p99 5 ms with no rate set; 3 and 40 ms at half that load: only repeat 2 is above it.
    const steps = [
      ...withProbeP99(sweepRepeat(1, 10000, curve(3)), 5),
      ...withProbeP99(sweepRepeat(2, 10000, curve(40)), 5),
    ];

    // Act
    const answer = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.lines.join('\n');

    // Assert
    expect(answer).toContain('above the unlimited-rate p99 (median 5.0 ms) in 1 of 2 repeats: cause not measured');
    expect(answer).not.toMatch(/systematic|not a queue/);
  });

  it('says nothing of a stall when the low-load p99 is below the unlimited-rate p99', () => {
    // Arrange
    const steps = [
      ...withProbeP99(sweepRepeat(1, 10000, curve(3)), 20),
      ...withProbeP99(sweepRepeat(2, 10000, curve(4)), 20),
    ];

    // Act
    const answer = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.lines.join('\n');

    // Assert
    expect(answer).not.toMatch(/stall|rests on low-load/);
  });
});

describe("S5's charts", () => {
  it('draw the p99 limit on the p99 chart and an overloaded p99 as a lower bound, and say what the circle is', () => {
    // Arrange: limit max(3 x 4, 10) = 12 ms; 1.5x overloads (its p99 cut short).
    const steps = [1, 2].flatMap((repeat) =>
      sweepRepeat(repeat, 10000, [
        [0.5, 5000, 4],
        [0.9, 9000, 40],
        [1.5, 7000, 900, 'overloaded'],
      ]),
    );

    // Act
    const charts = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.charts;

    // Assert
    type Series = { name: string; symbol?: string; markLine?: { data: { yAxis: number }[] } };
    const latency = charts.find((c) => c.id === 'rate-latency-0')!;
    const series = (latency.option as { series: Series[] }).series;
    expect(series.flatMap((s) => s.markLine?.data.map((d) => d.yAxis) ?? [])).toEqual([12]);
    const overloaded = series.find((s) => s.name.includes('overloaded'))!;
    expect([overloaded.name, overloaded.symbol]).toEqual([expect.stringMatching(/a lower bound/), 'arrow']);
    const achieved = (charts.find((c) => c.id === 'rate-achieved-0')!.option as { series: Series[] }).series;
    expect(achieved.map((s) => s.name)).toContain('r6g: last rate kept up with (the knee lies past it)');
    expect(achieved.map((s) => s.name)).not.toContain('r6g: knee');
  });
});

describe("S5's chart notes", () => {
  it('say on each chart which overloaded steps lie past its axis, and only where some do', () => {
    // Arrange: ins overloads at 1.5x (on the axis) and skips 6x; upd overloads at 6x, far past the axis.
    const steps = [1, 2].flatMap((repeat) => [
      ...sweepRepeat(repeat, 10000, [
        [0.5, 5000, 4],
        [0.9, 9000, 40],
        [1.5, 7000, 900, 'overloaded'],
        [6, null, null],
      ]).map((r) => (r.step_id.endsWith('c600') ? { ...r, status: 'skipped' } : r)),
      ...sweepRepeat(
        repeat,
        8000,
        [
          [0.5, 4000, 4],
          [0.9, 7200, 40],
          [1.5, 7000, 3000],
          [6, 6500 + repeat * 100, 2000, 'overloaded'],
        ],
        'r6g',
        'upd',
      ),
    ]);

    // Act
    const charts = rateSection(analyzeRate(makeContext(runData(steps), prices))!).answer!.charts;

    // Assert
    type Option = { title?: { subtext?: string }; legend: { data: string[] } };
    const opt = (id: string) => charts.find((c) => c.id === id)!.option as Option;
    expect(opt('rate-achieved-0').title?.subtext).toBeUndefined();
    expect(opt('rate-achieved-0').legend.data).toContain('r6g: overloaded (at achieved)');
    const note = 'Not drawn: 2 overloaded steps offered past the axis (6x, 48,000/s offered, 6,600–6,700/s achieved)';
    expect(opt('rate-achieved-1').title?.subtext).toMatch(new RegExp(`^${note.replace(/[()]/g, '\\$&')}`));
    expect(opt('rate-latency-1').title?.subtext).toMatch(/^Not drawn: 2 overloaded steps/);
    expect(charts.flatMap((c) => (c.option as Option).legend.data).join(' ')).not.toMatch(/past the axis/);
  });
});

describe("S5's rate section on what a transaction is", () => {
  it('says when the sweeps count different statements as one transaction, and that the threads were not swept', () => {
    // Arrange: ins runs one write a transaction; rmw one read, one write, BEGIN and COMMIT.
    const counts = (workload: string) =>
      workload === 'rmw'
        ? { events: 100, reads: 100, writes: 100, other: 200 }
        : { events: 100, reads: 0, writes: 100, other: 0 };
    const steps = ['ins', 'rmw'].flatMap((w) =>
      [1, 2].flatMap((repeat) =>
        sweepRepeat(
          repeat,
          10000,
          [
            [0.5, 5000, 4],
            [0.9, 6000, 9],
          ],
          'r6g',
          w,
        ).map((r) => (r.rate === 0 ? { ...r, ...counts(w), client_cpu_max_pct: 37.5 } : r)),
      ),
    );

    // Act
    const findings = rateSection(analyzeRate(makeContext(runData(steps), prices))!).findings.join('\n');

    // Assert
    expect(findings).toContain(
      'Statements a transaction at the unlimited rate: ins 1.0 write; rmw 1.0 read, 1.0 write, ' +
        '2.0 other (sysbench counts BEGIN and COMMIT as other)',
    );
    expect(findings).toContain(
      "96 client threads, the spec's: this run does not sweep them. No sysbench client saturated " +
        'its CPU (at most 40.0% of its cores).',
    );
  });
});

describe("S5's Points p99", () => {
  it('is never above the step’s exact max: a percentile past it shows the max, marked ≤', () => {
    // Arrange: at 0.9x sysbench's p99 bucket reads 60 ms, the slowest transaction took 45 ms.
    const steps = sweepRepeat(1, 10000, [
      [0.5, 5000, 4],
      [0.9, 9000, 60],
    ]).map((r) => (r.step_id.endsWith('c90') ? { ...r, lat_max_ms: 45 } : r));

    // Act
    const points = tableOf(rateSection(analyzeRate(makeContext(runData(steps), prices))!), 'Points');

    // Assert
    expect(points.rows.find((r) => r[3]!.includes('(0.9x)'))![6]).toBe('≤ 45.0');
    expect(points.notes!.join(' ')).toMatch(/≤: sysbench's p99 .* reached past the step's exact slowest transaction/);
  });
});
