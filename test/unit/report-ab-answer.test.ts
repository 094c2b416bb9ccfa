/**
 * S1's Answer on planted runs (test/helpers/planted-lakes.ts): its one chart draws the very rows of
 * the performance-vs-price table above it, a p95 interval of no width (both repeats in one
 * histogram bucket) is explained where it is shown, and the latency table says what it averages.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import type { Report, TableBlock } from '../../core/report/model';
import type { RunData } from '../../core/report/load';
import { experiment, plantedRunData, recordedNoise } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S1 = experiment('graviton-vs-intel');

const planted = (seed: number): RunData =>
  plantedRunData(
    S1,
    (cell) => ({
      tps: cell.variant.name.startsWith('r6g') ? 1100 : 1000,
      latPctMs: 40,
      latPercentilesMs: [20, 35, 40, 60, 90],
    }),
    {
      seed,
      runId: `s1-answer-${seed}`,
      noise: recordedNoise(),
    },
  );

const table = (r: Report, title: string): TableBlock =>
  [...(r.answer?.tables ?? []), ...r.sections.flatMap((s) => s.tables)].find((t) => t.title.startsWith(title))!;

/** "111.6% (93.6%–133.2%)" -> [111.6, 93.6, 133.2]; an end printed "<10%" or ">1,000%" -> null. */
function ratioCell(cell: string): [number, number | null, number | null] {
  const m = /^\s*([\d.]+)% \((<?)([\d.,]+)%–(>?)([\d.,]+)%\)/.exec(cell)!;
  const n = (s: string): number => Number(s.replace(/,/g, ''));
  return [n(m[1]!), m[2] === '<' ? null : n(m[3]!), m[4] === '>' ? null : n(m[5]!)];
}

describe("S1's Answer", () => {
  it.each([1, 2, 3])('its one chart is the performance-vs-price table, row for row (seed %i)', (seed) => {
    // Act
    const r = buildReport(planted(seed), prices);
    // Assert
    const charts = [...(r.answer?.charts ?? []), ...r.sections.flatMap((s) => s.charts)];
    expect(r.answer!.charts.map((c) => c.id)).toEqual(['price-performance']);
    expect(charts.some((c) => c.id === 'ab-ratio')).toBe(false);
    const t = table(r, 'Performance ratio vs price ratio');
    const series = r.answer!.charts[0]!.option.series as { name: string; data: [number, string][] }[];
    const points = series.find((s) => s.name === 'estimate')!.data;
    const marks = series.find((s) => s.name === 'price ratio')!.data;
    const intervals = series.filter((s) => s.name === '95% CI').map((s) => s.data);
    expect(points).toHaveLength(t.rows.length);
    t.rows.forEach((row) => {
      const label = `AZ ${row[0]} ${row[1]}: ${row[2]}`;
      const [estimate, low, high] = ratioCell(row[3]!);
      const point = points.find((p) => p[1] === label)!;
      expect(point[0]).toBeCloseTo(estimate, 0);
      expect(marks.find((m) => m[1] === label)![0]).toBeCloseTo(Number(row[4]!.replace('%', '')), 0);
      const segment = intervals.find((d) => d[0]![1] === label)!;
      // An end inside the axis is drawn where the table prints it.
      if (low !== null && segment[0]![0] > 10) expect(segment[0]![0]).toBeCloseTo(low, 0);
      if (high !== null && segment[1]![0] < 1000) expect(segment[1]![0]).toBeCloseTo(high, 0);
    });
  });

  it("explains a p95 interval of no width once, where it is shown, as the histogram's resolution", () => {
    // Arrange: both repeats of r5-a write-only t64 read the same p95 bucket bound.
    const data = planted(1);
    const same: RunData = {
      ...data,
      steps: data.steps.map((s) =>
        s.variant === 'r5-a' && s.workload === 'write-only' ? { ...s, lat_pct_ms: 142.387 } : s,
      ),
    };
    // Act
    const r = buildReport(same, prices);
    // Assert
    const t = table(r, 'Per AZ: QPS, TPS and p95 per class');
    const cells = t.rows.map((row) => row[6]!);
    expect(cells.filter((c) => c.endsWith('§'))).toEqual(['142 (142–142) §']);
    const notes = (t.notes ?? []).filter((n) => n.startsWith('§:'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("same latency bucket (sysbench's histogram buckets are about 1.8% apart)");
    expect(notes[0]).toContain("no difference at the histogram's resolution");
    // Where no interval is flat, no mark and no note.
    const plain = table(buildReport(planted(1), prices), 'Per AZ: QPS, TPS and p95 per class');
    expect(plain.rows.some((row) => row[6]!.endsWith('§'))).toBe(false);
    expect((plain.notes ?? []).some((n) => n.startsWith('§:'))).toBe(false);
  });

  it('the latency table says it averages per-run percentiles, and why that is not a pooled percentile', () => {
    // Act
    const t = table(buildReport(planted(1), prices), 'Latency percentiles per step');
    // Assert: the title's mean and the notes agree; no note says percentiles cannot be averaged.
    expect(t.title).toContain('mean over the successful repeats');
    const notes = (t.notes ?? []).join(' ');
    expect(notes).toContain('A row averages those per-run figures over the repeats');
    expect(notes).not.toMatch(/cannot be averaged/);
  });

  it('defines the CV column of the per-AZ tables', () => {
    // Act
    const t = table(buildReport(planted(1), prices), 'AZ a');
    // Assert
    expect(t.head).toContain('TPS CV (runs: repeat to repeat; within: inside a run)');
    expect((t.notes ?? []).some((n) => n.startsWith('TPS CV (standard deviation over the mean)'))).toBe(true);
  });
});
