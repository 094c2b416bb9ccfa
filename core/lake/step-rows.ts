/**
 * A step's lake rows from what its runners left behind: one StepRow per client, its IntervalRows and
 * its client-CPU ServerMetricRows; and the metric_windows rows of a server metrics collection.
 * Pure: the CollectStep Task reads the runner outputs and writes these rows (core/workflow/tasks.ts).
 */
import type { CellPlan, StepPlan } from '../plan/types';
import { summarizeClientCpu } from '../sysbench/parser';
import type { ClientCpuSample, ParsedOutput, RunnerResult } from '../sysbench/types';
import type { IntervalRow, MetricSource, MetricWindowRow, ServerMetricRow, StepRow } from './rows';

/** What one client's runner left under its output prefix, parsed. */
export interface ClientStepOutput {
  readonly clientId: string;
  /** When the job was started (the fallback when result.json is missing). */
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
  /** In client order (client_index). */
  readonly outputs: readonly ClientStepOutput[];
  /** The endpoint of the i-th client. */
  readonly endpointOf: (clientIndex: number) => ClientEndpoint;
  /** Clients share the machine with the servers (the local backend): see StepRow.client_cpu_avg_pct. */
  readonly sharedHost: boolean;
  /** The jobs ran past their deadline and were stopped. */
  readonly timedOut: boolean;
  /** The run was stopped during the step: every client's row is failed with this reason. */
  readonly abortedReason?: string;
  /** The time a client without result.json is taken to have ended at. */
  readonly now: string;
}

export interface StepRows {
  readonly steps: StepRow[];
  readonly intervals: IntervalRow[];
  /** Client-side metrics (source "runner"), stored next to the server's in server_metrics. */
  readonly clientMetrics: ServerMetricRow[];
  /** The earliest client start and the latest client end. */
  readonly startedAt: string;
  readonly endedAt: string;
}

/** The step's client span: the earliest start, the latest end (now for a client still without result.json). */
export function stepSpan(outputs: readonly Pick<ClientStepOutput, 'jobStartedAt' | 'result'>[], now: string): { startedAt: string; endedAt: string } {
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
  const base = { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: step.stepId, dt: run.dt };
  const steps: StepRow[] = [];
  const intervals: IntervalRow[] = [];
  const clientMetrics: ServerMetricRow[] = [];
  input.outputs.forEach((o, clientIndex) => {
    const s = o.parsed.summary;
    // Locally clients share the machine with the servers: the client's CPU is sysbench's own,
    // as a share of the cores its threads can use; on AWS it is the client instance's CPU.
    const sharedHost = input.sharedHost;
    const cpu = summarizeClientCpu(o.cpuSamples, { threads: step.threads, sharedHost });
    const cores = Math.min(step.threads, Math.max(1, ...o.cpuSamples.map((c) => c.cores)));
    const clientCpu = (hostPct: number | null, sysbenchPct: number | null) =>
      sharedHost ? (sysbenchPct === null ? null : Math.round((sysbenchPct / cores) * 100) / 100) : hostPct;
    const endpoint = input.endpointOf(clientIndex);
    const error = input.abortedReason ?? (input.timedOut && o.parsed.status === 'ok' ? 'step did not finish in time and was stopped' : o.parsed.error);
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
      status: error === null ? o.parsed.status : 'failed',
      error,
      tps: s?.tps ?? null,
      qps: s?.qps ?? null,
      events: s?.events ?? null,
      total_time_s: s?.totalTimeS ?? null,
      reads: s?.reads ?? null,
      writes: s?.writes ?? null,
      other: s?.other ?? null,
      errors: s?.errors ?? null,
      reconnects: s?.reconnects ?? null,
      lat_min_ms: s?.latencyMs.min ?? null,
      lat_avg_ms: s?.latencyMs.avg ?? null,
      lat_max_ms: s?.latencyMs.max ?? null,
      lat_pct: step.percentile,
      lat_pct_ms: s?.latencyMs.value ?? null,
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
        { ...base, instance_id: o.clientId, role: 'client', metric: 'ClientSysbenchCPU', ts, value: sample.sysbenchCpuPct, unit: 'Percent', source: 'runner' },
        { ...base, instance_id: o.clientId, role: 'client', metric: 'ClientHostCPU', ts, value: sample.hostCpuPct, unit: 'Percent', source: 'runner' },
      );
    }
  });
  return { steps, intervals, clientMetrics, startedAt, endedAt };
}

/** A step's result over its clients: failed if any client failed; throughput summed over the clients that measured one. */
export function stepTotals(steps: readonly Pick<StepRow, 'client_id' | 'status' | 'error' | 'tps' | 'qps'>[]): {
  status: 'ok' | 'failed';
  error: string | null;
  tps: number | null;
  qps: number | null;
} {
  const failed = steps.filter((r) => r.status !== 'ok');
  const measured = steps.filter((r) => r.tps !== null);
  return {
    status: failed.length === 0 ? 'ok' : 'failed',
    error: failed.length === 0 ? null : failed.map((r) => `${r.client_id}: ${r.error}`).join('; '),
    tps: measured.length > 0 ? measured.reduce((a, r) => a + (r.tps ?? 0), 0) : null,
    qps: measured.length > 0 ? measured.reduce((a, r) => a + (r.qps ?? 0), 0) : null,
  };
}

/** Datapoints a server metric's window should have and how many arrived (the backend's MetricWindowCount). */
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
