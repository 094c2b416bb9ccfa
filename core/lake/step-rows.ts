/** A step's lake rows from what its runners left behind. It is pure, and the RunStep Task writes the rows. */
import type { CellPlan, StepPlan } from '../plan/types';
import { summarizeClientCpu } from '../sysbench/parser';
import type { ClientCpuSample, ParsedOutput, RunnerResult } from '../sysbench/types';
import type { IntervalRow, MetricWindowRow, ServerMetricRow, StepRow } from './rows';
import type { MetricSource, StepSummaryRow } from './schema';
import { summarizeStep, type StepStatus } from './step-summary';

/**
 * sysbench 1.0.20 with --rate gives up when its event queue fills.
 * The workers have then fallen 131072 events behind. See eventgen_thread_proc in src/sysbench.c.
 * That is a measurement, not a failure. The offered rate is above what the server sustains.
 * The intervals printed before the abort say what was achieved.
 */
const EVENT_QUEUE_FULL = 'The event queue is full';

/**
 * A rate step whose only problem is the full event queue.
 * The achieved rates are the means of the intervals before the abort.
 * The latency is the worst interval's, since in rate mode it includes queue time. See sb_timer_stop in src/sb_timer.h.
 * Null when the step is not an overloaded rate step.
 * @internal Exported for its tests.
 */
export function overloadOf(
  parsed: ParsedOutput,
  rate: number,
): { tps: number | null; qps: number | null; latPctMs: number | null; totalTimeS: number | null } | null {
  if (rate <= 0 || parsed.status !== 'failed' || parsed.error === null) return null;
  // Only the queue message. A crash, a lost connection or a runner error beside it is a failure.
  const reasons = parsed.error.split('; ');
  if (!reasons.every((r) => r.startsWith(EVENT_QUEUE_FULL))) return null;
  const ivs = parsed.intervals;
  if (ivs.length === 0) return { tps: null, qps: null, latPctMs: null, totalTimeS: null };
  const meanOf = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    tps: meanOf(ivs.map((i) => i.tps)),
    qps: meanOf(ivs.map((i) => i.qps)),
    latPctMs: Math.max(...ivs.map((i) => i.latencyMs)),
    totalTimeS: ivs[ivs.length - 1]!.t,
  };
}

/** What one client's runner left under its output prefix, parsed. */
export interface ClientStepOutput {
  readonly clientId: string;
  /** When the job was started. Used when result.json is missing. */
  readonly jobStartedAt: string;
  readonly parsed: ParsedOutput;
  readonly result: RunnerResult | undefined;
  readonly cpuSamples: readonly ClientCpuSample[];
}

/** The database instance a client's runner connected to. */
export interface ClientEndpoint {
  readonly instanceId: string;
  readonly az?: string;
}

export interface StepRowsInput {
  readonly run: { readonly runId: string; readonly dt: string };
  readonly cell: Pick<CellPlan, 'cellId' | 'repeat' | 'variant'>;
  readonly step: StepPlan;
  /** In client order. */
  readonly outputs: readonly ClientStepOutput[];
  /** The endpoint of the i-th client. */
  readonly endpointOf: (clientIndex: number) => ClientEndpoint;
  /** Clients share the machine with the servers, as on the local backend. */
  readonly sharedHost: boolean;
  /** The jobs ran past their deadline and were stopped. */
  readonly timedOut: boolean;
  /** The run was stopped during the step. Every client's row is failed with this reason. */
  readonly abortedReason?: string;
  /** The time a client without result.json is taken to have ended at. */
  readonly now: string;
}

export interface StepRows {
  readonly steps: StepRow[];
  readonly intervals: IntervalRow[];
  /** Client-side metrics, stored next to the server's. */
  readonly clientMetrics: ServerMetricRow[];
  /** The earliest client start and the latest client end. */
  readonly startedAt: string;
  readonly endedAt: string;
}

/** The step's client span. A client still without result.json ends now. */
function stepSpan(
  outputs: readonly Pick<ClientStepOutput, 'jobStartedAt' | 'result'>[],
  now: string,
): { startedAt: string; endedAt: string } {
  return {
    startedAt: outputs.map((o) => o.result?.startedAt ?? o.jobStartedAt).sort()[0]!,
    endedAt: outputs
      .map((o) => o.result?.endedAt ?? now)
      .sort()
      .reverse()[0]!,
  };
}

