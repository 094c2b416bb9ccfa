import { analyzeSweep } from '../../core/report/sweep';

describe('thread-sweep findings', () => {
  it('finds the peak, the fall-off past it, and marks connection errors', () => {
    // Arrange: rises to 512 threads, falls past it, connection errors at 2048 (S2's findings)
    const tp = (
      threads: number,
      throughput: number | null,
      extra: Partial<{ failed: boolean; errors: number; reconnects: number; error: string }> = {},
    ) => ({
      threads,
      throughput,
      failed: false,
      errors: 0,
      reconnects: 0,
      ...extra,
    });
    const points = [
      tp(1024, 880),
      tp(2, 100),
      tp(512, 1000),
      tp(256, 950),
      tp(2048, null, { failed: true, error: 'Too many connections' }),
      tp(3000, 400, { errors: 12 }),
    ];
    // Act
    const f = analyzeSweep(points);
    // Assert
    expect(f.peakThreads).toBe(512);
    expect(f.fallOffThreads).toBe(1024); // 880 < 90% of 1000
    expect(f.lastShareOfPeak).toBeCloseTo(0.4, 10);
    expect(f.errorPoints.map((p) => [p.threads, p.failed, p.errors, p.error])).toEqual([
      [2048, true, 0, 'Too many connections'],
      [3000, false, 12, null],
    ]);
    expect(f.firstErrorThreads).toBe(2048);
    expect(f.summary).toBe(
      'peak at 512 threads; falls off from 1024 threads (40% of peak at 3000); errors from 2048 threads',
    );
  });

  it('reports no fall-off when throughput holds within 10% of the peak', () => {
    // Act
    const f = analyzeSweep([
      { threads: 8, throughput: 100, failed: false, errors: 0, reconnects: 0 },
      { threads: 16, throughput: 120, failed: false, errors: 0, reconnects: 0 },
      { threads: 32, throughput: 110, failed: false, errors: 0, reconnects: 0 },
    ]);
    // Assert
    expect(f).toMatchObject({ peakThreads: 16, fallOffThreads: null, firstErrorThreads: null });
  });
});
