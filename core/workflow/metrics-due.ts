/**
 * When a step's server metrics are all published, so the cell's late collection reads them then.
 * A minute's datapoint comes after that minute.
 * An Aurora volume's I/O comes per 5-minute interval, once the interval covering the step's end has closed.
 * So it can come up to 5 minutes after the step.
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
