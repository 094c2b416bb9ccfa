/**
 * A step's lake rows from its runners' outputs (core/lake/step-rows.ts), on small hand-made inputs:
 * one row per client, failures and their reasons, client CPU on a shared or an own host, the step's
 * totals, and metric window completeness.
 */
import { validateSpec } from '../../core/experiment/validate';
import {
  metricWindowRows,
  stepRowsOf,
  stepTotals,
  type ClientStepOutput,
  type StepRowsInput,
} from '../../core/lake/step-rows';
import { planRun } from '../../core/plan/plan';
import type { ParsedOutput, RunSummary } from '../../core/sysbench/types';

const plan = planRun(
  validateSpec({
    name: 'rows',
    engine: { version: '3.04.0' },
    variants: [{ name: 'v', instanceClass: 'db.r6g.large', readers: 1, az: 'b' }],
    data: { tables: 2, tableSize: 1000 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [4], durationS: 60 }],
  }),
  { backend: 'aws', now: new Date('2026-11-21T10:00:00Z'), runId: 'run-1' },
);
const cell = plan.cells[0]!;
const step = cell.steps[0]!;

const summary = (tps: number, qps: number): RunSummary => ({
  tps,
  qps,
  events: tps * 60,
  totalTimeS: 60,
  reads: 10,
  writes: 5,
  other: 2,
  transactions: tps * 60,
  queries: qps * 60,
  errors: 0,
  reconnects: 0,
  latencyMs: { min: 1, avg: 2, max: 9, percentile: 95, value: 4, sum: 100 },
});
const okParsed = (tps: number, qps: number): ParsedOutput => ({
  status: 'ok',
  error: null,
  summary: summary(tps, qps),
  intervals: [
    {
      t: 10,
      threads: 4,
      tps,
      qps,
      readsPerS: 1,
      writesPerS: 2,
      otherPerS: 3,
      latencyMs: 4,
      errorsPerS: 0,
      reconnectsPerS: 0,
    },
    {
      t: 20,
      threads: 4,
      tps,
      qps,
      readsPerS: 1,
      writesPerS: 2,
      otherPerS: 3,
      latencyMs: 5,
      errorsPerS: 0,
      reconnectsPerS: 0,
      queueLength: 7,
      concurrency: 3,
    },
  ],
});
const client = (
  clientId: string,
  parsed: ParsedOutput,
  ended: string | undefined,
  cpu: ClientStepOutput['cpuSamples'] = [],
): ClientStepOutput => ({
  clientId,
  jobStartedAt: '2026-11-21T10:00:00.000Z',
  parsed,
  result:
    ended === undefined
      ? undefined
      : {
          phase: 'run',
          exitCode: 0,
          startedAt: '2026-11-21T10:00:01.000Z',
          endedAt: ended,
          sysbenchVersion: '1.0.20',
          hostname: clientId,
          command: 'sysbench',
        },
  cpuSamples: cpu,
});
const input = (outputs: readonly ClientStepOutput[], extra: Partial<StepRowsInput> = {}): StepRowsInput => ({
  run: { runId: 'run-1', dt: '2026-11-21' },
  cell,
  step,
  outputs,
  endpointOf: (i) => ({ instanceId: `writer-${i}` }),
  sharedHost: false,
  timedOut: false,
  now: '2026-11-21T10:05:00.000Z',
  ...extra,
});

