import {
  METRIC_CATALOGUE,
  type Counting,
  type MetricEntry,
  type MetricFamily,
  type ServerMetricName,
} from './catalogue';

const entries = Object.entries(METRIC_CATALOGUE) as [ServerMetricName, MetricEntry][];

/** Each metric's CloudWatch unit, keyed and ordered as the catalogue. */
export const METRIC_UNITS = Object.fromEntries(entries.map(([name, e]) => [name, e.unit])) as {
  readonly [K in ServerMetricName]: (typeof METRIC_CATALOGUE)[K]['unit'];
};

/** The per-instance metrics an engine family publishes with that counting, in catalogue order. */
export function familyMetrics(family: MetricFamily, counting: Counting): readonly ServerMetricName[] {
  return entries.filter(([, e]) => e.aws?.[family] === counting).map(([name]) => name);
}

/** An Aurora engine's write-forwarding metrics of a role and counting, in catalogue order. */
export function forwardingOf(
  engine: 'aurora-mysql' | 'aurora-postgresql',
  role: 'writer' | 'reader',
  counting: Counting,
): readonly ServerMetricName[] {
  return entries
    .filter(
      ([, e]) => e.forwarding?.engine === engine && e.forwarding.role === role && e.forwarding.counting === counting,
    )
    .map(([name]) => name);
}

/** The metrics the local backend cannot measure, with why. */
export const LOCAL_UNMEASURED: Readonly<Partial<Record<ServerMetricName, string>>> = Object.fromEntries(
  entries.flatMap(([name, e]) =>
    e.local !== undefined && 'unmeasured' in e.local ? [[name, e.local.unmeasured]] : [],
  ),
);

/** A server-metrics table's columns, in their order. */
export function reportColumns(table: 'latencies' | 'throughput'): readonly ServerMetricName[] {
  return entries
    .filter(([, e]) => e.report?.table === table)
    .sort(([, a], [, b]) => a.report!.column - b.report!.column)
    .map(([name]) => name);
}

/** The metrics of a Serverless v2 instance or of an Aurora cluster volume, in catalogue order. */
export function groupMetrics(group: 'serverless' | 'cluster-volume'): readonly ServerMetricName[] {
  return entries.filter(([, e]) => e.awsGroup === group).map(([name]) => name);
}

/** A self-managed server's EC2 sources, in the collector's order. */
export function ec2Sources(): readonly {
  readonly metric: ServerMetricName;
  readonly ec2: NonNullable<MetricEntry['ec2']>;
}[] {
  return entries
    .flatMap(([metric, e]) => (e.ec2 ? [{ metric, ec2: e.ec2 }] : []))
    .sort((a, b) => a.ec2.position - b.ec2.position);
}
