/**
 * S2's fall-off is judged at every point past the peak: a first point just under 90% whose interval
 * reaches 100% must not hide a later collapse, and a share just under 90% never prints as 90%.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RatioFinding } from '../../core/report/findings';
import { buildReport } from '../../core/report/report';
import { experiment, plantedRunData, recordedNoise } from '../helpers/planted-lakes';
import { judgedFall, threadSweepSection, type ThreadSweepFindings } from '../../core/report/studies/thread-sweep';

const withinRun = (estimate: number, low: number, high: number): RatioFinding => ({
  estimate,
  interval: { low, high, level: 0.95, covers: 'within-run', n: 6 },
  direction: high < 1 ? 'lower' : low > 1 ? 'higher' : 'within-noise',
});

/** rds-mysql read-write as this rehearsal measured it: peak 1,632 at 8; 1,462 at 64 (80%–100%); 458 at 1,024. */
const past = [
  { threads: 64, tps: 1462, ratio: () => withinRun(1462 / 1632, 0.8, 1.0) },
  { threads: 256, tps: 1144, ratio: () => withinRun(1144 / 1632, 0.65, 0.75) },
  { threads: 1024, tps: 458, ratio: () => withinRun(458 / 1632, 0.22, 0.34) },
];

function findings(fallOff: RatioFinding, fallOffThreads: number): ThreadSweepFindings {
  const point = (threads: number) => ({
    threads,
    tps: { value: 100, interval: null },
    qps: { value: 2000, interval: null },
    latency: { value: 10, interval: null },
    failed: false,
    leftOut: false,
    clientBound: '',
    unsteady: [],
  });
  return {
    kind: 'thread-sweep',
    sweeps: [
      {
        label: 'read-write',
        queriesPerTransaction: 20,
        latencyPercentile: 95,
        variants: [
          {
            variant: 'rds-mysql',
            points: [2, 8, 64, 256, 1024].map(point),
            peakThreads: 8,
            peakTps: 1632,
            fallOffThreads,
            fallOff,
            lastShareOfPeak: 0.28,
            errorPoints: [],
          },
        ],
        unscored: [],
        scores: [],
      },
    ],
    threadCounts: [2, 8, 64, 256, 1024],
    commits: { committing: ['read-write'], notCommitting: [] },
    identical: [],
    runOrder: null,
    trend: null,
    overall: [],
    ranking: null,
    threadPool: [],
    clientBound: null,
    caveats: {
      local: true,
      sameServer: [],
      parameterDifferences: [],
      minHitRatioPct: null,
      threadsNotRun: [],
      longSteps: [],
    },
    parameters: null,
    aa: null,
    maxConnections: null,
  };
}

describe('S2 fall-off past the peak', () => {
  it('finds the fall at a later point when the first one under 90% cannot show it', () => {
    // Act
    const fall = judgedFall(8, 1632, past);
    // Assert: 64 threads (interval reaching 100%) does not hide 70% at 256
    expect(fall?.threads).toBe(256);
    expect(fall?.ratio.estimate).toBeCloseTo(1144 / 1632, 6);
  });

  it('keeps the first point under 90% as "no fall shown" only when no later point shows one', () => {
    // Act
    const fall = judgedFall(8, 1632, [past[0]!, { threads: 256, tps: 1500, ratio: () => withinRun(0.92, 0.85, 1) }]);
    // Assert
    expect(fall?.threads).toBe(64);
  });

  it('prints a share just under 90% with the decimal that shows it is under', () => {
    // Arrange: 1,462 / 1,632 = 89.6%, with an interval below 100%
    const f = findings(withinRun(1462 / 1632, 0.85, 0.95), 64);
    // Act
    const section = threadSweepSection(f);
    const row = section.tables.find((t) => t.title === 'Peak and fall-off (TPS)')!.rows[0]!;
    // Assert
    expect(row[5]).toMatch(/^89\.6% /);
    expect(section.findings.join(' ')).toContain('falls to 89.6%');
  });
});

describe("S2's fall past 512 threads on a machine that saturates first", () => {
  it('says not testable, why, and which run tests it, in a table shown open', () => {
    // Arrange: every variant peaks at 8 threads and falls (a machine of few CPUs); 512 threads not run
    const recorded = recordedNoise();
    const quiet = { ...recorded, intervals: { ...recorded.intervals, sigma: recorded.intervals.sigma / 10 } };
    const curve: Record<number, number> = { 2: 1000, 8: 1600, 64: 1200, 256: 900, 1024: 400 };
    const data = plantedRunData(experiment('thread-sweep'), (_c, st) => ({ tps: curve[st.threads] ?? 1000 }), {
      seed: 3,
      runId: 's2-saturated',
      noise: quiet,
    });
    // Act
    const r = buildReport(data, loadPrices(resolve(__dirname, '../..')));
    const table = r.answer!.tables.find((t) => t.title === 'What the study found, and this run')!;
    const fall = table.rows.find((x) => x[0] === 'without a thread pool, throughput falls past 512 threads')![1]!;
    // Assert: not "see the fall-off table"
    expect(fall).toMatch(/^not testable here: 512 threads not run, and on this machine.* every variant peaks by/);
    expect(fall).toContain('with a thread pool or without; the AWS run');
    expect(table.folded).toBeUndefined();
  });
});

