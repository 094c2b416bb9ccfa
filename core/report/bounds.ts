/**
 * S4's bound classification: each (instance class, load) point is CPU-bound,
 * network-bound, client-bound, host-bound, unclear, or none of these.
 *
 * Thresholds (documented defaults, overridable):
 *  - CPU-bound: server CPUUtilization >= 90% (the original study's large/xlarge ran at 98–100%).
 *  - network-bound: NetworkTransmit or NetworkReceive >= 90% of the class's network limit (its
 *    "up to" burst figure from the price table, the only published number): the original study's 2xlarge and
 *    4xlarge reached 12.32 and 12.44 Gbps of 12.5 (98–99%) at CPU 71% and 29%. The limit holds each way at
 *    once (Amazon EC2 User Guide, "Amazon EC2 instance network bandwidth"), so the busier direction is held to it.
 *  - client-bound, one definition: more clients moved at least the gain threshold more bytes than one, while
 *    the one client was busy (its sysbench at >= clientBusyPct of its cores, or the runner's client_saturated
 *    flag): the original study's single c6i.large reached 1.17 Gbps with its own CPU at 45–100%, and 12
 *    clients moved more. Its numbers describe the client, not the server.
 *  - the gain threshold: +15% (MORE_CLIENTS_GAIN), a fixed rule; with repeats, the larger of it and the
 *    gain's 95% noise from the repeats (a gain within the repeats' noise shows nothing).
 * Server limits are checked first. Where more clients moved at least the threshold more and the one client
 * was not busy, its load was just too small. Locally (servers and clients on one machine) a host whose CPUs
 * are >= 90% busy is the limit (host-bound) only when more clients did not help and no other run shared the
 * machine: with co-tenant load the point is 'unclear', since their load and this one's cannot be told apart.
 * A busy client with no larger client count to test it is 'unclear'. With no limit reached: 'none'.
 */

type Bound = 'cpu' | 'network' | 'client' | 'host' | 'unclear' | 'none';

/**
 * The fixed part of the gain threshold: more clients moving +15% more than one. No measured noise is behind
 * it; with repeats the threshold is raised to the gain's 95% noise when that is larger (gainThreshold).
 */
export const MORE_CLIENTS_GAIN = 0.15;

/** What more clients moved against this point, and the noise of that gain when repeats measured it. */
export interface MoreClients {
  /** 0.4 = the most clients moved +40% bytes/s. */
  readonly gain: number;
  readonly clients: number;
  /**
   * The gain's 95% noise from the repeats (exp of the log-ratio interval's half-width, minus 1: 0.3 = a gain
   * under +30% is within the noise); null with one repeat a side (no noise measured).
   */
  readonly noise?: number | null;
  /** Repeats behind the noise (the fewer side), when measured. */
  readonly repeats?: number;
}

/** The gain more clients must reach to count: +15%, or the repeats' 95% noise when larger. */
export function gainThreshold(more: MoreClients): number {
  return Math.max(MORE_CLIENTS_GAIN, more.noise ?? 0);
}

export interface BoundInput {
  /** Mean server CPU %, null when not measured. */
  readonly serverCpuPct: number | null;
  /** Mean server network bytes/s of the busier direction (transmit or receive), null when not measured. */
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
  /** For a point with fewer clients than the workload's most: what the most clients moved; else null. */
  readonly moreClients?: MoreClients | null;
  /** Other runs shared this machine during the run (its manifest's host note). */
  readonly coTenant?: boolean;
}

export interface BoundThresholds {
  readonly cpuPct: number;
  readonly networkShare: number;
  /** The one client this busy (% of its cores) is what client-bound asks of it. */
  readonly clientBusyPct: number;
}

const DEFAULT_BOUND_THRESHOLDS: BoundThresholds = {
  cpuPct: 90,
  networkShare: 0.9,
  clientBusyPct: 70,
};