describe('stepRowsOf', () => {
  it('makes one step row per client with its summary, endpoint and position', () => {
    // Arrange
    const outputs = [
      client('i-a', okParsed(100, 2000), '2026-11-21T10:01:01.000Z'),
      client('i-b', okParsed(50, 1000), '2026-11-21T10:01:03.000Z'),
    ];

    // Act
    const rows = stepRowsOf(
      input(outputs, { endpointOf: (i) => ({ instanceId: `inst-${i}`, ...(i === 1 ? { az: 'eu-west-1c' } : {}) }) }),
    );

    // Assert
    expect(
      rows.steps.map((r) => [
        r.client_id,
        r.client_index,
        r.endpoint_instance,
        r.az,
        r.status,
        r.error,
        r.tps,
        r.qps,
        r.lat_pct_ms,
        r.interval_count,
      ]),
    ).toEqual([
      ['i-a', 0, 'inst-0', 'b', 'ok', null, 100, 2000, 4, 2],
      ['i-b', 1, 'inst-1', 'eu-west-1c', 'ok', null, 50, 1000, 4, 2],
    ]);
    expect(rows.steps[0]).toMatchObject({
      run_id: 'run-1',
      cell_id: cell.cellId,
      variant: 'v',
      step_id: step.stepId,
      dt: '2026-11-21',
      test: 'oltp_read_write',
      threads: 4,
      started_at: '2026-11-21T10:00:01.000Z',
      ended_at: '2026-11-21T10:01:01.000Z',
    });
    expect({ startedAt: rows.startedAt, endedAt: rows.endedAt }).toEqual({
      startedAt: '2026-11-21T10:00:01.000Z',
      endedAt: '2026-11-21T10:01:03.000Z',
    });
  });

  it('carries the latency distribution of a histogram, null percentiles without one', () => {
    // Arrange
    const base = okParsed(100, 2000);
    const withHistogram: ParsedOutput = {
      ...base,
      summary: {
        ...base.summary!,
        latencyMs: {
          ...base.summary!.latencyMs,
          percentiles: { '50': 1.5, '90': 2.6, '95': 3.7, '99': 8.9, '99.9': 24.4 },
        },
      },
    };
    const outputs = [
      client('i-a', withHistogram, '2026-11-21T10:01:01.000Z'),
      client('i-b', base, '2026-11-21T10:01:01.000Z'),
    ];

    // Act
    const rows = stepRowsOf(input(outputs));

    // Assert
    expect(
      rows.steps.map((r) => [r.lat_p50_ms, r.lat_p90_ms, r.lat_p95_ms, r.lat_p99_ms, r.lat_p999_ms, r.lat_max_ms]),
    ).toEqual([
      [1.5, 2.6, 3.7, 8.9, 24.4, 9],
      [null, null, null, null, null, 9],
    ]);
  });

  it('fails a client without output with its reason; the step end is now while one has no result', () => {
    // Arrange
    const lost: ParsedOutput = { status: 'failed', error: 'SSM TimedOut', summary: null, intervals: [] };
    const outputs = [client('i-a', okParsed(100, 2000), '2026-11-21T10:01:01.000Z'), client('i-b', lost, undefined)];

    // Act
    const rows = stepRowsOf(input(outputs));

    // Assert
    expect(rows.steps[1]).toMatchObject({
      status: 'failed',
      error: 'SSM TimedOut',
      tps: null,
      lat_min_ms: null,
      started_at: '2026-11-21T10:00:00.000Z',
      ended_at: '2026-11-21T10:05:00.000Z',
    });
    expect(rows.endedAt).toBe('2026-11-21T10:05:00.000Z');
    expect(rows.startedAt).toBe('2026-11-21T10:00:00.000Z');
  });

  it('fails clients that finished fine when the step timed out, and every client when the run was stopped', () => {
    // Arrange
    const failed: ParsedOutput = { status: 'failed', error: 'FATAL: connection lost', summary: null, intervals: [] };
    const outputs = [
      client('i-a', okParsed(100, 2000), '2026-11-21T10:01:01.000Z'),
      client('i-b', failed, '2026-11-21T10:01:01.000Z'),
    ];

    // Act
    const timedOut = stepRowsOf(input(outputs, { timedOut: true }));
    const aborted = stepRowsOf(input(outputs, { abortedReason: 'run stopped by the user' }));

    // Assert
    expect(timedOut.steps.map((r) => [r.status, r.error])).toEqual([
      ['failed', 'step did not finish in time and was stopped'],
      ['failed', 'FATAL: connection lost'],
    ]);
    expect(aborted.steps.map((r) => [r.status, r.error])).toEqual([
      ['failed', 'run stopped by the user'],
      ['failed', 'run stopped by the user'],
    ]);
  });

  it("reports the client's CPU on its own host, and sysbench's share of its usable cores on a shared one", () => {
    // Arrange: 8 cores, 4 threads: sysbench can use 4 of them.
    const cpu = [
      { t: 1_795_000_000, sysbenchCpuPct: 200, hostCpuPct: 30, cores: 8 },
      { t: 1_795_000_001, sysbenchCpuPct: 300, hostCpuPct: 50, cores: 8 },
    ];
    const outputs = [client('i-a', okParsed(100, 2000), '2026-11-21T10:01:01.000Z', cpu)];

    // Act
    const own = stepRowsOf(input(outputs, { sharedHost: false })).steps[0]!;
    const shared = stepRowsOf(input(outputs, { sharedHost: true })).steps[0]!;

    // Assert
    expect([own.client_cpu_avg_pct, own.client_cpu_max_pct]).toEqual([40, 50]);
    expect([shared.client_cpu_avg_pct, shared.client_cpu_max_pct]).toEqual([62.5, 75]);
  });

  it('makes interval rows and two client CPU metric rows per sample', () => {
    // Arrange
    const cpu = [{ t: 1_795_000_000, sysbenchCpuPct: 120, hostCpuPct: 35, cores: 2 }];
    const outputs = [client('i-a', okParsed(100, 2000), '2026-11-21T10:01:01.000Z', cpu)];

    // Act
    const rows = stepRowsOf(input(outputs));

    // Assert
    expect(rows.intervals.map((r) => [r.client_id, r.t, r.lat_pct_ms, r.queue_length, r.concurrency])).toEqual([
      ['i-a', 10, 4, null, null],
      ['i-a', 20, 5, 7, 3],
    ]);
    expect(rows.clientMetrics.map((r) => [r.instance_id, r.role, r.metric, r.ts, r.value, r.source])).toEqual([
      ['i-a', 'client', 'ClientSysbenchCPU', '2026-11-18T11:06:40.000Z', 120, 'runner'],
      ['i-a', 'client', 'ClientHostCPU', '2026-11-18T11:06:40.000Z', 35, 'runner'],
    ]);
  });
});

