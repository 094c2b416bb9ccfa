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
    expect(section.answer!.tables[0]!.rows[0]!.slice(2, 5)).toEqual([
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
    // One repeat: the within-run wins are not claimed; the Answer says the run cannot resolve the grid.
    expect(answer).not.toMatch(/wins at 50:50/);
    expect(answer).toMatch(/not judged at 64 threads, since 1 repeat cannot resolve the grid's ratios/);
  });

  /** One repeat per share at 64 threads; per-interval TPS swing by `wobble` in slow waves batch means keep. */
  function shareRun(pairs: readonly (readonly [number, number, number])[], wobble: number): RunData {
    const steps = pairs.flatMap(([ps, w, r]) => [
      step(`ps${ps}-writer`, 'writer', { threads: 64, tps: w }),
      step(`ps${ps}-reader`, 'reader', { threads: 64, tps: r }),
    ]);
    const intervals = new Map(
      steps.map((s) => [
        `${s.cell_id}/${s.step_id}`,
        warmingIntervals(s.tps!).map((x, i) => ({
          ...x,
          tps: s.tps! * (1 + wobble * (i % 8 < 4 ? -1 : 1) * (i < 20 ? 1 : 0.5)),
        })),
      ]),
    );
    return { ...runData(steps, spec), intervals };
  }

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
    const line = section.findings.find((l) => l.startsWith('64 threads:'))!;
    expect(line).toContain('the reader is not distinguishable from the writer');
    expect(line).not.toContain('does not beat');
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
});
