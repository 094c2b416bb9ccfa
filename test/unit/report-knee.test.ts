import { findKnee } from '../../core/report/knee';

describe("S5's saturation knee", () => {
  it('finds the last offered rate achieved still tracks, and the capacity plateau', () => {
    // Arrange
    const points = [
      { offered: 1000, achieved: 1000, p99Ms: 2 },
      { offered: 2000, achieved: 1990, p99Ms: 2 },
      { offered: 4000, achieved: 3980, p99Ms: 3 },
      { offered: 8000, achieved: 6000, p99Ms: 20 },
      { offered: 16000, achieved: 6100, p99Ms: 40 },
      { offered: 0, achieved: 6200, p99Ms: 50 },
    ];
    // Act
    const knee = findKnee(points);
    // Assert
    expect(knee).toMatchObject({
      kneeOffered: 4000,
      kneeAchieved: 3980,
      saturatedAtOffered: 8000,
      reason: 'throughput',
      capacity: 6100,
      points: 5,
    });
    expect(knee.summary).toMatch(/knee at 4,000\/s offered/);
  });

  it('treats a p99 jump as saturation even when throughput keeps up', () => {
    // Act
    const knee = findKnee([
      { offered: 100, achieved: 100, p99Ms: 5 },
      { offered: 200, achieved: 200, p99Ms: 7 },
      { offered: 400, achieved: 399, p99Ms: 25 },
    ]);
    // Assert
    expect(knee).toMatchObject({ kneeOffered: 200, saturatedAtOffered: 400, reason: 'latency', latencyLimitMs: 15 });
  });

  it('does not call a p99 of a few ms saturated for tripling a sub-millisecond baseline (absolute floor)', () => {
    // Arrange: 0.8 ms at the lowest rate, 3 ms at 99% tracking: 3.75x the baseline, under the 10 ms floor
    const points = [
      { offered: 1000, achieved: 1000, p99Ms: 0.8 },
      { offered: 2000, achieved: 1990, p99Ms: 3 },
      { offered: 4000, achieved: 3960, p99Ms: 9 },
      { offered: 8000, achieved: 7950, p99Ms: 40 },
    ];
    // Act
    const withFloor = findKnee(points);
    const relativeOnly = findKnee(points, { latencyFloorMs: 0 });
    // Assert
    expect(withFloor).toMatchObject({
      kneeOffered: 4000,
      saturatedAtOffered: 8000,
      reason: 'latency',
      latencyLimitMs: 10,
    });
    expect(relativeOnly).toMatchObject({ kneeOffered: 1000, saturatedAtOffered: 2000, reason: 'latency' });
  });

  it('an overloaded point (event queue full) is saturation, drawn at its achieved rate, counted in capacity', () => {
    // Arrange: the queue filled at 48k offered after achieving 30.5k/s
    const points = [
      { offered: 16000, achieved: 16000, p99Ms: 2 },
      { offered: 24000, achieved: 23900, p99Ms: 3 },
      { offered: 48000, achieved: 30500, p99Ms: 900, overloaded: true },
      { offered: 96000, achieved: 29800, p99Ms: 1500, overloaded: true },
    ];
    // Act
    const knee = findKnee(points);
    // Assert
    expect(knee).toMatchObject({
      kneeOffered: 24000,
      saturatedAtOffered: 48000,
      reason: 'overloaded',
      firstOverloadedOffered: 48000,
      capacity: 30500,
    });
    expect(knee.summary).toMatch(/event queue filled; achieved 30,500\/s/);
  });

  it('judges a system that lags at every rate against its own baseline, and says so', () => {
    // Arrange: ~17% below target throughout (the original study's RMW case), never saturating
    const points = [200, 400, 800].map((offered) => ({ offered, achieved: 0.83 * offered, p99Ms: 1 }));
    // Act
    const knee = findKnee(points);
    // Assert
    expect(knee.saturatedAtOffered).toBeNull();
    expect(knee.baselineEfficiency).toBeCloseTo(0.83, 10);
    expect(knee.summary).toMatch(/not saturated.*only 83% of offered/);
  });

  it('marks a failed step as saturation and copes with no usable point', () => {
    // Act
    const failed = findKnee([
      { offered: 100, achieved: 100, p99Ms: 1 },
      { offered: 200, achieved: null, p99Ms: null },
    ]);
    const empty = findKnee([{ offered: 0, achieved: 10, p99Ms: 1 }]);
    // Assert
    expect(failed).toMatchObject({ kneeOffered: 100, saturatedAtOffered: 200, reason: 'failed' });
    expect(empty).toMatchObject({ kneeOffered: null, points: 0 });
  });
});