describe('stepTotals', () => {
  it('sums throughput over the clients that measured it and names each failed client', () => {
    const totals = stepTotals([
      { client_id: 'i-a', status: 'ok', error: null, tps: 100, qps: 2000 },
      { client_id: 'i-b', status: 'failed', error: 'SSM TimedOut', tps: null, qps: null },
      { client_id: 'i-c', status: 'failed', error: 'step did not finish in time and was stopped', tps: 40, qps: 800 },
    ]);
    expect(totals).toEqual({
      status: 'failed',
      error: 'i-b: SSM TimedOut; i-c: step did not finish in time and was stopped',
      tps: 140,
      qps: 2800,
    });
  });

  it('is ok with no throughput when no client measured any', () => {
    expect(stepTotals([{ client_id: 'i-a', status: 'ok', error: null, tps: null, qps: null }])).toEqual({
      status: 'ok',
      error: null,
      tps: null,
      qps: null,
    });
  });
});

describe('metricWindowRows', () => {
  it('marks a window complete only when every expected datapoint arrived', () => {
    const base = { run_id: 'run-1', cell_id: 'c', variant: 'v', step_id: 's', dt: '2026-11-21' };
    const w = {
      instanceId: 'db-1',
      role: 'writer' as const,
      metric: 'CPUUtilization',
      source: 'cloudwatch' as const,
      start: '2026-11-21T10:01:00.000Z',
      end: '2026-11-21T10:05:00.000Z',
      periodS: 60,
    };

    const rows = metricWindowRows(
      base,
      [
        { ...w, expected: 4, received: 4 },
        { ...w, metric: 'DMLThroughput', expected: 4, received: 3 },
      ],
      '2026-11-21T10:06:00.000Z',
    );

    expect(
      rows.map((r) => [r.metric, r.expected, r.received, r.complete, r.window_start, r.period_s, r.collected_at]),
    ).toEqual([
      ['CPUUtilization', 4, 4, true, '2026-11-21T10:01:00.000Z', 60, '2026-11-21T10:06:00.000Z'],
      ['DMLThroughput', 4, 3, false, '2026-11-21T10:01:00.000Z', 60, '2026-11-21T10:06:00.000Z'],
    ]);
    expect(rows[0]).toMatchObject(base);
  });
});
