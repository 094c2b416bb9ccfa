import { ServerMetrics, type ServerMetricsOptions } from '../metrics';
import type { BackendOperations } from './compose';

export function serverMetricsPart(options: ServerMetricsOptions): Pick<BackendOperations, 'collectServerMetrics'> {
  const metrics = new ServerMetrics(options);
  return {
    collectServerMetrics: (run, cell, resources, window) => metrics.collectServerMetrics(run, cell, resources, window),
  };
}
