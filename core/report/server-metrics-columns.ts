import type { ServerMetricName } from '../metrics/catalogue';
import { reportColumns } from '../metrics/lists';

/** The server-metrics section's latency, I/O and memory columns, in order (from the metric catalogue). */
export const LATENCY_COLUMNS: readonly ServerMetricName[] = reportColumns('latencies');

/** Its statement-throughput and lock columns, in order. */
export const THROUGHPUT_COLUMNS: readonly ServerMetricName[] = reportColumns('throughput');
