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
 * client is reported alongside, not instead. Then what more clients did: where N clients moved
 * MORE_CLIENTS_GAIN more bytes than one, the one client's point found no server or host limit; it is
 * client-bound when that client was busy (>= clientBusyPct of its cores: the original study's one
 * client at 45-100%), else its load was just too small. Locally (servers and clients on one machine)
 * a host whose CPUs are >= 90% busy is the limit (host-bound) only when more clients did not help and
 * no other run shared the machine: with co-tenant load the point is 'unclear', since their load and
 * this one's cannot be told apart. With no limit reached the point is 'none' (add clients).
 */

type Bound = 'cpu' | 'network' | 'client' | 'host' | 'unclear' | 'none';

/** More clients moving this much more (+15%) than one is beyond the few-percent wobble of a step's throughput. */
export const MORE_CLIENTS_GAIN = 0.15;

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
  /**
   * For a point with fewer clients than the workload's most: how much more the most clients moved
   * (0.4 = +40% bytes/s), and how many they were; null when this is the most-clients point.
   */
  readonly moreClients?: { readonly gain: number; readonly clients: number } | null;
  /** Other runs shared this machine during the run (its manifest's host note). */
  readonly coTenant?: boolean;
}

export interface BoundThresholds {
  readonly cpuPct: number;
  readonly networkShare: number;
  readonly clientCpuPct: number;
  /** A client this busy whose extra clients moved more was the limit. */
  readonly clientBusyPct: number;
}

const DEFAULT_BOUND_THRESHOLDS: BoundThresholds = {
  cpuPct: 90,
  networkShare: 0.9,
  clientCpuPct: 90,
  clientBusyPct: 70,
};

export interface BoundResult {
  readonly bound: Bound;
  /** Network use as a share of the class limit, when both are known. */
  readonly networkShare: number | null;
  readonly networkGbps: number | null;
  readonly clientSaturated: boolean;
  readonly reason: string;
  /**
   * Which step of BOUND_RULE decided, and its test written with the figures the table shows beside the
   * verdict (server, client and host CPU %, the gain with more clients), so a reader can check it.
   */
  readonly rule: string;
}

/**
 * The verdict rule in words, once: its steps in the order classifyBound tries them (the first that holds
 * decides). Each BoundResult.rule names the step that decided with its figures.
 */
