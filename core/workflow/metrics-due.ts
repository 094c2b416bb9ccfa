/**
 * When a step's server metrics are all published, so that the cell's late collection
 * (collectLateMetricsTask) reads them then: the end of the last period any of its windows asked for,
 * plus the backend's publishing delay. A minute's datapoint comes after that minute; an Aurora
 * volume's I/O comes per 5-minute interval, only once the interval that covers the step's end has
 * closed (core/backends/aws/metrics.ts), which can be up to 5 minutes after the step.
 */
import type { MetricsWindow, MetricWindowCount } from '../backend';

export function metricsDueAt(
  window: Pick<MetricsWindow, 'end'>,
  windows: readonly Pick<MetricWindowCount, 'end'>[],
  publishDelayS: number,
): string {
  const lastEnd = Math.max(Date.parse(window.end), ...windows.map((w) => Date.parse(w.end)));
  return new Date(lastEnd + publishDelayS * 1000).toISOString();
}