export function stepRowsOf(input: StepRowsInput): StepRows {
  const { run, cell, step } = input;
  const { startedAt, endedAt } = stepSpan(input.outputs, input.now);
  const base = {
    run_id: run.runId,
    cell_id: cell.cellId,
    variant: cell.variant.name,
    step_id: step.stepId,
    dt: run.dt,
  };
  const steps: StepRow[] = [];
  const intervals: IntervalRow[] = [];
  const clientMetrics: ServerMetricRow[] = [];
  input.outputs.forEach((o, clientIndex) => {
    const s = o.parsed.summary;
    // Locally the client's CPU is sysbench's own, as a share of the cores its threads can use.
    // On AWS it is the client instance's CPU.
    const sharedHost = input.sharedHost;
    const cpu = summarizeClientCpu(o.cpuSamples, { threads: step.threads, sharedHost });
    const cores = Math.min(step.threads, Math.max(1, ...o.cpuSamples.map((c) => c.cores)));
    const clientCpu = (hostPct: number | null, sysbenchPct: number | null) =>
      sharedHost ? (sysbenchPct === null ? null : Math.round((sysbenchPct / cores) * 100) / 100) : hostPct;
    const endpoint = input.endpointOf(clientIndex);
    const error =
      input.abortedReason ??
      (input.timedOut && o.parsed.status === 'ok' ? 'step did not finish in time and was stopped' : o.parsed.error);
    const overload = input.abortedReason === undefined && !input.timedOut ? overloadOf(o.parsed, step.rate) : null;
    steps.push({
      ...base,
      repeat: cell.repeat,
      instance_class: cell.variant.instanceClass,
      az: endpoint.az ?? cell.variant.az ?? null,
      step_index: step.index,
      workload: step.workload,
      test: step.test ?? step.script?.name ?? '',
      threads: step.threads,
      rate: step.rate,
      target: step.target,
      endpoint_instance: endpoint.instanceId,
      client_id: o.clientId,
      client_index: clientIndex,
      started_at: o.result?.startedAt ?? o.jobStartedAt,
      ended_at: o.result?.endedAt ?? endedAt,
      status: overload !== null ? 'overloaded' : error === null ? o.parsed.status : 'failed',
      error,
      tps: overload !== null ? overload.tps : (s?.tps ?? null),
      qps: overload !== null ? overload.qps : (s?.qps ?? null),
      events: s?.events ?? null,
      total_time_s: overload !== null ? overload.totalTimeS : (s?.totalTimeS ?? null),
      reads: s?.reads ?? null,
      writes: s?.writes ?? null,
      other: s?.other ?? null,
      errors: s?.errors ?? null,
      reconnects: s?.reconnects ?? null,
      lat_min_ms: s?.latencyMs.min ?? null,
      lat_avg_ms: s?.latencyMs.avg ?? null,
      lat_max_ms: s?.latencyMs.max ?? null,
      lat_pct: step.percentile,
      lat_pct_ms: overload !== null ? overload.latPctMs : (s?.latencyMs.value ?? null),
      lat_p50_ms: s?.latencyMs.percentiles?.['50'] ?? null,
      lat_p90_ms: s?.latencyMs.percentiles?.['90'] ?? null,
      lat_p95_ms: s?.latencyMs.percentiles?.['95'] ?? null,
      lat_p99_ms: s?.latencyMs.percentiles?.['99'] ?? null,
      lat_p999_ms: s?.latencyMs.percentiles?.['99.9'] ?? null,
      interval_count: o.parsed.intervals.length,
      client_cpu_avg_pct: clientCpu(cpu.avg, cpu.sysbenchAvg),
      client_cpu_max_pct: clientCpu(cpu.max, cpu.sysbenchMax),
      client_saturated: cpu.saturated,
      read_back_checks: o.parsed.readBack?.checks ?? null,
      stale_reads: o.parsed.readBack?.stale ?? null,
    });
    for (const iv of o.parsed.intervals) {
      intervals.push({
        ...base,
        client_id: o.clientId,
        t: iv.t,
        threads: iv.threads,
        tps: iv.tps,
        qps: iv.qps,
        reads_per_s: iv.readsPerS,
        writes_per_s: iv.writesPerS,
        other_per_s: iv.otherPerS,
        lat_pct_ms: iv.latencyMs,
        errors_per_s: iv.errorsPerS,
        reconnects_per_s: iv.reconnectsPerS,
        queue_length: iv.queueLength ?? null,
        concurrency: iv.concurrency ?? null,
      });
    }
    for (const sample of o.cpuSamples) {
      const ts = new Date(sample.t * 1000).toISOString();
      clientMetrics.push(
        {
          ...base,
          instance_id: o.clientId,
          role: 'client',
          metric: 'ClientSysbenchCPU',
          ts,
          value: sample.sysbenchCpuPct,
          unit: 'Percent',
          source: 'runner',
        },
        {
          ...base,
          instance_id: o.clientId,
          role: 'client',
          metric: 'ClientHostCPU',
          ts,
          value: sample.hostCpuPct,
          unit: 'Percent',
          source: 'runner',
        },
      );
    }
  });
  return { steps, intervals, clientMetrics, startedAt, endedAt };
}

