/**
 * An Aurora cluster volume's I/O as the rehearsal's CloudWatch publishes it.
 * Aurora publishes billed I/O per 5-minute interval, once the interval has closed.
 * See Aurora User Guide, "Cluster-level metrics for Amazon Aurora".
 * The rehearsal does the same on a shorter interval, publishing each datapoint `lagS` after it closes.
 *
 * The counts sum the samplers' read and write IOPS over the cluster's instances.
 * Each rehearsal server has its own files, so the figure proves the API path, not what Aurora would bill.
 */
import type { MetricDatum } from '@aws-sdk/client-cloudwatch';
import type { MetricSample } from '../backends/local/metrics';

const VOLUME_METRIC_OF: Readonly<Record<string, 'VolumeReadIOPs' | 'VolumeWriteIOPs'>> = {
  ReadIOPS: 'VolumeReadIOPs',
  WriteIOPS: 'VolumeWriteIOPs',
};

interface Interval {
  readonly clusterId: string;
  readonly startMs: number;
  readonly counts: Map<'VolumeReadIOPs' | 'VolumeWriteIOPs', number>;
}

export class VolumeIntervals {
  private readonly open = new Map<string, Interval>();

  constructor(
    private readonly periodS: number,
    private readonly lagS: number,
  ) {}

  /** Counts one sample of an instance of the cluster. Other metrics are ignored. */
  add(clusterId: string, s: MetricSample, sampleIntervalS: number): void {
    const metric = VOLUME_METRIC_OF[s.metric];
    if (metric === undefined) return;
    const period = this.periodS * 1000;
    const startMs = Math.floor(Date.parse(s.ts) / period) * period;
    const key = `${clusterId} ${startMs}`;
    let interval = this.open.get(key);
    if (!interval) {
      interval = { clusterId, startMs, counts: new Map() };
      this.open.set(key, interval);
    }
    interval.counts.set(metric, (interval.counts.get(metric) ?? 0) + s.value * sampleIntervalS);
  }

  /** The datapoints of the intervals that closed at least lagS before nowMs, each given once. */
  due(nowMs: number): MetricDatum[] {
    const data: MetricDatum[] = [];
    for (const [key, interval] of this.open) {
      if (interval.startMs + (this.periodS + this.lagS) * 1000 > nowMs) continue;
      this.open.delete(key);
      for (const [metric, count] of interval.counts)
        data.push({
          MetricName: metric,
          Dimensions: [{ Name: 'DBClusterIdentifier', Value: interval.clusterId }],
          Timestamp: new Date(interval.startMs),
          Value: Math.round(count),
          Unit: 'Count',
        });
    }
    return data;
  }
}
