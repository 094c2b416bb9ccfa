/**
 * What the client runner leaves behind, and what the parser makes of it.
 * The layout is the same in a local directory and under an S3 prefix.
 *
 *   output.log              sysbench's output as printed, with one hook JSON line per report interval
 *   client_cpu.jsonl        one CPU sample per second
 *   server_variables.jsonl  the server's global variables, after a successful prepare only
 *   result.json             written last, when the job has ended
 */

import type { RunnerPhase } from '../plan/types';

export type { RunnerPhase };

export interface RunnerResult {
  readonly phase: RunnerPhase;
  /** sysbench's exit code. 139 is a segfault, e.g. when its connections were killed. */
  readonly exitCode: number;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly sysbenchVersion: string;
  readonly hostname: string;
  /** The sysbench command line with any password masked. */
  readonly command: string;
}

/** The percentiles of the latency distribution a step records, as keys of LatencySummary.percentiles. */
export const LATENCY_PERCENTILES = ['50', '90', '95', '99', '99.9'] as const;
export type LatencyPercentileKey = (typeof LATENCY_PERCENTILES)[number];

export interface LatencySummary {
  readonly min: number;
  readonly avg: number;
  readonly max: number;
  /** Which percentile `value` is. */
  readonly percentile: number;
  /** Latency at that percentile, in ms. */
  readonly value: number;
  readonly sum: number;
  /**
   * p50 to p99.9 in ms, read off the latency histogram the way sysbench reads its own percentile.
   * Only when the output holds a histogram.
   */
  readonly percentiles?: Readonly<Record<LatencyPercentileKey, number>>;
}

export interface RunSummary {
  readonly tps: number;
  readonly qps: number;
  readonly events: number;
  readonly totalTimeS: number;
  readonly reads: number;
  readonly writes: number;
  readonly other: number;
  readonly transactions: number;
  readonly queries: number;
  readonly errors: number;
  readonly reconnects: number;
  readonly latencyMs: LatencySummary;
}

export interface Interval {
  /** Seconds since the run started, at the end of the interval. */
  readonly t: number;
  readonly threads: number;
  readonly tps: number;
  readonly qps: number;
  readonly readsPerS: number;
  readonly writesPerS: number;
  readonly otherPerS: number;
  /** Latency at the run's percentile over the interval, in ms. 0 when sysbench printed none. */
  readonly latencyMs: number;
  readonly errorsPerS: number;
  readonly reconnectsPerS: number;
  /** Rate mode only. Events waiting in the queue, and threads busy. */
  readonly queueLength?: number;
  readonly concurrency?: number;
}

export interface HistogramBucket {
  readonly valueMs: number;
  readonly count: number;
}

/** Read-after-write checks a workload script made, summed over its threads. */
export interface ReadBackCounts {
  /** Writes read back in the same session. */
  readonly checks: number;
  /** Reads that did not see the session's own committed write. */
  readonly stale: number;
  /** Reads that saw another session's token on the same marker row. That is an id collision, not staleness. */
  readonly foreign: number;
}

export interface ParsedOutput {
  readonly status: 'ok' | 'failed';
  /** Why the run failed. Null when ok. */
  readonly error: string | null;
  /** null when sysbench died before its summary. intervals still hold what it printed. */
  readonly summary: RunSummary | null;
  readonly intervals: readonly Interval[];
  readonly histogram?: readonly HistogramBucket[];
  /** Only when the script checked read-after-write visibility. */
  readonly readBack?: ReadBackCounts;
  /** From sysbench's banner, when the output has one. */
  readonly sysbenchVersion?: string;
}

export interface ClientCpuSample {
  readonly t: number;
  readonly sysbenchCpuPct: number;
  readonly hostCpuPct: number;
  readonly cores: number;
}