export const BOUND_RULE =
  'Verdict (the first rule that holds): 1. CPU-bound: server CPU >= 90%. 2. Network-bound: transmit + receive ' +
  ">= 90% of the class's network limit. 3. More clients moved >= 15% more: client-bound if the one client's " +
  'sysbench was at >= 70% of its cores; else unclear if the host CPUs were >= 90% busy; else no limit reached ' +
  '(its load was too small). 4. Host CPU >= 90% (local runs): unclear if other runs shared the host or no larger ' +
  'client count tested it; else host-bound (more clients moved < 15% more). 5. Client-bound: a client at >= 90% ' +
  'of its cores (saturated). 6. Otherwise no limit reached.';

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
  const pct = (x: number): string => x.toFixed(0);
  if (input.serverCpuPct !== null && input.serverCpuPct >= thresholds.cpuPct) {
    return {
      bound: 'cpu',
      networkShare: share,
      networkGbps: gbps,
      clientSaturated,
      reason: `server CPU ${input.serverCpuPct.toFixed(0)}% >= ${thresholds.cpuPct}%${also}`,
      rule: `server CPU ${pct(input.serverCpuPct)} >= ${thresholds.cpuPct}`,
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
      rule: `${gbps!.toFixed(2)} Gbps >= ${thresholds.networkShare * 100}% of ${input.networkLimitGbps}`,
    };
  }
  const base = { networkShare: share, networkGbps: gbps, clientSaturated };
  const clientCpu = input.clientCpuPct !== null ? `${input.clientCpuPct.toFixed(0)}%` : 'unknown';
  const more = input.moreClients ?? null;
  const gainText =
    more !== null ? `${more.clients} clients moved ${more.gain >= 0 ? '+' : ''}${(more.gain * 100).toFixed(0)}%` : '';
  const hostPct = input.sharedHostCpuPct ?? null;
  const gainShown = more !== null ? `${more.gain >= 0 ? '+' : ''}${pct(more.gain * 100)}%` : '';
  const minGain = `+${MORE_CLIENTS_GAIN * 100}%`;
  const clientShown = input.clientCpuPct !== null ? `client CPU ${pct(input.clientCpuPct)}` : 'client CPU unknown';
  const hostShown = hostPct !== null ? `host CPU ${pct(hostPct)}` : '';
  if (more !== null && more.gain >= MORE_CLIENTS_GAIN) {
    const busy = clientSaturated || (input.clientCpuPct !== null && input.clientCpuPct >= thresholds.clientBusyPct);
    // "No limit" beside a saturated host would contradict its own row: more clients still moved more, so
    // what held the one client back is unclear (the host's CPUs, its own thread, or other load).
    if (!busy && hostPct !== null && hostPct >= thresholds.cpuPct)
      return {
        bound: 'unclear',
        ...base,
        reason:
          `${gainText} more with this client at only ${clientCpu} of its cores, while this machine's CPUs were ` +
          `${hostPct.toFixed(0)}% busy: neither the client nor the host is shown to be the limit`,
        rule:
          `${gainShown} >= ${minGain}, ${clientShown} < ${thresholds.clientBusyPct}, ` +
          `${hostShown} >= ${thresholds.cpuPct}`,
      };
    return busy
      ? {
          bound: 'client',
          ...base,
          reason:
            `the client's sysbench was at ${clientCpu} of its cores and ${gainText} more: the one client was the ` +
            `limit, not the server`,
          rule: clientSaturated
            ? `${gainShown} >= ${minGain}, a client saturated`
            : `${gainShown} >= ${minGain}, ${clientShown} >= ${thresholds.clientBusyPct}`,
        }
      : {
          bound: 'none',
          ...base,
          reason: `${gainText} more with this client at only ${clientCpu} of its cores: this load found no limit`,
          rule: `${gainShown} >= ${minGain}, ${clientShown} < ${thresholds.clientBusyPct}`,
        };
  }
  if (hostPct !== null && hostPct >= thresholds.cpuPct) {
    if (input.coTenant === true)
      return {
        bound: 'unclear',
        ...base,
        reason:
          `this machine's CPUs were ${hostPct.toFixed(0)}% busy while other runs shared it: their load and this ` +
          `point's cannot be told apart, so what limited it is unclear`,
        rule: `${hostShown} >= ${thresholds.cpuPct}, other runs on the host`,
      };
    // Host-bound rests on more clients not moving more: with no larger client count that was never tested.
    if (more === null)
      return {
        bound: 'unclear',
        ...base,
        reason:
          `this machine's CPUs were ${hostPct.toFixed(0)}% busy (servers and clients share them), but whether more ` +
          `clients move more was not tested (no larger client count): what limited it is unclear`,
        rule: `${hostShown} >= ${thresholds.cpuPct}, no larger client count`,
      };
    return {
      bound: 'host',
      ...base,
      reason:
        `this machine's CPUs were ${hostPct.toFixed(0)}% busy (servers and clients share them) and ${gainText} ` +
        `more: the point measures the host, not a class`,
      rule: `${hostShown} >= ${thresholds.cpuPct}, ${gainShown} < ${minGain}`,
    };
  }
  if (clientSaturated) {
    return {
      bound: 'client',
      ...base,
      reason: `a client was CPU-saturated (${clientCpu} of its cores): the numbers measure the client, add clients`,
      rule: input.clientCpuPct !== null ? `${clientShown} >= ${thresholds.clientCpuPct}` : 'a client saturated',
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
    rule: [
      input.serverCpuPct !== null
        ? `server CPU ${pct(input.serverCpuPct)} < ${thresholds.cpuPct}`
        : 'server CPU unknown',
      ...(more !== null ? [`${gainShown} < ${minGain}`] : []),
      ...(hostPct !== null ? [`${hostShown} < ${thresholds.cpuPct}`] : []),
    ].join(', '),
  };
}
