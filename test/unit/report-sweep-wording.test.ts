/**
 * S2's sentences and titles say what its own tables show: from which thread count each variant
 * deadlocks, what the chart markers are, what the fall-off interval covers, and no direction word
 * for a ranking the run cannot judge.
 */
import type { RatioFinding } from '../../core/report/findings';
import {
  threadSweepSection,
  threadSweepSentences,
  type ThreadSweepFindings,
} from '../../core/report/studies/thread-sweep';

type Variant = ThreadSweepFindings['sweeps'][number]['variants'][number];

const withinRun = (estimate: number, low: number, high: number): RatioFinding => ({
  estimate,
  interval: { low, high, level: 0.95, covers: 'within-run', n: 6 },
  direction: high < 1 ? 'lower' : low > 1 ? 'higher' : 'within-noise',
});

/** A variant whose deadlocks pass the threshold from `from` threads, at `firstShare` errors a transaction. */
function variant(name: string, from: number, firstShare: number): Variant {
  const point = (threads: number) => ({
    threads,
    tps: { value: 100, interval: null },
    qps: { value: 2000, interval: null },
    latency: { value: 10, interval: null },
    failed: false,
    leftOut: false,
    clientBound: '',
  });
  const dead = (threads: number, perTransaction: number) => ({
    threads,
    kind: 'deadlocks' as const,
    what: 'ran with errors: ignored SQL errors',
    errors: 13,
    perTransaction,
    reconnects: 0,
    error: null,
  });
  return {
    variant: name,
    points: [8, 64, 256, 1024].map((t) => ({ ...point(t), unsteady: [] })),
    peakThreads: 64,
    peakTps: 100,
    fallOffThreads: 256,
    fallOff: withinRun(0.64, 0.48, 0.87),
    lastShareOfPeak: 0.3,
    errorPoints: [...(from <= 64 ? [dead(64, firstShare)] : []), dead(256, 0.09), dead(1024, 0.7)],
  };
}

function findings(): ThreadSweepFindings {
  return {
    kind: 'thread-sweep',
    sweeps: [
      {
        label: 'write-only',
        queriesPerTransaction: 6,
        latencyPercentile: 95,
        variants: [variant('a', 64, 0.0015), variant('b', 64, 0.001003), variant('c', 256, 0), variant('d', 256, 0)],
        unscored: [],
        scores: [],
      },
    ],
    threadCounts: [8, 64, 256, 1024],
    commits: { committing: ['write-only'], notCommitting: [] },
    identical: [],
    runOrder: null,
    trend: null,
    overall: [
      { variant: 'a', score: 100 },
      { variant: 'b', score: 80 },
    ],
    ranking: { best: 'a', second: 'b', ratio: withinRun(1.25, 1.2, 1.3), repeatsToResolve: null },
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

describe("S2's wording", () => {
  it('says per variant from which thread count deadlocks pass the threshold', () => {
    // Act
    const lines = threadSweepSentences(findings()).join('\n');
    // Assert: a and b from 64, c and d only from 256; not "from 64 threads for every variant"
    expect(lines).toContain('write-only from 64 (a, b) / 256 (c, d) threads');
    expect(lines).not.toContain('every variant');
  });

  it('prints a point just over the threshold with the digit that shows it is over', () => {
    // Act
    const section = threadSweepSection(findings());
    const errorTable = section.tables.find((t) => t.title === 'Points with errors')!;
    // Assert: 0.1003 per 100 is above 0.1, so it does not print as 0.10
    const cells = errorTable.rows.filter((r) => r[1] === 'b' && r[2] === '64').map((r) => r[5]);
    expect(cells).toEqual(['0.1003']);
  });

  it('titles its charts with what the error markers are, not a colour they do not have', () => {
    // Act
    const charts = threadSweepSection(findings()).answer!.charts;
    // Assert: the error points are larger markers in the variant's own colour
    expect(charts.map((c) => c.title)).toEqual([
      'write-only: TPS by threads (larger markers: points with errors)',
      'write-only: QPS by threads (larger markers: points with errors)',
    ]);
  });

  it('says what the fall-off interval is when the table prints one from a single repeat', () => {
    // Act
    const table = threadSweepSection(findings()).tables.find((t) => t.title === 'Peak and fall-off (TPS)')!;
    // Assert: the cell carries an interval from one repeat, and the note says what it is
    expect(table.rows[0]![5]).toContain('(48%–87%)');
    expect(table.notes!.join(' ')).not.toContain('only from 2+ repeats');
    expect(table.notes!.join(' ')).toContain('marked *, from batch means of one run’s intervals');
  });

  it('gives the ratio without a direction word or a within-run interval where one repeat cannot judge it', () => {
    // Act
    const lines = threadSweepSentences(findings());
    // Assert: "not judged" is never next to "better/worse in this run"
    const unjudged = lines.filter((l) => /not judged|within-run intervals only|cannot resolve/.test(l));
    expect(unjudged.length).toBe(2);
    for (const l of unjudged) expect(l).not.toMatch(/better|worse|ranks above/);
    expect(unjudged[0]).toContain(
      "a has the highest score in this run, 125.0% of b's (the next); one repeat cannot resolve a ranking",
    );
    expect(unjudged[0]).not.toContain('120.0%');
    expect(unjudged[1]).toContain('falls to 64% (48%–87%)* of the peak at 256');
  });
});
