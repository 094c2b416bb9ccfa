/**
 * Thread-sweep findings (S2): the thread count of peak throughput, where throughput
 * falls off past the peak, and the points with connection errors, marked rather than dropped.
 *
 * Rules: the peak is the thread count with the highest throughput (ties: fewest threads). Fall-off
 * is the first thread count past the peak whose throughput is below (1 - dropShare) x peak
 * (default 10%): the original study's "past 512 threads performance declines without a thread pool". A point
 * has errors when its step failed or sysbench counted errors or reconnects.
 */

export interface ThreadPoint {
  readonly threads: number;
  /** null when the step failed. */
  readonly throughput: number | null;
  readonly failed: boolean;
  readonly errors: number;
  readonly reconnects: number;
  readonly error?: string | null;
}

export interface SweepFindings {
  readonly peakThreads: number | null;
  readonly peakThroughput: number | null;
  /** First thread count past the peak below (1 - dropShare) x peak; null when none. */
  readonly fallOffThreads: number | null;
  /** Throughput at the largest thread count as a share of the peak. */
  readonly lastShareOfPeak: number | null;
  /** Points with a failed step, errors or reconnects, in thread order. */
  readonly errorPoints: {
    threads: number;
    failed: boolean;
    errors: number;
    reconnects: number;
    error: string | null;
  }[];
  /** Smallest thread count with any error; null when none. */
  readonly firstErrorThreads: number | null;
  readonly summary: string;
}

export function analyzeSweep(input: readonly ThreadPoint[], dropShare = 0.1): SweepFindings {
  const points = input.slice().sort((a, b) => a.threads - b.threads);
  let peak: ThreadPoint | undefined;
  for (const p of points)
    if (p.throughput !== null && (peak === undefined || p.throughput > peak.throughput!)) peak = p;
  let fallOff: ThreadPoint | undefined;
  if (peak !== undefined) {
    for (const p of points) {
      if (p.threads <= peak.threads) continue;
      if (p.throughput === null || p.throughput < (1 - dropShare) * peak.throughput!) {
        fallOff = p;
        break;
      }
    }
  }
  const last = points[points.length - 1];
  const lastShare =
    peak !== undefined && last !== undefined && last.throughput !== null ? last.throughput / peak.throughput! : null;
  const errorPoints = points
    .filter((p) => p.failed || p.errors > 0 || p.reconnects > 0)
    .map((p) => ({
      threads: p.threads,
      failed: p.failed,
      errors: p.errors,
      reconnects: p.reconnects,
      error: p.error ?? null,
    }));
  const parts: string[] = [];
  if (peak === undefined) parts.push('no successful point');
  else {
    parts.push(`peak at ${peak.threads} threads`);
    if (fallOff !== undefined)
      parts.push(
        `falls off from ${fallOff.threads} threads` +
          (lastShare !== null ? ` (${(lastShare * 100).toFixed(0)}% of peak at ${last!.threads})` : ''),
      );
    else parts.push('no fall-off past the peak');
  }
  if (errorPoints.length > 0) parts.push(`errors from ${errorPoints[0]!.threads} threads`);
  return {
    peakThreads: peak?.threads ?? null,
    peakThroughput: peak?.throughput ?? null,
    fallOffThreads: fallOff?.threads ?? null,
    lastShareOfPeak: lastShare,
    errorPoints,
    firstErrorThreads: errorPoints[0]?.threads ?? null,
    summary: parts.join('; '),
  };
}
