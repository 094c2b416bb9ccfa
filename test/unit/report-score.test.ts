import { overallScores, sweepScores } from '../../core/report/score';

describe("S2's 100-point score", () => {
  it('gives the best target 100 and the others their share of the best mean QPS + mean TPS', () => {
    // Arrange: the original study's example, 1000 vs 900
    const series = {
      percona: [
        { threads: 2, tps: 10, qps: 190 },
        { threads: 4, tps: 30, qps: 770 },
      ],
      mysql: [
        { threads: 2, tps: 9, qps: 171 },
        { threads: 4, tps: 27, qps: 693 },
      ],
    };
    // Act
    const scores = sweepScores(series);
    // Assert: percona 20 + 480 = 500; mysql 18 + 432 = 450
    expect(scores.map((s) => [s.target, s.sum, s.score])).toEqual([
      ['percona', 500, 100],
      ['mysql', 450, 90],
    ]);
  });

  it('counts a failed thread count as zero and lists it', () => {
    // Arrange: b cannot serve 3000 threads (connection limit)
    const series = new Map([
      [
        'a',
        [
          { threads: 1024, tps: 100, qps: 100 },
          { threads: 3000, tps: 100, qps: 100 },
        ],
      ],
      [
        'b',
        [
          { threads: 1024, tps: 100, qps: 100 },
          { threads: 3000, tps: null, qps: null },
        ],
      ],
    ]);
    // Act
    const scores = sweepScores(series);
    // Assert
    expect(scores[1]).toMatchObject({ target: 'b', score: 50, failedThreads: [3000] });
  });

  it('averages per-workload scores into an overall score', () => {
    // Act
    const overall = overallScores(
      new Map([
        ['rw', sweepScores({ a: [{ threads: 1, tps: 10, qps: 10 }], b: [{ threads: 1, tps: 5, qps: 5 }] })],
        ['ro', sweepScores({ a: [{ threads: 1, tps: 5, qps: 5 }], b: [{ threads: 1, tps: 10, qps: 10 }] })],
      ]),
    );
    // Assert
    expect(overall).toEqual([
      { target: 'a', score: 75, workloads: 2 },
      { target: 'b', score: 75, workloads: 2 },
    ]);
  });
});
