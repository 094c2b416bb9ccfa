/**
 * S4's bound classification: each (instance class, load) point is CPU-bound,
 * network-bound, client-bound, or none of these.
 *
 * Thresholds (documented defaults, overridable):
 *  - CPU-bound: server CPUUtilization >= 90% (the original study's large/xlarge ran at 98–100%).
 *  - network-bound: NetworkTransmit + NetworkReceive >= 90% of the class's network limit (its
 *    "up to" burst figure from the price table, the only published number): the original study's 2xlarge and
 *    4xlarge reached 12.32 and 12.44 Gbps of 12.5 (98–99%) at CPU 71% and 29%.
 *  - client-bound: a client was saturated (the runner's client_saturated flag, or its average CPU
 *    >= 90%): the original study's single c6i.large reached 1.17 Gbps with its own CPU at 45–100%. Its numbers
 *    describe the client, not the server.
 * Server limits are checked first: when the server is at its CPU or network limit a saturated
 * client is reported alongside, not instead. Locally (servers and clients on one machine) a host
 * whose CPUs are >= 90% busy is the limit (host-bound): adding clients would not find a server limit. With no limit
 * reached the point is 'none': the load did not find the server's limit (add clients).
 */

type Bound = 'cpu' | 'network' | 'client' | 'host' | 'none';

export interface BoundInput {
  /** Mean server CPU %, null when not measured. */
  readonly serverCpuPct: number | null;
  /** Mean server network bytes/s (transmit + receive), null when not measured. */
  readonly networkBytesPerS: number | null;
  /** The class's network limit in Gbps (10^9 bit/s), null when unknown (e.g. locally). */
  readonly networkLimitGbps: number | null;
  /** Any client flagged saturated by the runner. */
  readonly clientSaturated: boolean;
  /** Mean client CPU %, null when not measured. */
  readonly clientCpuPct: number | null;
  /**
   * Locally, servers and clients share one machine: its CPU busy % (the runner's ClientHostCPU),
   * null on AWS or when not measured. A saturated host limits everything on it.
   */
  readonly sharedHostCpuPct?: number | null;
}

export interface BoundThresholds {
  readonly cpuPct: number;
  readonly networkShare: number;
  readonly clientCpuPct: number;
}

const DEFAULT_BOUND_THRESHOLDS: BoundThresholds = { cpuPct: 90, networkShare: 0.9, clientCpuPct: 90 };

export interface BoundResult {
  readonly bound: Bound;
  /** Network use as a share of the class limit, when both are known. */
  readonly networkShare: number | null;
  readonly networkGbps: number | null;
  readonly clientSaturated: boolean;
  readonly reason: string;
}

export function bytesPerSToGbps(bytesPerS: number): number {
  return (bytesPerS * 8) / 1e9;
}

export function classifyBound(input: BoundInput, thresholds: BoundThresholds = DEFAULT_BOUND_THRESHOLDS): BoundResult {
  const gbps = input.networkBytesPerS !== null ? bytesPerSToGbps(input.networkBytesPerS) : null;
  const share =
    gbps !== null && input.networkLimitGbps !== null && input.networkLimitGbps > 0
      ? gbps / input.networkLimitGbps
      : null;
  const clientSaturated =
    input.clientSaturated || (input.clientCpuPct !== null && input.clientCpuPct >= thresholds.clientCpuPct);
  const also = clientSaturated ? ' (a client was saturated too)' : '';
  if (input.serverCpuPct !== null && input.serverCpuPct >= thresholds.cpuPct) {
    return {
      bound: 'cpu',
      networkShare: share,
      networkGbps: gbps,
      clientSaturated,
      reason: `server CPU ${input.serverCpuPct.toFixed(0)}% >= ${thresholds.cpuPct}%${also}`,
    };
  }
  if (share !== null && share >= thresholds.networkShare) {
    return {
      bound: 'network',
      networkShare: share,
      networkGbps: gbps,
      clientSaturated,
      reason:
        `${gbps!.toFixed(2)} Gbps is ${(share * 100).toFixed(0)}% of the ` +
        `class's ${input.networkLimitGbps} Gbps${also}`,
    };
  }
  if (
    input.sharedHostCpuPct !== undefined &&
    input.sharedHostCpuPct !== null &&
    input.sharedHostCpuPct >= thresholds.cpuPct
  ) {
    return {
      bound: 'host',
      networkShare: share,
      networkGbps: gbps,
      clientSaturated,
      reason:
        `this machine's CPUs were ${input.sharedHostCpuPct.toFixed(0)}% busy (servers and clients share ` +
        `them): the point measures the host, not a class; more clients would not help`,
    };
  }
  if (clientSaturated) {
    return {
      bound: 'client',
      networkShare: share,
      networkGbps: gbps,
      clientSaturated,
      reason: 'a client was CPU-saturated: the numbers measure the client, add clients',
    };
  }
  const known = [
    input.serverCpuPct !== null ? `CPU ${input.serverCpuPct.toFixed(0)}%` : 'CPU unknown',
    share !== null ? `network ${(share * 100).toFixed(0)}% of limit` : 'network limit unknown',
  ];
  return {
    bound: 'none',
    networkShare: share,
    networkGbps: gbps,
    clientSaturated,
    reason: `no limit reached (${known.join(', ')})`,
  };
}
