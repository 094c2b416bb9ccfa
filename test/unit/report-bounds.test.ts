import { classifyBound } from '../../core/report/bounds';

const MB = 1e6;

describe("S4's bound classification", () => {
  it.each([
    // 12 clients: large and xlarge CPU-bound, 2xlarge and 4xlarge network-bound
    ['db.r6i.large', 100, 426 + 1.3, 'cpu'],
    ['db.r6i.xlarge', 98, 898 + 2.8, 'cpu'],
    ['db.r6i.2xlarge', 71, 1540 + 3.8, 'network'],
    ['db.r6i.4xlarge', 29, 1555 + 3.7, 'network'],
  ] as const)('classifies %s (CPU %p%%, %p MB/s) as %s', (_cls, cpu, mbPerS, expected) => {
    // Act
    const r = classifyBound({
      serverCpuPct: cpu,
      networkBytesPerS: mbPerS * MB,
      networkLimitGbps: 12.5,
      clientSaturated: false,
      clientCpuPct: 60,
    });
    // Assert
    expect(r.bound).toBe(expected);
  });

  it("calls the original study's single-client run client-bound, not a server limit", () => {
    // Arrange: one c6i.large, server CPU 31%, 146 MB/s, client CPU up to 100%; 12 clients then moved 426 MB/s
    const single = {
      serverCpuPct: 31,
      networkBytesPerS: 146.4 * MB,
      networkLimitGbps: 12.5,
      clientSaturated: true,
      clientCpuPct: 80,
    };
    // Act
    const r = classifyBound({ ...single, moreClients: { gain: 426 / 146.4 - 1, clients: 12 } });
    const untried = classifyBound(single);
    // Assert: client-bound needs both halves of its one definition: a busy client and more clients moving more.
    expect(r.bound).toBe('client');
    expect(r.networkGbps).toBeCloseTo(1.1712, 4);
    expect(untried.bound).toBe('unclear');
    expect(untried.reason).toMatch(/no larger client count tested whether more clients move more/);
  });

  it("holds the gain to the repeats' noise when it is larger than +15%", () => {
    // Act: +40% with more clients, the one client busy; the repeats' 95% noise is +60%, then +10%.
    const base = { serverCpuPct: 20, networkBytesPerS: 100 * MB, networkLimitGbps: null, clientSaturated: false };
    const noisy = classifyBound({ ...base, clientCpuPct: 80, moreClients: { gain: 0.4, clients: 2, noise: 0.6 } });
    const quiet = classifyBound({ ...base, clientCpuPct: 80, moreClients: { gain: 0.4, clients: 2, noise: 0.1 } });
    // Assert
    expect(noisy.bound).toBe('unclear');
    expect(noisy.rule).toBe('+40% < +60% (the noise of 2 repeats)');
    expect(quiet.bound).toBe('client');
    expect(quiet.rule).toBe('+40% >= +15%, client CPU 80 >= 70');
  });

  it('reports a saturated client alongside a server limit, and "none" when nothing is at a limit', () => {
    // Act
    const both = classifyBound({
      serverCpuPct: 95,
      networkBytesPerS: null,
      networkLimitGbps: null,
      clientSaturated: false,
      clientCpuPct: 97,
    });
    const none = classifyBound({
      serverCpuPct: 50,
      networkBytesPerS: 100 * MB,
      networkLimitGbps: null,
      clientSaturated: false,
      clientCpuPct: 20,
    });
    // Assert
    expect(both).toMatchObject({ bound: 'cpu', clientBusy: true });
    expect(both.reason).toMatch(/client was busy too/);
    expect(none.bound).toBe('none');
    expect(none.reason).toMatch(/network limit unknown/);
  });
});

describe('client-bound from host-bound: the client CPU and what more clients moved', () => {
  const local = { networkBytesPerS: 40 * MB, networkLimitGbps: null, clientSaturated: false, serverCpuPct: 15 };

  it('calls a busy single client whose extra clients moved more client-bound, even on a busy host', () => {
    // Act: sysbench at 75% of its core, the host 100% busy, 2 clients +40%.
    const r = classifyBound({
      ...local,
      clientCpuPct: 75,
      sharedHostCpuPct: 100,
      moreClients: { gain: 0.4, clients: 2 },
    });
    // Assert
    expect(r.bound).toBe('client');
    expect(r.reason).toMatch(/75% of its cores and 2 clients moved \+40% more/);
  });

  it('says host-bound only when more clients did not help and no other run shared the machine', () => {
    // Act
    const alone = classifyBound({
      ...local,
      clientCpuPct: 30,
      sharedHostCpuPct: 98,
      moreClients: { gain: 0.05, clients: 2 },
    });
    const shared = classifyBound({
      ...local,
      clientCpuPct: 30,
      sharedHostCpuPct: 98,
      moreClients: { gain: 0.05, clients: 2 },
      coTenant: true,
    });
    const helped = classifyBound({
      ...local,
      clientCpuPct: 30,
      sharedHostCpuPct: 98,
      moreClients: { gain: 0.6, clients: 2 },
    });
    // Assert
    expect(alone.bound).toBe('host');
    expect(shared.bound).toBe('unclear');
    // More clients moved more, yet the host was saturated: never "no limit reached" beside a 98% busy host.
    expect(helped.bound).toBe('unclear');
    expect(helped.reason).toMatch(/2 clients moved \+60% more .* CPUs were 98% busy/);
    expect(helped.reason).not.toMatch(/would not help|no limit/);
  });

  it('says "no limit" for a small load that more clients outgrew only when the host was not busy', () => {
    // Act
    const r = classifyBound({
      ...local,
      clientCpuPct: 30,
      sharedHostCpuPct: 60,
      moreClients: { gain: 0.6, clients: 2 },
    });
    // Assert
    expect(r.bound).toBe('none');
  });

  it('does not call a point host-bound when no larger client count tested its rule', () => {
    // Act: the host 100% busy, but this point has no run with more clients to compare
    const untested = classifyBound({ ...local, clientCpuPct: 30, sharedHostCpuPct: 100, moreClients: null });
    // Assert
    expect(untested.bound).toBe('unclear');
    expect(untested.reason).toMatch(/not tested \(no larger client count\)/);
  });
});
