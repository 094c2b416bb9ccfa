/**
 * A step's server metrics: CloudWatch AWS/RDS per instance (AWS/EC2 for self-managed servers) (GetMetricData) and, when
 * the variant has Performance Insights, its DB load by wait event and OS CPU (GetResourceMetrics), with how many
 * datapoints each window should have and how many arrived (late publication, MetricWindowCount).
 *
 * API fields used, as named in the botocore models monitoring/2010-08-01 and pi/2018-02-27
 * service-2.json and the AWS docs cited inline.
 */
import { GetMetricDataCommand, type MetricDataQuery, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { GetResourceMetricsCommand } from '@aws-sdk/client-pi';
import type {
  CellResources,
  Endpoint,
  MetricsWindow,
  MetricWindowCount,
  RunContext,
  ServerMetricsCollection,
} from '../../backend';
import { SERVER_METRICS, type ServerMetricName, type ServerMetricRow } from '../../lake/rows';
import type { CellPlan } from '../../plan/types';
import { call } from './aws-errors';
import { chunk } from './batches';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { describeClusterInstances, describeInstance } from './teardown';
import { cellEngineOf } from './cluster';
import { ENGINES, type EngineKind } from '../../aurora/engines';
import type { MetricFamily } from '../../metrics/catalogue';
import { ec2Sources, familyMetrics, forwardingOf, groupMetrics } from '../../metrics/lists';

/**
 * Write forwarding's metrics per engine and role, counted in the window's completeness and not
 * (the catalogue cites the Aurora User Guide pages for both engines).
 */
interface ForwardingMetrics {
  readonly writer: readonly ServerMetricName[];
  readonly reader: readonly ServerMetricName[];
  readonly writerLatency: readonly ServerMetricName[];
  readonly readerLatency: readonly ServerMetricName[];
}
const forwardingOfEngine = (engine: 'aurora-mysql' | 'aurora-postgresql'): ForwardingMetrics => ({
  writer: forwardingOf(engine, 'writer', 'counted'),
  reader: forwardingOf(engine, 'reader', 'counted'),
  writerLatency: forwardingOf(engine, 'writer', 'collected'),
  readerLatency: forwardingOf(engine, 'reader', 'collected'),
});
const AURORA_MYSQL_FORWARDING = forwardingOfEngine('aurora-mysql');
const AURORA_POSTGRESQL_FORWARDING = forwardingOfEngine('aurora-postgresql');

/**
 * The write-forwarding metrics of a cell's engine, or none when it has no local write forwarding.
 * @internal exported for its tests
 */
export function forwardingMetrics(engine: EngineKind): ForwardingMetrics | undefined {
  return engine === 'aurora-mysql'
    ? AURORA_MYSQL_FORWARDING
    : engine === 'aurora-postgresql'
      ? AURORA_POSTGRESQL_FORWARDING
      : undefined;
}

/**
 * Per engine family, the instance metrics counted in completeness and the ones only collected: the
 * latencies and memory are published on the same schedule as the counted ones, which say whether
 * the window is complete.
 */
const familyLists = (family: MetricFamily) => ({
  base: familyMetrics(family, 'counted'),
  extra: familyMetrics(family, 'collected'),
});
const AURORA_MYSQL = familyLists('aurora-mysql');
const AURORA_POSTGRESQL = familyLists('aurora-postgresql');
const RDS_INSTANCE = familyLists('rds');

/**
 * The CloudWatch metrics an instance of the engine publishes: counted
 * toward completeness, collected only, and the replica lag a reader has.
 * @internal exported for its tests
 */
export function engineMetrics(kind: EngineKind): {
  readonly base: readonly ServerMetricName[];
  readonly extra: readonly ServerMetricName[];
  readonly replicaLag: ServerMetricName;
} {
  switch (ENGINES[kind].topology === 'instance' ? 'rds' : kind) {
    case 'rds':
      return { ...RDS_INSTANCE, replicaLag: 'ReplicaLag' };
    case 'aurora-postgresql':
      return { ...AURORA_POSTGRESQL, replicaLag: 'AuroraReplicaLag' };
    default:
      return { ...AURORA_MYSQL, replicaLag: 'AuroraReplicaLag' };
  }
}

/**
 * A self-managed server's EC2 instance (namespace AWS/EC2, dimension InstanceId; EC2 User Guide,
 * "List the available CloudWatch metrics for your instances", viewing_metrics_with_cloudwatch.md):
 * CPUUtilization (Percent); NetworkIn/NetworkOut, "the number of bytes received/sent during the
 * period ... If you have detailed (one-minute) monitoring, divide it by 60"; and for Nitro-based
 * instances EBSReadOps/EBSWriteOps, completed operations in the period ("divide the total
 * operations in the period by the number of seconds in that period"). The servers are launched
 * with detailed monitoring (self-managed-servers.ts), so the 60 s Sum divided by 60 is the rate the
 * RDS names below carry. The EBS counts exist on Nitro-based types only, so they are collected but
 * not counted in completeness.
 *
 * Memory comes from inside the instance: the CloudWatch agent (client/server-metrics-agent.sh with
 * client/cloudwatch-agent.json) publishes mem_available, "the amount of memory that is available and
 * can be given instantly to processes", unit Bytes (CloudWatch User Guide,
 * metrics-collected-by-CloudWatch-agent.md), in the namespace CWAgent. A query matches only a metric
 * with exactly its dimensions; the agent adds the hostname as a dimension unless omit_hostname is
 * true, and append_dimensions adds only the EC2 dimensions it lists
 * (CloudWatch-Agent-Configuration-File-Details.md). The config sets omit_hostname and lists
 * InstanceId alone, so InstanceId is the whole dimension set here. Bytes are what the reports'
 * FreeableMemory carries (the RDS metric's unit), so the value is taken as is. An agent that failed to
 * install leaves the series empty, so it is not counted in completeness. Connections and replica lag
 * are not collected (self-managed-servers.ts SERVER_METRICS_UNAVAILABLE says so in the cell's notes).
 */
/** @internal exported for its tests */
export const EC2_SERVER_METRICS: readonly {
  readonly metric: ServerMetricName;
  readonly namespace: 'AWS/EC2' | 'CWAgent';
  readonly ec2Name: string;
  readonly stat: 'Average' | 'Sum';
  readonly counted: boolean;
}[] = ec2Sources().map(({ metric, ec2 }) => ({
  metric,
  namespace: ec2.namespace,
  ec2Name: ec2.name,
  stat: ec2.stat,
  counted: ec2.counting === 'counted',
}));

/**
 * An Aurora Serverless v2 instance's capacity (see SERVER_METRICS), per instance and minute like the
 * base metrics; collected beside them, not counted in the window's completeness (the base metrics
 * are published on the same schedule and say whether it is complete).
 */
/** @internal exported for its tests */
export const SERVERLESS_METRICS: readonly ServerMetricName[] = groupMetrics('serverless');
/**
 * Aurora's cluster-level storage I/O (see SERVER_METRICS): "the number of billed read I/O
 * operations from a cluster volume within a 5-minute interval" (Aurora User Guide, "Cluster-level
 * metrics for Amazon Aurora"), one datapoint per cluster and interval, published after it closes.
 */
/** @internal exported for its tests */
export const CLUSTER_VOLUME_METRICS: readonly ServerMetricName[] = groupMetrics('cluster-volume');
/** Aurora's interval for them (AwsBackendConfig.volumeMetricsPeriodS replaces it in the rehearsal only). */
const CLUSTER_VOLUME_PERIOD_S = 300;

/**
 * The 5-minute intervals a step overlaps, on CloudWatch's period boundaries: the last one covers the
 * step's end, so its datapoint exists only once that interval has closed.
 * @internal exported for its tests
 */
export function volumeWindow(startIso: string, endIso: string, periodS: number): { start: Date; end: Date } {
  const period = periodS * 1000;
  const start = Math.floor(Date.parse(startIso) / period) * period;
  const end = Math.max(start + period, Math.ceil(Date.parse(endIso) / period) * period);
  return { start: new Date(start), end: new Date(end) };
}

/** GetMetricData takes at most 500 MetricDataQuery per request (CloudWatch API reference). */
const MAX_METRIC_QUERIES = 500;
/**
 * AWS/RDS metrics are standard resolution: 60 s is the finest period (MetricStat.Period docs).
 * AwsBackendConfig.metricsPeriodS replaces it in the rehearsal only.
 */
const CLOUDWATCH_PERIOD_S = 60;
/** Top wait events per instance in the PI breakdown (DimensionGroup.Limit, 1..25). */
const PI_WAIT_EVENT_LIMIT = 10;
/** The PI series every period of a window has a datapoint of (the per-wait-event ones need not). */
const PI_TOTAL_METRICS = ['db.load.avg', 'os.cpuUtilization.total.avg'] as const;

/** Datapoints of `periodS` seconds a window [start, end) holds: what a fully published window has. */
function windowDatapoints(start: Date, end: Date, periodS: number): number {
  return Math.max(0, Math.floor((end.getTime() - start.getTime()) / (periodS * 1000)));
}

export interface ServerMetricsOptions {
  readonly clients: Pick<AwsClients, 'cloudwatch' | 'pi' | 'rds'>;
  readonly config: Pick<AwsBackendConfig, 'piPeriodS' | 'volumeMetricsPeriodS' | 'metricsPeriodS'>;
}

/** Collecting a step window's server metrics (CloudWatch, Performance Insights). */
export class ServerMetrics {
  private readonly config: Pick<AwsBackendConfig, 'piPeriodS' | 'volumeMetricsPeriodS' | 'metricsPeriodS'>;
  private readonly clients: Pick<AwsClients, 'cloudwatch' | 'pi' | 'rds'>;

  constructor(options: ServerMetricsOptions) {
    this.config = options.config;
    this.clients = options.clients;
  }

  async collectServerMetrics(
    run: RunContext,
    cell: CellPlan,
    resources: CellResources,
    window: MetricsWindow,
  ): Promise<ServerMetricsCollection> {
    const endpoints = [...(resources.writer ? [resources.writer] : []), ...resources.readers];
    if (endpoints.length === 0) return { rows: [], windows: [] };
    const periodS = this.config.metricsPeriodS ?? CLOUDWATCH_PERIOD_S;
    const { start, end } = cloudWatchWindow(window.start, window.end, periodS);
    const base = {
      run_id: run.runId,
      cell_id: cell.cellId,
      variant: cell.variant.name,
      step_id: window.stepId,
      dt: run.dt,
    };
    const engine = cellEngineOf(run, cell);
    const metricsOf = engineMetrics(engine.kind);
    const wf = cell.variant.writeForwarding?.enabled === true ? forwardingMetrics(engine.kind) : undefined;

    interface Series {
      readonly instance: { readonly instanceId: string; readonly role: Endpoint['role'] | 'cluster' };
      readonly metric: ServerMetricName;
      readonly counted: boolean;
      /** CloudWatch dimension: the instance's, or the cluster's for the cluster volume metrics. */
      readonly volume?: true;
      readonly dimension?: 'DBClusterIdentifier';
      /**
       * A self-managed server's instance metric: its namespace (AWS/EC2 or the
       * agent's CWAgent), name and statistic (a Sum is divided by the period).
       */
      readonly ec2?: {
        readonly namespace: 'AWS/EC2' | 'CWAgent';
        readonly name: string;
        readonly stat: 'Average' | 'Sum';
      };
    }
    const wantedSeries: Series[] = [];
    const onEc2 = ENGINES[engine.kind].topology === 'ec2';
    if (onEc2) {
      for (const ep of endpoints)
        for (const m of EC2_SERVER_METRICS)
          wantedSeries.push({
            instance: ep,
            metric: m.metric,
            counted: m.counted,
            ec2: { namespace: m.namespace, name: m.ec2Name, stat: m.stat },
          });
    }
    for (const ep of onEc2 ? [] : endpoints) {
      const metrics = [
        ...metricsOf.base,
        ...(ep.role === 'reader' ? [metricsOf.replicaLag] : []),
        ...(wf ? (ep.role === 'writer' ? wf.writer : wf.reader) : []),
      ];
      for (const metric of metrics) wantedSeries.push({ instance: ep, metric, counted: true });
      const capacity = cell.variant.serverless !== undefined ? SERVERLESS_METRICS : [];
      for (const metric of [
        ...metricsOf.extra,
        ...capacity,
        ...(wf ? (ep.role === 'writer' ? wf.writerLatency : wf.readerLatency) : []),
      ]) {
        wantedSeries.push({ instance: ep, metric, counted: false });
      }
    }
    // Aurora clusters (not RDS instances): the volume's I/O, 5-minute datapoints over the intervals the step overlaps.
    if (ENGINES[engine.kind].topology === 'cluster' && resources.clusterId !== '') {
      for (const metric of CLUSTER_VOLUME_METRICS)
        wantedSeries.push({
          instance: { instanceId: resources.clusterId, role: 'cluster' },
          metric,
          // Counted: without the interval covering the step's end, I/O per transaction comes out low.
          counted: true,
          dimension: 'DBClusterIdentifier',
          volume: true,
        });
    }
    const rows: ServerMetricRow[] = [];
    // GetMetricData's StartTime is inclusive and EndTime exclusive, both on whole minutes here: one
    // datapoint per minute per series is what a fully published window holds.
    const volumePeriodS = this.config.volumeMetricsPeriodS ?? CLUSTER_VOLUME_PERIOD_S;
    const volume = volumeWindow(window.start, window.end, volumePeriodS);
    const rangeOf = (s: Series) => (s.volume ? volume : { start, end });
    const received = new Map<string, number>();
    const numbered = wantedSeries.map((s, i) => ({ ...s, id: `m${i}` }));
    // One GetMetricData range per request: the minute series', then the volume's 5-minute intervals.
    const batches = [
      ...chunk(
        numbered.filter((s) => !s.volume),
        MAX_METRIC_QUERIES,
      ),
      ...chunk(
        numbered.filter((s) => s.volume),
        MAX_METRIC_QUERIES,
      ),
    ];
    for (const batch of batches) {
      const range = rangeOf(batch[0]!);
      const queries: MetricDataQuery[] = batch.map((s) => ({
        Id: s.id,
        MetricStat: s.ec2
          ? {
              Metric: {
                Namespace: s.ec2.namespace,
                MetricName: s.ec2.name,
                Dimensions: [{ Name: 'InstanceId', Value: s.instance.instanceId }],
              },
              Period: periodS,
              Stat: s.ec2.stat,
            }
          : {
              Metric: {
                Namespace: 'AWS/RDS',
                MetricName: s.metric,
                Dimensions: [{ Name: s.dimension ?? 'DBInstanceIdentifier', Value: s.instance.instanceId }],
              },
              // A count per 5 minutes: the 5-minute Sum is the published value.
              Period: s.dimension === 'DBClusterIdentifier' ? volumePeriodS : periodS,
              Stat: s.dimension === 'DBClusterIdentifier' ? 'Sum' : 'Average',
            },
        ReturnData: true,
      }));
      const results: MetricDataResult[] = [];
      let token: string | undefined;
      do {
        const out = await call('CloudWatch GetMetricData', () =>
          this.clients.cloudwatch.send(
            new GetMetricDataCommand({
              MetricDataQueries: queries,
              StartTime: range.start,
              EndTime: range.end,
              ScanBy: 'TimestampAscending',
              ...(token ? { NextToken: token } : {}),
            }),
          ),
        );
        results.push(...(out.MetricDataResults ?? []));
        token = out.NextToken;
      } while (token);
      for (const r of results) {
        const series = batch.find((s) => s.id === r.Id);
        if (!series) continue;
        (r.Timestamps ?? []).forEach((ts, k) => {
          const value = r.Values?.[k];
          if (value === undefined || !Number.isFinite(value)) return;
          rows.push({
            ...base,
            instance_id: series.instance.instanceId,
            role: series.instance.role,
            metric: series.metric,
            ts: new Date(ts).toISOString(),
            // An EC2 count or byte Sum per minute, as the per-second rate the name carries.
            value: series.ec2?.stat === 'Sum' ? value / periodS : value,
            unit: SERVER_METRICS[series.metric],
            source: 'cloudwatch',
          });
          received.set(series.id, (received.get(series.id) ?? 0) + 1);
        });
      }
    }
    const windows: MetricWindowCount[] = wantedSeries
      .flatMap((s, i) => (s.counted ? [{ s, i, range: rangeOf(s) }] : []))
      .map(({ s, i, range }) => {
        const seriesPeriodS = s.volume ? volumePeriodS : periodS;
        return {
          instanceId: s.instance.instanceId,
          role: s.instance.role,
          metric: s.metric,
          source: 'cloudwatch',
          start: range.start.toISOString(),
          end: range.end.toISOString(),
          periodS: seriesPeriodS,
          expected: windowDatapoints(range.start, range.end, seriesPeriodS),
          received: received.get(`m${i}`) ?? 0,
        };
      });

    // Performance Insights is an RDS feature: a self-managed server has none.
    if (cell.variant.performanceInsights && !onEc2) {
      const pi = await this.collectPerformanceInsights(resources, endpoints, start, end, base);
      rows.push(...pi.rows);
      windows.push(...pi.windows);
    }
    rows.sort(
      (a, b) =>
        a.instance_id.localeCompare(b.instance_id) || a.metric.localeCompare(b.metric) || a.ts.localeCompare(b.ts),
    );
    return { rows, windows };
  }

  /**
   * Performance Insights GetResourceMetrics per instance (Identifier = DbiResourceId): db.load.avg
   * grouped by db.wait_event (the response also carries the ungrouped total) and
   * os.cpuUtilization.total.avg (RDS User Guide, "Performance Insights counter metrics").
   * Rows: metric "db.load.avg" (total) and "db.load.avg:<wait event name>", unit "Sessions" (AAS).
   * Completeness is counted for the two totals: a wait event is absent from a period it did not occur in.
   */
  private async collectPerformanceInsights(
    resources: CellResources,
    endpoints: readonly Endpoint[],
    start: Date,
    end: Date,
    base: Pick<ServerMetricRow, 'run_id' | 'cell_id' | 'variant' | 'step_id' | 'dt'>,
  ): Promise<{ rows: ServerMetricRow[]; windows: MetricWindowCount[] }> {
    const rows: ServerMetricRow[] = [];
    const windows: MetricWindowCount[] = [];
    const expected = windowDatapoints(start, end, this.config.piPeriodS);
    let dbiIds = new Map<string, string | undefined>(
      endpoints.map((ep) => [ep.instanceId, resources.backendState[`dbi:${ep.instanceId}`]]),
    );
    if ([...dbiIds.values()].some((v) => !v)) {
      const inCluster = await describeClusterInstances(this.clients, resources.clusterId);
      const instances =
        inCluster.length > 0
          ? inCluster
          : (await Promise.all(endpoints.map((ep) => describeInstance(this.clients, ep.instanceId)))).filter(
              (i) => i !== undefined,
            );
      dbiIds = new Map(
        endpoints.map((ep) => [
          ep.instanceId,
          instances.find((i) => i.DBInstanceIdentifier === ep.instanceId)?.DbiResourceId,
        ]),
      );
    }
    for (const ep of endpoints) {
      const received = new Map<string, number>(PI_TOTAL_METRICS.map((m) => [m, 0]));
      const identifier = dbiIds.get(ep.instanceId);
      if (identifier) {
        let token: string | undefined;
        do {
          const out = await call(`PI GetResourceMetrics ${ep.instanceId}`, () =>
            this.clients.pi.send(
              new GetResourceMetricsCommand({
                ServiceType: 'RDS',
                Identifier: identifier,
                StartTime: start,
                EndTime: end,
                PeriodInSeconds: this.config.piPeriodS,
                MetricQueries: [
                  { Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event', Limit: PI_WAIT_EVENT_LIMIT } },
                  { Metric: 'os.cpuUtilization.total.avg' },
                ],
                ...(token ? { NextToken: token } : {}),
              }),
            ),
          );
          for (const m of out.MetricList ?? []) {
            const metricName = m.Key?.Metric;
            if (!metricName) continue;
            const waitEvent = m.Key?.Dimensions?.['db.wait_event.name'];
            const metric = waitEvent ? `${metricName}:${waitEvent}` : metricName;
            const unit = metricName.startsWith('db.load')
              ? 'Sessions'
              : metricName.startsWith('os.cpuUtilization')
                ? 'Percent'
                : 'None';
            for (const p of m.DataPoints ?? []) {
              if (p.Timestamp === undefined || p.Value === undefined || !Number.isFinite(p.Value)) continue;
              rows.push({
                ...base,
                instance_id: ep.instanceId,
                role: ep.role,
                metric,
                ts: new Date(p.Timestamp).toISOString(),
                value: p.Value,
                unit,
                source: 'pi',
              });
              if (received.has(metric)) received.set(metric, received.get(metric)! + 1);
            }
          }
          token = out.NextToken;
        } while (token);
      }
      for (const metric of PI_TOTAL_METRICS) {
        windows.push({
          instanceId: ep.instanceId,
          role: ep.role,
          metric,
          source: 'pi',
          start: start.toISOString(),
          end: end.toISOString(),
          periodS: this.config.piPeriodS,
          expected,
          received: received.get(metric)!,
        });
      }
    }
    return { rows, windows };
  }
}

/**
 * The GetMetricData time range for a step: only the whole minutes inside it, so a partly idle first
 * or last minute (warm-up, ramp-down, the minutes around the step) does not pull the averages down —
 * S4's CPU- and network-bound verdicts compare them with 90% thresholds. A step shorter than two
 * minutes keeps its enclosing minutes, the only data there is. Minutes CloudWatch has not published
 * yet are absent: the window's counts say so (MetricWindowCount), and the workflow collects it again
 * once metricsPublishDelayS has passed.
 * @internal exported for its tests
 */
export function cloudWatchWindow(
  startIso: string,
  endIso: string,
  periodS = CLOUDWATCH_PERIOD_S,
): { start: Date; end: Date } {
  const minute = periodS * 1000;
  const startMs = Date.parse(startIso);
  const endMs = Date.parse(endIso);
  const inner = { start: Math.ceil(startMs / minute) * minute, end: Math.floor(endMs / minute) * minute };
  if (inner.end - inner.start >= minute) return { start: new Date(inner.start), end: new Date(inner.end) };
  return { start: new Date(Math.floor(startMs / minute) * minute), end: new Date(Math.ceil(endMs / minute) * minute) };
}
