/**
 * When a step's late collection reads its server metrics (metricsDueAt): not before the datapoint of
 * the Aurora volume's interval that covers the step's end is published. Shown on AWS's periods and
 * on the rehearsal's publisher (core/rehearsal/volume-intervals.ts), which publishes an interval's
 * datapoint only once the interval has closed and its lag has passed.
 */
import { volumeWindow } from '../../core/backends/aws/metrics';
import { VolumeIntervals } from '../../core/rehearsal/volume-intervals';
import { metricsDueAt } from '../../core/workflow/metrics-due';

const iso = (ms: number) => new Date(ms).toISOString();

describe('metricsDueAt', () => {
  it("on AWS: waits for the end of the 5-minute interval covering the step's end, plus the delay", () => {
    // Arrange: a 3-minute step; its minute windows end at the next whole minute.
    const start = '2026-12-02T12:00:10.000Z';
    const end = '2026-12-02T12:03:10.000Z';
    const volume = volumeWindow(start, end, 300);

    // Act
    const due = metricsDueAt({ end }, [{ end: '2026-12-02T12:04:00.000Z' }, { end: volume.end.toISOString() }], 180);

    // Assert: the interval [12:00, 12:05) holds the step's end; its datapoint comes after 12:05.
    expect(volume).toEqual({ start: new Date('2026-12-02T12:00:00.000Z'), end: new Date('2026-12-02T12:05:00.000Z') });
    expect(due).toBe('2026-12-02T12:08:00.000Z');
  });

  it("in the rehearsal: the late collection finds the volume datapoint of the step's last interval published", () => {
    // Arrange: the rehearsal's 5-s intervals and 2-s lag (its metricsPublishDelayS is lag + 2); a
    // step whose last sample falls in the interval [12:00:00, 12:00:05).
    const periodS = 5;
    const lagS = 2;
    const intervals = new VolumeIntervals(periodS, lagS);
    const start = Date.parse('2026-12-02T11:59:58.000Z');
    const end = Date.parse('2026-12-02T12:00:01.500Z');
    intervals.add('c1', { instanceId: 'c1-w', role: 'writer', metric: 'WriteIOPS', ts: iso(end - 500), value: 30 }, 1);
    const volume = volumeWindow(iso(start), iso(end), periodS);

    // Act
    const due = Date.parse(metricsDueAt({ end: iso(end) }, [{ end: volume.end.toISOString() }], lagS + 2));
    const published = intervals.due(due);

    // Assert: due at the interval's end + lag + 2; then the datapoint is there, stamped at its start.
    expect(iso(due)).toBe('2026-12-02T12:00:09.000Z');
    expect(published).toEqual([
      {
        MetricName: 'VolumeWriteIOPs',
        Dimensions: [{ Name: 'DBClusterIdentifier', Value: 'c1' }],
        Timestamp: new Date('2026-12-02T12:00:00.000Z'),
        Value: 30,
        Unit: 'Count',
      },
    ]);
  });

  it('the rehearsal publishes no interval before it has closed and its lag has passed', () => {
    // Arrange
    const intervals = new VolumeIntervals(5, 2);
    const at = Date.parse('2026-12-02T12:00:04.000Z');
    intervals.add('c1', { instanceId: 'c1-w', role: 'writer', metric: 'ReadIOPS', ts: iso(at), value: 7 }, 1);
    intervals.add('c1', { instanceId: 'c1-w', role: 'writer', metric: 'CPUUtilization', ts: iso(at), value: 50 }, 1);

    // Act / Assert: the interval closes at 12:00:05, so nothing before 12:00:07, then once.
    expect(intervals.due(Date.parse('2026-12-02T12:00:06.999Z'))).toEqual([]);
    expect(intervals.due(Date.parse('2026-12-02T12:00:07.000Z')).map((d) => [d.MetricName, d.Value])).toEqual([
      ['VolumeReadIOPs', 7],
    ]);
    expect(intervals.due(Date.parse('2026-12-02T12:00:30.000Z'))).toEqual([]);
  });
});
