/**
 * S3's answer says only what its own figures support: ratios of the TPS printed beside them, direction
 * words that follow what the intervals cover, the read share as a threshold, and the reader lag each
 * consistency level started from.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import { makeContext } from '../../core/report/sections';
import { analyzeForwarding, forwardingSection } from '../../core/report/studies/forwarding';
import { buildReport, renderHtml, renderTerminal } from '../../core/report/report';
import type { StepResult } from '../../core/lake/results';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

const shareWorkloads = [4, 6, 16, 36].flatMap((ps) =>
  (['writer', 'reader'] as const).map((target) => ({
    name: `ps${ps}-${target}`,
    test: 'oltp_read_write',
    threads: [64],
    target,
    options: { range_selects: false, point_selects: ps },
  })),
);
const levelWorkloads = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level) => ({
  name: `c-${level}`,
  script: 'rw_consistency.lua',
  threads: [32],
  target: 'reader',
  options: { consistency: level },
}));
const spec = {
  name: 'fwd',
  variants: [],
  workloads: [
    { name: 'rw-writer', test: 'oltp_read_write', threads: [32], target: 'writer' },
    { name: 'rw-reader', test: 'oltp_read_write', threads: [32], target: 'reader' },
    ...shareWorkloads,
    ...levelWorkloads,
  ],
} as never;

const step = (workload: string, target: string, over: Partial<StepResult> = {}): StepResult =>
  stepResult({
    variant: 'wf',
    step_id: `${workload}-t${over.threads ?? 32}`,
    workload,
    target,
    ...over,
  });

type IntervalTotal = RunData['intervals'] extends ReadonlyMap<string, readonly (infer V)[]> ? V : never;

/** One run's per-interval TPS: a step that warms up, so its batch means average above its events over time. */
function warmingIntervals(tps: number, n = 40): IntervalTotal[] {
  return Array.from({ length: n }, (_, i) => ({
    cell_id: 'wf-r1',
    step_id: 's',
    t: i + 1,
    tps: tps * (i < 4 ? 0.3 : 1.08) * (1 + 0.01 * Math.sin(i)),
    qps: 0,
    lat_pct_ms: 10,
    errors_per_s: 0,
  }));
}

function analyzed(data: RunData) {
  const f = analyzeForwarding(makeContext(data, prices))!;
  const section = forwardingSection(f);
  return { f, section, answer: section.answer!.lines.join('\n') };
}