/**
 * The one row of a rate step that did not run, status skipped with the reason in error.
 * It is kept so the report can say which rates were not tried and why.
 */
export function skippedStepRow(input: {
  readonly run: StepRowsInput['run'];
  readonly cell: StepRowsInput['cell'];
  readonly step: StepPlan;
  readonly endpoint: ClientEndpoint;
  readonly reason: string;
  readonly now: string;
}): StepRow {
  const { run, cell, step } = input;
  return {
    run_id: run.runId,
    cell_id: cell.cellId,
    variant: cell.variant.name,
    step_id: step.stepId,
    dt: run.dt,
    repeat: cell.repeat,
    instance_class: cell.variant.instanceClass,
    az: input.endpoint.az ?? cell.variant.az ?? null,
    step_index: step.index,
    workload: step.workload,
    test: step.test ?? step.script?.name ?? '',
    threads: step.threads,
    rate: step.rate,
    target: step.target,
    endpoint_instance: input.endpoint.instanceId,
    client_id: '-',
    client_index: 0,
    started_at: input.now,
    ended_at: input.now,
    status: 'skipped',
    error: input.reason,
    tps: null,
    qps: null,
    events: null,
    total_time_s: null,
    reads: null,
    writes: null,
    other: null,
    errors: null,
    reconnects: null,
    lat_min_ms: null,
    lat_avg_ms: null,
    lat_max_ms: null,
    lat_pct: step.percentile,
    lat_pct_ms: null,
    lat_p50_ms: null,
    lat_p90_ms: null,
    lat_p95_ms: null,
    lat_p99_ms: null,
    lat_p999_ms: null,
    interval_count: 0,
    client_cpu_avg_pct: null,
    client_cpu_max_pct: null,
    client_saturated: false,
    read_back_checks: null,
    stale_reads: null,
  };
}

/**
 * A step's outcome over its clients, as the workflow records it when it collects the step.
 * Status, tps and qps come from the same definition as step_summary.
 * The error names every client that was not ok, with its own error.
 */
export function stepTotals(steps: readonly Pick<StepRow, 'client_id' | 'status' | 'error' | 'tps' | 'qps'>[]): Pick<
  StepSummaryRow,
  'tps' | 'qps'
> & {
  status: StepStatus;
  error: string | null;
} {
  const notOk = steps.filter((r) => r.status !== 'ok');
  const { status, tps, qps } = summarizeStep(steps, ['status', 'tps', 'qps']);
  return {
    // The status aggregate's values are StepStatus's.
    status: status as StepStatus,
    tps,
    qps,
    error: notOk.length === 0 ? null : notOk.map((r) => `${r.client_id}: ${r.error}`).join('; '),
  };
}

/** Datapoints a server metric's window should have, and how many arrived. */
export interface MetricWindowCounts {
  readonly instanceId: string;
  readonly role: string;
  readonly metric: string;
  readonly source: MetricSource;
  readonly start: string;
  readonly end: string;
  readonly periodS: number;
  readonly expected: number;
  readonly received: number;
}

/** The metric_windows rows of one step's collection, stamped with when it was collected. */
export function metricWindowRows(
  base: Pick<MetricWindowRow, 'run_id' | 'cell_id' | 'variant' | 'step_id' | 'dt'>,
  windows: readonly MetricWindowCounts[],
  collectedAt: string,
): MetricWindowRow[] {
  return windows.map((w) => ({
    ...base,
    instance_id: w.instanceId,
    role: w.role,
    metric: w.metric,
    source: w.source,
    window_start: w.start,
    window_end: w.end,
    period_s: w.periodS,
    expected: w.expected,
    received: w.received,
    complete: w.received >= w.expected,
    collected_at: collectedAt,
  }));
}