export interface BoundResult {
  readonly bound: Bound;
  /** Network use as a share of the class limit, when both are known. */
  readonly networkShare: number | null;
  readonly networkGbps: number | null;
  /** The client was busy: the runner flagged it saturated, or its sysbench was at >= clientBusyPct. */
  readonly clientBusy: boolean;
  readonly reason: string;
  /**
   * Which step of BOUND_RULE decided, and its test written with the figures the table shows beside the
   * verdict (server, client and host CPU %, the gain with more clients), so a reader can check it.
   */
  readonly rule: string;
  /** The number of the BOUND_RULES step that decided (1-8), so a report can say which rules a run exercised. */
  readonly ruleNo: number;
}

/**
 * The verdict rule in words, once: its steps in the order classifyBound tries them (the first that holds
 * decides), a line each. Each BoundResult.rule names the step that decided with its figures. "Busy",
 * "saturated" and "client-bound" are defined here and nowhere else.
 */
export const BOUND_RULES: readonly string[] = [
  '1. CPU-bound: server CPU >= 90%.',
  "2. Network-bound: transmit or receive >= 90% of the class's network limit (it holds each way at once).",
  '3. More clients sent at least the gain threshold more and the one client was busy (client CPU% >= 70, a ' +
    'chosen cutoff): client-bound if it was also saturated (its sysbench at >= 90% of the cores it can use), ' +
    'else one-client-limited.',
  '4. The same gain with the one client not busy: unclear if the host CPUs were >= 90% busy, else no limit ' +
    'reached (its load was too small).',
  "5. A gain of at least +15% but within the repeats' noise: unclear.",
  '6. Host CPU >= 90% (local runs): unclear if other runs shared the host or no larger client count was tried, ' +
    'else host-bound (more clients moved less than the threshold).',
  '7. A busy client with no larger client count: unclear (more clients were not tried).',
  '8. Otherwise: no limit reached.',
];

export function bytesPerSToGbps(bytesPerS: number): number {
  return (bytesPerS * 8) / 1e9;
}

const signedPct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;

