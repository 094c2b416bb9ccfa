/**
 * Ratios of a duet run from time-paired intervals (core/report/duet-pairs.ts) and what the A/B
 * section says about the order and the width of each ratio's interval (core/report/sections.ts).
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { Plan } from '../../core/plan/types';
import { pairByTime, pairedRatioCi, roundsToResolve } from '../../core/report/duet-pairs';
import type { RunData } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

const series = (startedAt: string, values: readonly number[]) => ({
  startedAt,
  points: values.map((value, i) => ({ t: i + 1, value })),
});

describe('pairByTime', () => {
  it('pairs the intervals that cover the same seconds, by wall-clock time', () => {
    // Arrange: B started 0.3 s after A (same seconds), C 1.2 s after A (its interval k ends near A's k+1)
    const a = series('2026-11-23T01:00:00.000Z', [10, 20, 30, 40]);
    const b = series('2026-11-23T01:00:00.300Z', [1, 2, 3, 4]);
    const c = series('2026-11-23T01:00:01.200Z', [1, 2, 3, 4]);
    // Act / Assert
    expect(pairByTime(a, b, 1)).toEqual([
      [10, 1],
      [20, 2],
      [30, 3],
      [40, 4],
    ]);
    expect(pairByTime(a, c, 1)).toEqual([
      [20, 1],
      [30, 2],
      [40, 3],
    ]);
    // Nothing within half an interval: no pair.
    expect(pairByTime(a, series('2026-11-23T01:00:10.000Z', [1, 2]), 1)).toEqual([]);
  });
});

describe('pairedRatioCi', () => {
  it('cancels noise both variants saw: the rounds agree, the interval is narrow', () => {
    // Arrange: every second's load factor hits both; B does 90% of A's work in the same second.
    const load = [
      [1, 0.5, 1, 0.5],
      [0.4, 0.4, 1, 1],
      [1, 1, 1, 0.3],
    ];
    const rounds = load.map((f) =>
      f.map((x, i) => [1000 * x, 900 * x * (1 + (i % 2 === 0 ? 0.01 : -0.01))] as [number, number]),
    );
    // Act
    const r = pairedRatioCi(rounds);
    // Assert
    expect(r.source).toBe('rounds');
    expect(r.rounds).toBe(3);
    expect(r.pairs).toBe(12);
    expect(1 / r.estimate).toBeCloseTo(0.9, 2);
    expect(r.high - r.low).toBeLessThan(0.03);
  });

  it('with one round, takes batch means of the pairs (within-run noise only)', () => {
    const pairs = Array.from({ length: 20 }, (_, i) => [100 + (i % 3), 50 + (i % 2)] as [number, number]);
    const r = pairedRatioCi([pairs]);
    expect(r.source).toBe('interval batches');
    expect(r.estimate).toBeGreaterThan(1.9);
    expect(r.low).toBeLessThan(r.estimate);
    expect(r.high).toBeGreaterThan(r.estimate);
  });

  it('says when there is nothing to pair', () => {
    expect(pairedRatioCi([[], []]).source).toBe('none');
  });
});

describe('roundsToResolve', () => {
  it('asks for more rounds the more the rounds disagree', () => {
    const tight = roundsToResolve([0.1, 0.11, 0.09]);
    const loose = roundsToResolve([0.1, 0.3, -0.1]);
    expect(tight).not.toBeNull();
    expect(loose).not.toBeNull();
    expect(tight!).toBeLessThan(loose!);
    expect(roundsToResolve([0, 0])).toBeNull();
  });
});

describe('A/B section of a duet run', () => {
  // Three rounds under a load that changes from round to round (and second to second); in each
  // round A and B ran in the same seconds, B at 90% of A.
  const load = [
    [1, 0.5, 1, 0.5, 1, 0.5],
    [0.4, 0.4, 1, 1, 0.4, 0.4],
    [1, 1, 1, 0.3, 0.3, 1],
  ];
  function data(order: 'duet' | 'interleaved' | 'randomized'): RunData {
    const steps = load.flatMap((f, i) => {
      const repeat = i + 1;
      const started = `2026-11-23T01:0${repeat}:00.000Z`;
      const mean = f.reduce((s, x) => s + x, 0) / f.length;
      return [
        stepResult({
          variant: 'a',
          step_id: 'ro-t4',
          workload: 'ro',
          repeat,
          started_at: started,
          tps: 1000 * mean,
          qps: 16000 * mean,
          lat_pct_ms: 5 / mean,
        }),
        stepResult({
          variant: 'b',
          step_id: 'ro-t4',
          workload: 'ro',
          repeat,
          started_at: started,
          tps: 900 * mean,
          qps: 14400 * mean,
          lat_pct_ms: 5.5 / mean,
        }),
      ];
    });
    const intervals = new Map(
      load.flatMap((f, i) =>
        (['a', 'b'] as const).map((v) => {
          const k = v === 'a' ? 1 : 0.9;
          return [
            `${v}-r${i + 1}/ro-t4`,
            f.map((x, t) => ({
              cell_id: `${v}-r${i + 1}`,
              step_id: 'ro-t4',
              t: t + 1,
              tps: 1000 * k * x,
              qps: 16000 * k * x,
              lat_pct_ms: (5 / k) * (1 / x),
              errors_per_s: 0,
            })),
          ] as const;
        }),
      ),
    );
    const plan = { order, ...(order === 'randomized' ? { orderSeed: 7 } : {}), cells: [] } as unknown as Plan;
    return { ...runData(steps), plan, intervals };
  }

  it(
    'says the order, computes the ratio from time-paired intervals and shows its width, narrower than the ' +
      'repeats give',
    () => {
      // Act
      const duet = buildReport(data('duet'), prices).sections.find((s) => s.id === 'ab')!;
      const interleaved = buildReport(data('interleaved'), prices).sections.find((s) => s.id === 'ab')!;
      // Assert
      const duetRatio = duet.tables[0]!.rows[2]!;
      const welchRatio = interleaved.tables[0]!.rows[2]!;
      expect(duet.tables[0]!.notes![0]).toMatch(/^Order: duet\. .*time-paired intervals.*Bulej et al\., ICPE 2020/);
      expect(interleaved.tables[0]!.notes![0]).toMatch(/^Order: interleaved\./);
      expect(duetRatio.slice(1, 2)).toEqual(['b/a']);
      expect(duetRatio[4]).toMatch(/^90\.0% \(\d+\.\d%–\d+\.\d%\) worse$/);
      expect(duetRatio[7]).toBe('time-paired: 18 intervals, 3 rounds');
      expect(welchRatio[7]).toBe('Welch: 3 + 3 repeats');
      const width = (cell: string) => Number(/width ([\d.]+) pts/.exec(cell)![1]);
      expect(width(duetRatio[6]!)).toBeLessThan(1);
      expect(width(welchRatio[6]!)).toBeGreaterThan(10 * width(duetRatio[6]!));
      const answer = buildReport(data('duet'), prices).answer!.tables.find((t) =>
        t.title.startsWith('Per AZ: each variant over the baseline'),
      )!;
      expect(answer.head).toEqual([
        'AZ',
        'step',
        'ratio',
        'QPS',
        'TPS',
        'p99 (lower is better)',
        'QPS 95% CI width',
        'rounds to resolve QPS',
      ]);
      expect(answer.notes![0]).toMatch(/^Order: duet\./);
    },
  );

  it('names a randomized order with its seed', () => {
    const ab = buildReport(data('randomized'), prices).sections.find((s) => s.id === 'ab')!;
    expect(ab.tables[0]!.notes![0]).toMatch(/^Order: randomized \(seed 7\)\. .*shuffled order/);
    expect(ab.tables[0]!.rows[2]![7]).toBe('Welch: 3 + 3 repeats');
  });
});
