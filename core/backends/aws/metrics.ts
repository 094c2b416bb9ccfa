/**
 * A step's server metrics from CloudWatch, and from Performance Insights where the variant has it.
 * Each window records how many datapoints it should have and how many arrived, since CloudWatch publishes late.
 * API fields are named as in botocore monitoring/2010-08-01 and pi/2018-02-27.
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
 * Write forwarding's metrics per engine and role, counted in the window's completeness or not.
 * The catalogue cites the Aurora User Guide pages for both engines.
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
 * Per engine family, the instance metrics counted in completeness and the ones only collected.
 * The latencies and memory come on the same schedule as the counted ones, which say whether the window is complete.
 */
const familyLists = (family: MetricFamily) => ({
  base: familyMetrics(family, 'counted'),
  extra: familyMetrics(family, 'collected'),
});
const AURORA_MYSQL = familyLists('aurora-mysql');
const AURORA_POSTGRESQL = familyLists('aurora-postgresql');
const RDS_INSTANCE = familyLists('rds');

/**
 * The CloudWatch metrics an instance of the engine publishes: counted, collected only, and a reader's replica lag.
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
 * A self-managed server's EC2 instance metrics. The servers have detailed monitoring.
 * So a 60 s Sum divided by 60 is the per-second rate the RDS names carry.
 * See the EC2 User Guide, "List the available CloudWatch metrics for your instances".
 * Only Nitro-based types have the EBS counts, so they are not counted in completeness.
 *
 * Memory is mem_available from the CloudWatch agent in namespace CWAgent, in bytes as FreeableMemory is.
 * A query matches only a metric with exactly its dimensions. The agent's config omits the hostname.
 * So InstanceId is the whole dimension set. See the CloudWatch User Guide, "CloudWatch agent configuration file".
 * An agent that failed to install leaves the series empty, so memory is not counted in completeness.
 * @internal exported for its tests
 */
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
 * An Aurora Serverless v2 instance's capacity, per instance and minute like the base metrics.
 * It is not counted in completeness, since the base metrics say whether the window is complete.
 * @internal exported for its tests
 */
export const SERVERLESS_METRICS: readonly ServerMetricName[] = groupMetrics('serverless');
/**
 * Aurora's cluster-level storage I/O: one datapoint per cluster and 5-minute interval, published after it closes.
 * See AWS, Aurora User Guide, "Cluster-level metrics for Amazon Aurora".
 * @internal exported for its tests
 */
export const CLUSTER_VOLUME_METRICS: readonly ServerMetricName[] = groupMetrics('cluster-volume');
/** Aurora's interval for them. The rehearsal alone replaces it. */
const CLUSTER_VOLUME_PERIOD_S = 300;

/**
 * The 5-minute intervals a step overlaps, on CloudWatch's period boundaries.
 * The last one covers the step's end, so its datapoint exists only once that interval has closed.
 * @internal exported for its tests
 */
export function volumeWindow(startIso: string, endIso: string, periodS: number): { start: Date; end: Date } {
  const period = periodS * 1000;
  const start = Math.floor(Date.parse(startIso) / period) * period;
  const end = Math.max(start + period, Math.ceil(Date.parse(endIso) / period) * period);
  return { start: new Date(start), end: new Date(end) };
}

/** GetMetricData takes at most 500 queries per request. See the CloudWatch API Reference. */
const MAX_METRIC_QUERIES = 500;
/**
 * AWS/RDS metrics are standard resolution, so 60 s is the finest period. See CloudWatch, MetricStat.Period.
 * The rehearsal alone replaces it.
 */
const CLOUDWATCH_PERIOD_S = 60;
/** Top wait events per instance in the PI breakdown. DimensionGroup.Limit takes 1 to 25. */
const PI_WAIT_EVENT_LIMIT = 10;
/** The PI series every period of a window has a datapoint of. A wait event's series need not. */
const PI_TOTAL_METRICS = ['db.load.avg', 'os.cpuUtilization.total.avg'] as const;

/** Datapoints of `periodS` seconds a fully published window [start, end) holds. */
function windowDatapoints(start: Date, end: Date, periodS: number): number {
  return Math.max(0, Math.floor((end.getTime() - start.getTime()) / (periodS * 1000)));
}

export interface ServerMetricsOptions {
  readonly clients: Pick<AwsClients, 'cloudwatch' | 'pi' | 'rds'>;
  readonly config: Pick<AwsBackendConfig, 'piPeriodS' | 'volumeMetricsPeriodS' | 'metricsPeriodS'>;
}

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
      /** The cluster's dimension, for the cluster volume metrics. Others take the instance's. */
      readonly volume?: true;
      readonly dimension?: 'DBClusterIdentifier';
      /**
       * A self-managed server's instance metric. A Sum is divided by the period.
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
    // Aurora clusters have the volume's I/O, in 5-minute datapoints over the intervals the step overlaps.
    if (ENGINES[engine.kind].topology === 'cluster' && resources.clusterId !== '') {
      for (const metric of CLUSTER_VOLUME_METRICS)
        wantedSeries.push({
          instance: { instanceId: resources.clusterId, role: 'cluster' },
          metric,
          // Counted, since without the interval covering the step's end, I/O per transaction comes out low.
          counted: true,
          dimension: 'DBClusterIdentifier',
          volume: true,
        });
    }
    const rows: ServerMetricRow[] = [];
    // GetMetricData's StartTime is inclusive and EndTime exclusive, both on whole minutes here.
    // So a fully published window holds one datapoint per minute per series.
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
              // A count per 5 minutes. The 5-minute Sum is the published value.
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
            // An EC2 count or byte Sum per minute becomes the per-second rate the name carries.
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

    // Performance Insights is an RDS feature, so a self-managed server has none.
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
   * Performance Insights DB load by wait event, with its total, and OS CPU per instance.
   * See AWS, RDS User Guide, "Performance Insights counter metrics".
   * Completeness counts only the two totals, since a wait event is absent from a period it did not occur in.
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
 * The GetMetricData time range for a step: only the whole minutes inside it.
 * A partly idle first or last minute would pull the averages down, and verdicts compare them with 90% thresholds.
 * A step shorter than two minutes keeps its enclosing minutes, the only data there is.
 * Minutes CloudWatch has not published yet are absent. The workflow collects them again after metricsPublishDelayS.
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