describe("S2's long steps", () => {
  it('marks a thread count whose steps ran well past their plan, and says it is scored', () => {
    // Arrange: the 1,024-thread steps took 10–13 s for 8 s planned
    const base = findings(withinRun(0.7, 0.65, 0.75), 256);
    const f: ThreadSweepFindings = {
      ...base,
      overall: [{ variant: 'rds-mysql', score: 100 }],
      caveats: { ...base.caveats, longSteps: [{ threads: 1024, plannedS: 8, lowS: 10, highS: 13, steps: 6 }] },
    };
    // Act
    const section = threadSweepSection(f);
    const tps = section.tables.find((t) => t.title.startsWith('TPS per thread count'))!;
    const score = section.answer!.tables.find((t) => t.title.startsWith('100-point score'))!;
    // Assert
    expect(tps.rows[0]!.at(-1)).toMatch(/ †$/);
    expect(tps.rows[0]!.at(-2)).not.toContain('†');
    const note =
      '†: the 1,024-thread steps took 10–13 s for 8 s planned (connecting and draining threads): ' +
      'not a steady state, yet in every score, peak and fall-off here.';
    expect(tps.notes).toContain(note);
    expect(score.notes!.join(' ')).toContain(
      'The 1,024-thread steps took 10–13 s for 8 s planned (connecting and draining threads): not a steady state, ' +
        'yet in every score, peak and fall-off here (marked † in the TPS per thread count).',
    );
  });
});

describe("S2's score metric", () => {
  it('says the committed-QPS score is scaled TPS and departs from sysbench’s QPS', () => {
    // Arrange
    const f: ThreadSweepFindings = {
      ...findings(withinRun(0.7, 0.65, 0.75), 256),
      overall: [{ variant: 'a', score: 1 }],
    };
    // Act
    const score = threadSweepSection(f).answer!.tables.find((t) => t.title.startsWith('100-point score'))!;
    // Assert
    expect(score.notes!.join(' ')).toContain(
      'not sysbench’s QPS, the study’s metric, which also counts the statements of rolled-back transactions',
    );
    expect(score.notes!.join(' ')).toContain('its mean TPS scaled, and ranks as TPS does');
  });
});

describe("S2's charts", () => {
  it('ticks the thread axis at the measured counts alone, not at every power of two', () => {
    // Act
    const charts = threadSweepSection(findings(withinRun(0.7, 0.65, 0.75), 256)).answer!.charts;
    // Assert
    for (const c of charts) {
      const x = (c.option as { xAxis: Record<string, unknown> }).xAxis;
      expect(x['axisLabel']).toMatchObject({ customValues: [2, 8, 64, 256, 1024] });
      expect(x['axisTick']).toMatchObject({ customValues: [2, 8, 64, 256, 1024] });
      expect([x['min'], x['max']]).toEqual([2, 1024]);
    }
  });
});

describe("S2's thread-pool evidence beyond the score", () => {
  it('names the tail latency at the most threads and the deadlocks where per-connection first passes 0.1', () => {
    // Arrange: pool p95 910 ms vs 3,640 at 1,024 threads; deadlocks at 256: pool below 0.1, per-connection 8.28
    const base = findings(withinRun(0.7, 0.65, 0.75), 256);
    const v0 = base.sweeps[0]!.variants[0]!;
    const withLatency = (name: string, ms: number, dead: number | null) => ({
      ...v0,
      variant: name,
      points: v0.points.map((p) => (p.threads === 1024 ? { ...p, latency: { value: ms, interval: null } } : p)),
      errorPoints:
        dead === null
          ? []
          : [
              {
                threads: 256,
                kind: 'deadlocks' as const,
                what: 'ran with errors',
                errors: 9,
                perTransaction: dead,
                reconnects: 0,
                error: null,
              },
            ],
    });
    const f: ThreadSweepFindings = {
      ...base,
      sweeps: [{ ...base.sweeps[0]!, variants: [withLatency('p', 910, null), withLatency('c', 3640, 0.0828)] }],
      overall: [
        { variant: 'p', score: 100 },
        { variant: 'c', score: 99 },
      ],
      ranking: { best: 'p', second: 'c', ratio: withinRun(1.01, 0.9, 1.1), repeatsToResolve: null },
      threadPool: [{ pool: 'p', perConnection: 'c', ratio: withinRun(1.01, 0.9, 1.1) }],
    };
    // Act
    const row = threadSweepSection(f)
      .answer!.tables.find((t) => t.title === 'What the study found, and this run')!
      .rows.find((r) => r[0]!.startsWith('a thread pool'))![1]!;
    // Assert
    // Per workload, at the most threads and the count below (equal there): not one lumped range
    expect(row).toContain(
      "visible here: the pool's p95 latency as a share of one thread per connection's (p): " +
        'read-write 25% at 1,024; 100% at 256 threads',
    );
    expect(row).toContain('deadlocks per 100 committed transactions: read-write at 256 threads p below 0.1 vs 8.28');
    // On scaled data the deadlocks are the scale's; the pool's cut of them is its own, and said so
    const scaled = threadSweepSection({ ...f, dataScale: '4 x 10,000 rows instead of 10 x 10,000,000' })
      .answer!.tables.find((t) => t.title === 'What the study found, and this run')!
      .rows.find((r) => r[0]!.startsWith('a thread pool'))![1]!;
    expect(scaled).toContain(
      'deadlocks per 100 committed transactions (on the scaled data, where threads contend for few rows; ' +
        'the pool runs fewer at once): read-write at 256 threads p below 0.1 vs 8.28',
    );
  });
});