export function classifyBound(input: BoundInput, thresholds: BoundThresholds = DEFAULT_BOUND_THRESHOLDS): BoundResult {
  const gbps = input.networkBytesPerS !== null ? bytesPerSToGbps(input.networkBytesPerS) : null;
  const share =
    gbps !== null && input.networkLimitGbps !== null && input.networkLimitGbps > 0
      ? gbps / input.networkLimitGbps
      : null;
  const busy = input.clientSaturated || (input.clientCpuPct !== null && input.clientCpuPct >= thresholds.clientBusyPct);
  const also = busy ? ' (the client was busy too)' : '';
  const pct = (x: number): string => x.toFixed(0);
  const base = { networkShare: share, networkGbps: gbps, clientBusy: busy };
  if (input.serverCpuPct !== null && input.serverCpuPct >= thresholds.cpuPct) {
    return {
      ruleNo: 1,
      bound: 'cpu',
      ...base,
      reason: `server CPU ${input.serverCpuPct.toFixed(0)}% >= ${thresholds.cpuPct}%${also}`,
      rule: `server CPU ${pct(input.serverCpuPct)} >= ${thresholds.cpuPct}`,
    };
  }
  if (share !== null && share >= thresholds.networkShare) {
    return {
      ruleNo: 2,
      bound: 'network',
      ...base,
      reason:
        `${gbps!.toFixed(2)} Gbps is ${(share * 100).toFixed(0)}% of the ` +
        `class's ${input.networkLimitGbps} Gbps${also}`,
      rule: `${gbps!.toFixed(2)} Gbps >= ${thresholds.networkShare * 100}% of ${input.networkLimitGbps}`,
    };
  }
  const clientCpu = input.clientCpuPct !== null ? `${input.clientCpuPct.toFixed(0)}%` : 'unknown';
  const more = input.moreClients ?? null;
  const gainText = more !== null ? `${more.clients} clients moved ${signedPct(more.gain)}` : '';
  const hostPct = input.sharedHostCpuPct ?? null;
  const gainShown = more !== null ? signedPct(more.gain) : '';
  // The threshold as the rule column shows it: the fixed +15%, or the repeats' noise when that is larger.
  const threshold = more !== null ? gainThreshold(more) : MORE_CLIENTS_GAIN;
  const noiseSized = more !== null && threshold > MORE_CLIENTS_GAIN;
  const minGain = noiseSized
    ? `${signedPct(threshold)} (the noise of ${more.repeats ?? 2} repeats)`
    : signedPct(MORE_CLIENTS_GAIN);
  const clientShown =
    input.clientCpuPct !== null
      ? `client CPU ${pct(input.clientCpuPct)}`
      : input.clientSaturated
        ? 'client saturated'
        : 'client CPU unknown';
  const busyShown = `${clientShown} ${busy ? '>=' : '<'} ${thresholds.clientBusyPct}`;
  const hostShown = hostPct !== null ? `host CPU ${pct(hostPct)}` : '';
  if (more !== null && more.gain >= threshold) {
    if (busy)
      return {
        ruleNo: 3,
        bound: 'client',
        ...base,
        reason:
          `the client's sysbench was at ${clientCpu} of its cores and ${gainText} more: the one client was the ` +
          `limit, not the server`,
        rule: `${gainShown} >= ${minGain}, ${busyShown}`,
      };
    // "No limit" beside a saturated host would contradict its own row: more clients still moved more, so
    // what held the one client back is unclear (the host's CPUs, its own thread, or other load).
    if (hostPct !== null && hostPct >= thresholds.cpuPct)
      return {
        ruleNo: 4,
        bound: 'unclear',
        ...base,
        reason:
          `${gainText} more with this client at only ${clientCpu} of its cores, while this machine's CPUs were ` +
          `${hostPct.toFixed(0)}% busy: neither the client nor the host is shown to be the limit`,
        rule: `${gainShown} >= ${minGain}, ${busyShown}, ${hostShown} >= ${thresholds.cpuPct}`,
      };
    return {
      ruleNo: 4,
      bound: 'none',
      ...base,
      reason: `${gainText} more with this client at only ${clientCpu} of its cores: this load found no limit`,
      rule: `${gainShown} >= ${minGain}, ${busyShown}`,
    };
  }
  // A gain past the fixed +15% but inside the repeats' noise tells neither way.
  if (more !== null && noiseSized && more.gain >= MORE_CLIENTS_GAIN)
    return {
      ruleNo: 5,
      bound: 'unclear',
      ...base,
      reason:
        `${gainText} more, within the noise of the repeats (${signedPct(threshold)}): whether more clients ` +
        `help is not resolved`,
      rule: `${gainShown} < ${minGain}`,
    };
  if (hostPct !== null && hostPct >= thresholds.cpuPct) {
    if (input.coTenant === true)
      return {
        ruleNo: 6,
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
        ruleNo: 6,
        bound: 'unclear',
        ...base,
        reason:
          `this machine's CPUs were ${hostPct.toFixed(0)}% busy (servers and clients share them), but whether more ` +
          `clients move more was not tested (no larger client count): what limited it is unclear`,
        rule: `${hostShown} >= ${thresholds.cpuPct}, no larger client count`,
      };
    return {
      ruleNo: 6,
      bound: 'host',
      ...base,
      reason:
        `this machine's CPUs were ${hostPct.toFixed(0)}% busy (servers and clients share them) and ${gainText} ` +
        `more: the point measures the host, not a class`,
      rule: `${hostShown} >= ${thresholds.cpuPct}, ${gainShown} < ${minGain}`,
    };
  }
  // A busy client is client-bound only when more clients moved more: with none larger, that was not tried.
  if (busy && more === null)
    return {
      ruleNo: 7,
      bound: 'unclear',
      ...base,
      reason:
        `the client was busy (${clientCpu} of its cores), but no larger client count tested whether more ` +
        `clients move more: what limited it is unclear`,
      rule: `${busyShown}, no larger client count`,
    };
  const known = [
    input.serverCpuPct !== null ? `CPU ${input.serverCpuPct.toFixed(0)}%` : 'CPU unknown',
    share !== null ? `network ${(share * 100).toFixed(0)}% of limit` : 'network limit unknown',
  ];
  return {
    ruleNo: 8,
    bound: 'none',
    ...base,
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