describe("S3's answer", () => {
  it('computes the reader/writer ratio from the TPS the table prints beside it', () => {
    // Arrange: one repeat each, per-interval TPS that do not average to events over total time.
    const writer = step('rw-writer', 'writer', { tps: 256, events: 256 * 60 });
    const reader = step('rw-reader', 'reader', { tps: 764, events: 764 * 60 });
    const data: RunData = {
      ...runData([writer, reader], spec),
      intervals: new Map([
        [`${writer.cell_id}/${writer.step_id}`, warmingIntervals(256)],
        [
          `${reader.cell_id}/${reader.step_id}`,
          warmingIntervals(764).map((x, i) => ({ ...x, tps: x.tps * (1 + i / 80) })),
        ],
      ]),
    };

    // Act
    const { f, section } = analyzed(data);

    // Assert
    const pair = f.pairs[0]!;
    expect(pair.ratio.estimate).toBeCloseTo(764 / 256, 10);
    expect(pair.ratio.interval!.low).toBeLessThan(764 / 256);
    expect(pair.ratio.interval!.high).toBeGreaterThan(764 / 256);
    const byThreads = section.answer!.tables.find((t) => t.title.endsWith(', TPS by threads'))!;
    expect(byThreads.rows[0]!.slice(2, 5)).toEqual([
      expect.stringMatching(/^256 /),
      expect.stringMatching(/^764 /),
      expect.stringMatching(/^298% /),
    ]);
  });

  it('never says "beyond the noise" from one run\'s intervals, and names the read share threshold or says none', () => {
    // Arrange: one repeat; the reader wins clearly at 50:50 and 80:20 and loses at 60:40 (scattered cells).
    const pairs = [
      [4, 100, 150],
      [6, 100, 70],
      [16, 100, 150],
      [36, 100, 90],
    ] as const;
    const steps = pairs.flatMap(([ps, w, r]) => [
      step(`ps${ps}-writer`, 'writer', { threads: 64, tps: w }),
      step(`ps${ps}-reader`, 'reader', { threads: 64, tps: r }),
    ]);
    const intervals = new Map(
      steps.map((s) => [`${s.cell_id}/${s.step_id}`, warmingIntervals(s.tps!).map((x) => ({ ...x, tps: s.tps! }))]),
    );
    // Flat series have no spread: give them a little so the within-run intervals exist.
    for (const [k, v] of intervals)
      intervals.set(
        k,
        v.map((x, i) => ({ ...x, tps: x.tps * (1 + 0.02 * Math.sin(i)) })),
      );

    // Act
    const { f, answer } = analyzed({ ...runData(steps, spec), intervals });

    // Assert
    expect(f.readShares[0]!.wins).toEqual([0.5, 0.8]);
    expect(f.readShares[0]!.winsFrom).toBeNull();
    expect(answer).not.toMatch(/beyond (one|this) run'?s? noise/);
    // One repeat: the within-run wins are not claimed; the Answer says the run cannot resolve the grid, and names
    // this run's scattered cells as what the grid shows, not a threshold.
    expect(answer).not.toMatch(/wins at 50:50/);
    expect(answer).toMatch(/from which the reader wins: 1 repeat cannot resolve the grid's ratios/);
    expect(answer).toMatch(/in this run the reader was higher .* at 50:50, 80:20 but not 60:40, 90:10 \(64 threads\)/);
    expect(answer).toMatch(/scattered cells, not a threshold/);
  });

  /** One repeat per share at 64 threads; per-interval TPS swing by `wobble` in slow waves batch means keep. */
  function shareRun(
    pairs: readonly (readonly [number, number, number, number?])[],
    wobble: number,
    threads = 64,
  ): RunData {
    const steps = pairs.flatMap(([ps, w, r]) => [
      step(`ps${ps}-writer`, 'writer', { threads, tps: w }),
      step(`ps${ps}-reader`, 'reader', { threads, tps: r }),
    ]);
    // A pair's own fourth figure, when given, is its wobble: a wider interval at one share than the others.
    const wobbleOf = (s: StepResult): number => pairs.find(([ps]) => s.step_id.startsWith(`ps${ps}-`))?.[3] ?? wobble;
    const intervals = new Map(
      steps.map((s) => [
        `${s.cell_id}/${s.step_id}`,
        warmingIntervals(s.tps!).map((x, i) => ({
          ...x,
          tps: s.tps! * (1 + wobbleOf(s) * (i % 8 < 4 ? -1 : 1) * (i < 20 ? 1 : 0.5)),
        })),
      ]),
    );
    return { ...runData(steps, spec), intervals };
  }

  it('calls a win at 80:20 with 90:10 as high but within the noise no threshold, with 90:10 figure', () => {
    // Arrange: one repeat at 64 threads; 80:20 112% with a narrow interval, 90:10 111% with a wide one.
    const data = shareRun(
      [
        [4, 100, 100],
        [6, 100, 101],
        [16, 100, 112],
        [36, 100, 111, 0.3],
      ],
      0.02,
    );
    // Act
    const { f, section } = analyzed(data);
    // Assert
    expect(f.readShares[0]!.wins).toEqual([0.8]);
    expect(f.readShares[0]!.consistentFrom).toBe(0.8);
    const line = section.answer!.lines.find((l) => l.startsWith('Read share'))!;
    // One cell clear of 100% resolves no threshold; 90:10's figure is given with its interval's verdict.
    expect(line).toContain(
      'no threshold resolved; in this run the reader was higher (interval above 100%) at 80:20 only (64 threads); ' +
        '90:10 at 64 threads 111%, interval includes 100%.',
    );
    expect(line).not.toMatch(/scattered|consistent with a threshold|about level/);
    const study = section.answer!.tables.find((t) => t.title.startsWith('What the study found'))!;
    const row = study.rows.find((r) => r[0]!.startsWith('read share'))!;
    // The study's claim in its own words: above 70:30 at 32 threads, never clearly better at 64 and 128.
    expect(row[0]).toContain('at 32 threads the reader ahead once reads exceed 70:30 (“超过 7:3”)');
    expect(row[0]).toContain('at 64 and 128 threads the reader never clearly better than the writer');
    expect(row[0]).not.toMatch(/from 80:20 at 64/);
    expect(row[2]).toBe('64 threads contradicts (higher at 80:20) in this run (1 repeat)');
    expect(row[1]).toMatch(/^no threshold resolved; the reader was higher \(interval above 100%\) at 80:20 only/);
    // 50:50, the highest write share, at 100%: the study's "higher write share, better writer" is not seen.
    expect(row[1]).toContain(
      "; at 50:50, the highest write share, the reader was not below the writer (100% at 64 threads): the study's " +
        'trend, the writer further ahead the higher the write share, not seen',
    );
  });

  it("at 32 threads, a win at 80:20 alone only partly agrees with the study's threshold above 70:30", () => {
    // Arrange: one repeat at 32 threads; 80:20 clear of 100%, 90:10 as high with a wide interval.
    const data = shareRun(
      [
        [4, 100, 109, 0.2],
        [6, 100, 101],
        [16, 100, 112],
        [36, 100, 111, 0.3],
      ],
      0.02,
      32,
    );
    // Act
    const { section } = analyzed(data);
    // Assert
    const study = section.answer!.tables.find((t) => t.title.startsWith('What the study found'))!;
    const row = study.rows.find((r) => r[0]!.startsWith('read share'))!;
    expect(row[2]).toBe('32 threads partly agrees (higher at 80:20 only) in this run (1 repeat)');
  });

  it("puts the read-share chart with the Answer's grid, not in the folded evidence", () => {
    // Arrange: the stock rw pair (its chart comes first) and two read shares.
    const data = shareRun(
      [
        [4, 100, 100],
        [16, 100, 112],
      ],
      0.02,
    );
    const rw = [step('rw-writer', 'writer', { tps: 200 }), step('rw-reader', 'reader', { tps: 210 })];
    // Act
    const { section } = analyzed({ ...data, steps: [...rw, ...data.steps] });
    // Assert
    expect(section.answer!.charts.map((c) => c.id)).toContain('fwd-ratio');
    expect(section.charts.map((c) => c.id)).not.toContain('fwd-ratio');
  });

  it('names a win only at the highest share tried as that, not "from it up"', () => {
    // Arrange
    const data = shareRun(
      [
        [4, 100, 100],
        [6, 100, 99],
        [16, 100, 100],
        [36, 100, 115],
      ],
      0.02,
    );
    // Act
    const line = analyzed(data).section.answer!.lines.find((l) => l.startsWith('Read share'))!;
    // Assert
    expect(line).toContain('at 90:10 only, the highest share tried (64 threads)');
    expect(line).not.toContain('from 90:10 up');
  });

  it('says the reader is not distinguishable from the writer when every interval includes 100%', () => {
    // Arrange: the reader a little above and below the writer, each share's interval wide across 100%
    const data = shareRun(
      [
        [4, 100, 95],
        [6, 100, 120],
        [16, 100, 105],
        [36, 100, 90],
      ],
      0.6,
    );
    // Act
    const { f, section } = analyzed(data);
    // Assert
    expect(f.readShares[0]!.noneDiffers).toBe(true);
    const line = section.answer!.lines.find((l) => l.startsWith('Read share'))!;
    expect(line).toContain('the reader was higher (interval above 100%) at no share (64 threads).');
    expect(line).not.toContain('does not beat');
    // One finding, said once: the evidence does not say it again in other words.
    expect(section.findings.filter((l) => /read share|64 threads:/i.test(l))).toEqual([]);
  });

  it('words a cell clear of 100% on one run as higher in this run, as its note explains', () => {
    // Arrange: the reader clearly above the writer at every share, one repeat
    const data = shareRun(
      [
        [4, 100, 200],
        [6, 100, 210],
        [16, 100, 220],
        [36, 100, 230],
      ],
      0.02,
    );
    // Act
    const { section } = analyzed(data);
    // Assert: no "better in this run*" next to a note saying the interval cannot tell a difference
    const tables = [...section.tables, ...(section.answer?.tables ?? [])];
    const cells = tables.flatMap((t) => t.rows.flat());
    expect(cells.some((c) => c.includes('higher in this run*'))).toBe(true);
    expect(cells.some((c) => /(better|worse) in this run\*/.test(c))).toBe(false);
    const notes = tables.flatMap((t) => t.notes ?? []).join(' ');
    expect(notes).toContain('“higher/lower in this run” says only that this interval excludes 100%');
  });

  it('prints the reader lag each consistency level started from and says when it was not drained', () => {
    // Arrange: EVENTUAL starts 3.6 s behind (left over from the step before), SESSION and GLOBAL drained; the
    // datapoint before EVENTUAL's start (the window's slack) is not its start.
    const at = (s: number): string => new Date(Date.parse('2024-05-01T10:00:00.000Z') + s * 1000).toISOString();
    const levels = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) =>
      step(`c-${level}`, 'reader', { started_at: at(i * 100), ended_at: at(i * 100 + 60), step_id: `c-${level}-t32` }),
    );
    const lag = (step_id: string, s: number, lag_ms: number) => ({
      cell_id: 'wf-r1',
      step_id,
      instance_id: 'wf-r1-reader-1',
      ts: at(s),
      lag_ms,
    });
    const data: RunData = {
      ...runData(levels, spec),
      replicaLag: [
        lag('c-EVENTUAL-t32', -1, 9000),
        lag('c-EVENTUAL-t32', 1, 3600),
        lag('c-EVENTUAL-t32', 30, 400),
        lag('c-SESSION-t32', 101, 90),
        lag('c-SESSION-t32', 130, 20),
        lag('c-GLOBAL-t32', 201, 80),
      ],
    };

    // Act
    const { f, section, answer } = analyzed(data);

    // Assert
    expect(f.consistency.map((c) => [c.level, c.lagAtStartMs])).toEqual([
      ['EVENTUAL', 3600],
      ['SESSION', 90],
      ['GLOBAL', 80],
    ]);
    const table = section.answer!.tables.find((t) => t.title.startsWith('Read consistency'))!;
    const col = table.head.indexOf('reader lag at start s');
    expect(table.rows.map((r) => r[col])).toEqual(['3.60', '0.09', '0.08']);
    expect(answer).toMatch(/EVENTUAL started with the replica still behind .* may come from the order the steps ran/);
  });

  /** The three levels at 32 threads from 12:00:00, 100 s apart; the reader's lag at each step's start in ms. */
  function levelsRun(startLagMs: readonly [number, number, number]): RunData {
    const at = (s: number): string => new Date(Date.parse('2024-05-01T10:00:00.000Z') + s * 1000).toISOString();
    const figures = [
      { tps: 224, lat_avg_ms: 141, lat_pct_ms: 298 },
      { tps: 190, lat_avg_ms: 166, lat_pct_ms: 293 },
      { tps: 151, lat_avg_ms: 209, lat_pct_ms: 376 },
    ];
    const levels = ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level, i) =>
      step(`c-${level}`, 'reader', {
        started_at: at(i * 100),
        ended_at: at(i * 100 + 60),
        step_id: `c-${level}-t32`,
        lat_pct: 95,
        ...figures[i],
      }),
    );
    // Per-interval samples that wobble a little around each step's figures: within-run intervals exist.
    const intervals = new Map(
      levels.map((s) => [
        `${s.cell_id}/${s.step_id}`,
        warmingIntervals(s.tps!).map((x, i) => ({
          ...x,
          tps: s.tps! * (1 + 0.03 * Math.sin(i)),
          lat_pct_ms: s.lat_pct_ms! * (1 + 0.03 * Math.cos(i)),
        })),
      ]),
    );
    const lag = (i: number, s: number, lag_ms: number) => ({
      cell_id: 'wf-r1',
      step_id: levels[i]!.step_id,
      instance_id: 'wf-r1-reader-1',
      ts: at(i * 100 + s),
      lag_ms,
    });
    return {
      ...runData(levels, spec),
      intervals,
      replicaLag: startLagMs.flatMap((ms, i) => [lag(i, 1, ms), lag(i, 30, Math.min(ms, 100))]),
    };
  }

  it('says a waiting level started behind may owe its latency to the step order, never its stale reads', () => {
    // Arrange: SESSION starts 0.31 s behind, EVENTUAL and GLOBAL drained
    const { answer } = analyzed(levelsRun([0, 310, 50]));
    // Assert
    expect(answer).toMatch(/SESSION started with the replica still behind .*its latency difference from EVENTUAL may/);
    expect(answer).toMatch(/its stale reads cannot \(it waits for its own writes whatever the lag\)/);
    expect(answer).toMatch(/EVENTUAL, the baseline, started drained/);
    expect(answer).not.toMatch(/latency and stale-read differences may come from the order/);
  });

  it('gives each level its TPS, average and tail against EVENTUAL apart, in the words of the table', () => {
    // Act
    const { section, answer } = analyzed(levelsRun([0, 0, 0]));
    // Assert: TPS, average and p95 each with their own ratio (190/224, 166/141, 293/298)
    const line = section.answer!.lines.find((l) => l.startsWith('Consistency levels'))!;
    expect(line).toMatch(/TPS EVENTUAL 224, SESSION 190 \(85%, [^)]+\), GLOBAL 151 \(67%, lower in this run\)/);
    expect(line).toMatch(/average EVENTUAL 141 ms, SESSION 166 \(118%\)/);
    expect(line).toMatch(/p95 EVENTUAL 298 ms, SESSION 293 \(98%, [^)]+\)/);
    // The one-repeat caveat reads once, without a doubled noun.
    expect(line).not.toMatch(/differences? below differences/);
    expect(answer).not.toMatch(/not judged/);
    // The verdict each ratio carries is its table cell's.
    const table = section.answer!.tables.find((t) => t.title.startsWith('Read consistency'))!;
    const words = (cell: string): string => cell.replace(/^.*\) /, '').replace(/\*$/, '');
    for (const [level, col] of [
      ['SESSION', 'TPS vs EVENTUAL'],
      ['GLOBAL', 'TPS vs EVENTUAL'],
      ['SESSION', 'p95 ms vs EVENTUAL'],
      ['GLOBAL', 'p95 ms vs EVENTUAL'],
    ] as const) {
      const cell = table.rows.find((r) => r[0] === level)![table.head.indexOf(col)]!;
      expect(line).toContain(`${cell.replace(/ .*$/, '')}, ${words(cell)})`);
    }
  });

  it("quotes each level's p50 beside its p95, and says when they move opposite ways", () => {
    // Arrange: the median rises with the level (100, 122, 133 ms) while the p95 falls (300, 250, 240 ms).
    const data = levelsRun([0, 0, 0]);
    const p50 = [100, 122, 133];
    const p95 = [300, 250, 240];
    const steps = data.steps.map((s, i) => ({ ...s, lat_p50_ms: p50[i]!, lat_pct_ms: p95[i]! }));
    const intervals = new Map(
      [...data.intervals].map(([k, v], i) => [k, v.map((x) => ({ ...x, lat_pct_ms: p95[i]! * (x.lat_pct_ms / 10) }))]),
    );
    // Act
    const { section } = analyzed({ ...data, steps, intervals });
    // Assert: the Answer quotes the p50 with its ratio, not the p95 alone.
    const line = section.answer!.lines.find((l) => l.startsWith('Consistency levels'))!;
    expect(line).toContain('p50 EVENTUAL 100.00 ms, SESSION 122.00 (122%), GLOBAL 133.00 (133%)');
    expect(line).toContain("the p50 rose and the p95 fell, so neither alone is the levels' latency cost");
    // The same figures in the table's p50 column.
    const table = section.answer!.tables.find((t) => t.title.startsWith('Read consistency'))!;
    const col = table.head.indexOf('p50 ms (vs EVENTUAL)');
    expect(table.rows.map((r) => r[col])).toEqual(['100.00', '122.00 (122%)', '133.00 (133%)']);
  });

  /** A local run (the emulation): rw and wo on writer and reader at 32 threads, and a 2-reader scale-out at 64. */
  function localRun(): RunData {
    const localSpec = {
      name: 'fwd-local',
      variants: [],
      workloads: [
        { name: 'rw-writer', test: 'oltp_read_write', threads: [32], target: 'writer' },
        { name: 'rw-reader', test: 'oltp_read_write', threads: [32], target: 'reader' },
        { name: 'wo-writer', test: 'oltp_write_only', threads: [32], target: 'writer' },
        { name: 'wo-reader', test: 'oltp_write_only', threads: [32], target: 'reader' },
        { name: 'ps4-writer', test: 'oltp_read_write', threads: [64], target: 'writer' },
        { name: 'ps4-2readers', test: 'oltp_read_write', threads: [32], target: 'all-readers', clients: 2 },
      ],
    } as never;
    const hist = { lat_p50_ms: 40, lat_p90_ms: 80, lat_p95_ms: 97.555, lat_p99_ms: 140, lat_p999_ms: 190 };
    const steps = [
      step('rw-writer', 'writer', { threads: 32, tps: 200 }),
      step('rw-reader', 'reader', { threads: 32, tps: 240 }),
      step('wo-writer', 'writer', { threads: 32, test: 'oltp_write_only', tps: 600 }),
      // sysbench's summary prints the 95th percentile to 2 decimals, its histogram the same bucket to 3.
      step('wo-reader', 'reader', {
        threads: 32,
        test: 'oltp_write_only',
        tps: 700,
        lat_pct: 95,
        lat_pct_ms: 97.55,
        lat_max_ms: 276.6,
        ...hist,
      }),
      step('ps4-writer', 'writer', { threads: 64, tps: 300 }),
      step('ps4-2readers', 'all-readers', { threads: 32, tps: 450, clients: 2, ok_clients: 2 }),
    ];
    // Every step reports the 95th percentile, as the study asks.
    const d = runData(
      steps.map((x) => ({ ...x, lat_pct: 95 })),
      localSpec,
    );
    return { ...d, run: { ...d.run, backend: 'local' as const } };
  }

  it('on a local run, says what the reader steps measured and keeps write-only as the control', () => {
    // Act
    const { f, section, answer } = analyzed(localRun());
    // Assert: no table or sentence calls the local reader's writes forwarded
    const titles = [...section.tables, ...section.answer!.tables].map((t) => t.title);
    expect(titles.filter((t) => /writes forwarded/.test(t))).toEqual([]);
    expect(titles).toContain('Writer vs reader, TPS by threads');
    expect(answer).not.toMatch(/writes forwarded/);
    // The one-line answer first, the local scope in the same bullet.
    expect(answer).toMatch(
      /^In this run the reader was .*\. Locally no write is forwarded: .*; Aurora’s forwarding cost/,
    );
    expect(answer).toMatch(/Aurora’s forwarding cost .* cannot be shown here/);
    // wo on the reader ran every statement on the writer: its ratio is the noise of two identical steps
    expect(f.pairs.map((p) => [p.workload, p.control])).toEqual([
      ['rw', false],
      ['wo', true],
    ]);
    expect(f.controls).toEqual(['wo']);
    expect(answer).toMatch(
      /Write-only is the emulation's control: locally both of its steps send every statement to the writer: wo /,
    );
    expect(answer).not.toMatch(/left out/);
    const cells = section.answer!.tables.flatMap((t) => t.rows.map((r) => r[0]));
    expect(cells).toContain('wo (control)');
    // The rw sentence does not mix the control in.
    expect(answer).toMatch(/over writer TPS at 32 threads: rw \d+%:/);
  });

  it('on a local run, keeps write-only in the latency table as the control it is', () => {
    // Arrange: wo-writer has the widest tail; rw-reader a narrower one
    const d = localRun();
    const tail = (p50: number, p99: number) => ({
      lat_p50_ms: p50,
      lat_p90_ms: p99,
      lat_p95_ms: p99,
      lat_p99_ms: p99,
      lat_max_ms: p99 + 1,
    });
    const steps = d.steps.map((s) =>
      s.workload === 'wo-writer'
        ? { ...s, ...tail(10, 900) }
        : s.workload === 'rw-reader'
          ? { ...s, ...tail(40, 160) }
          : s,
    );
    // Act
    const report = buildReport({ ...d, steps }, prices);
    // Assert
    const latency = report.sections.find((s) => s.id === 'latency')!;
    expect(latency.findings.join(' ')).toMatch(/Widest tail: wf wo-writer/);
    expect(latency.tables[0]!.notes!.join(' ')).not.toMatch(/Left out/);
  });

  it('on one machine, says where a scale-out gain can come from when the readers were higher', () => {
    // Arrange: the readers summed 450 against the writer's 300, with intervals clear of 100%
    const d = localRun();
    const intervals = new Map(
      d.steps.map((s) => [
        `${s.cell_id}/${s.step_id}`,
        warmingIntervals(s.tps!).map((x, i) => ({ ...x, tps: s.tps! * (1 + 0.02 * Math.sin(i)) })),
      ]),
    );
    // Act
    const { section } = analyzed({ ...d, intervals });
    // Assert
    const line = section.findings.find((l) => l.startsWith('Scale-out,'))!;
    expect(line).toMatch(/ps4-2readers 150%/);
    expect(line).toMatch(/the gain can come from 2 sysbench processes instead of one and fewer sessions per server/);
    // Without an interval nothing is called a gain.
    expect(analyzed(d).section.findings.join(' ')).not.toMatch(/the gain can come from/);
  });

  it('on one machine, says where the scale-out is stated that a reader cannot add capacity', () => {
    // Act
    const { section } = analyzed(localRun());
    // Assert
    const line = section.findings.find((l) => l.startsWith('Scale-out,'))!;
    expect(line).toMatch(/ps4-2readers 150% of the writer's TPS/);
    expect(line).toMatch(/the readers share the writer’s CPUs .* the capacity an added reader instance brings/);
    // An AWS run says nothing of the kind.
    const aws = analyzed({ ...localRun(), run: { ...localRun().run, backend: 'aws' as const } });
    expect(aws.section.findings.find((l) => l.startsWith('Scale-out,'))).not.toMatch(/share the writer’s CPUs/);
  });

  it('shows one percentile once: the same step and rounding in the study table and the latency table', () => {
    // Arrange: an AWS run keeps wo in the comparison
    const data = { ...localRun(), run: { ...localRun().run, backend: 'aws' as const } };
    // Act
    const report = buildReport(data, prices);
    // Assert
    const fwd = report.sections.find((s) => s.id === 'forwarding')!;
    const pairs = fwd.tables.find((t) => t.title.startsWith('Writer vs reader'))!;
    const woRow = pairs.rows.find((r) => r[0] === 'wo')!;
    const latency = report.sections.find((s) => s.id === 'latency')!.tables[0]!;
    const woReader = latency.rows.find((r) => r[1]!.startsWith('wo-reader t32'))!;
    expect(woRow[pairs.head.indexOf('reader p95 ms')]).toBe('97.55');
    expect(woReader[latency.head.indexOf('p95')]).toBe('97.55');
  });

  it('renders every finding the terminal shows on the HTML page too', () => {
    // Act
    const report = buildReport(localRun(), prices);
    const html = renderHtml(report);
    // Assert: the scale-out line (evidence, not answer) is in both
    const line = report.sections.find((s) => s.id === 'forwarding')!.findings[0]!;
    expect(renderTerminal(report)).toContain(line);
    expect(html).toContain(line);
  });
});
