/** Runs a month of the nightly schedule's cron expression (EventBridge Scheduler syntax) and the monthly cost line. */
import { join } from 'node:path';
import { quietNightShare } from '../../core/cli/rounds-plan';
import { loadSpecFile } from '../../core/experiment/validate';
import { nightlyCostLines, runsPerMonth } from '../../core/plan/nightly-cost';

const repoRoot = join(__dirname, '..', '..');
const workloads = join(repoRoot, 'client', 'workloads');

describe('runsPerMonth', () => {
  it('counts a daily run, week days and several times a day in an average month (365.2425 / 12 days)', () => {
    // Act / Assert
    expect(runsPerMonth('cron(0 2 * * ? *)')).toBeCloseTo(30.436875, 6);
    expect(runsPerMonth('cron(0 2 ? * MON-FRI *)')).toBeCloseTo((30.436875 * 5) / 7, 6);
    expect(runsPerMonth('cron(0 2 ? * 1,7 *)')).toBeCloseTo((30.436875 * 2) / 7, 6);
    expect(runsPerMonth('cron(0,30 2,14 * * ? *)')).toBeCloseTo(30.436875 * 4, 6);
  });

  it('counts nothing it cannot count exactly: steps, ranges of hours, single days of the month, rate()', () => {
    expect(runsPerMonth('cron(0/15 2 * * ? *)')).toBeUndefined();
    expect(runsPerMonth('cron(0 1-3 * * ? *)')).toBeUndefined();
    expect(runsPerMonth('cron(0 2 1 * ? *)')).toBeUndefined();
    expect(runsPerMonth('rate(1 day)')).toBeUndefined();
  });
});

describe('nightlyCostLines', () => {
  it('multiplies the runs a month by the cost of a run and says whether the schedule is on', () => {
    // Act
    const [line] = nightlyCostLines(
      { enabled: false, cron: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin' },
      2,
      'USD',
      'as of 2025',
      (v) => `$${v.toFixed(2)}`,
    );
    // Assert
    expect(line).toBe(
      'Nightly schedule cron(0 2 * * ? *) Europe/Berlin (cdk.json aurora-bench.nightly, off in cdk.json (set ' +
        'aurora-bench.nightly.enabled to true to deploy it)): ' +
        '30.4 runs a month x $2.00 a run = about $60.87 a month (USD, the on-demand prices above, as of 2025)',
    );
  });

  it('prices a month at the cost of a night when nothing moved when the runs stop early, and says the most', () => {
    // Act: a run priced at 3 rounds, of which a quiet night is expected to take 1.2.
    const [line] = nightlyCostLines(
      { enabled: true, cron: 'cron(0 2 * * ? *)', timeZone: 'UTC' },
      3,
      'USD',
      'as of 2025',
      (v) => `$${v.toFixed(2)}`,
      0.4,
    );
    // Assert
    expect(line).toContain('30.4 runs a month x $1.20 a run when nothing moved = about $36.52 a month');
    expect(line).toContain('(at most $91.31, every run at its maximum rounds;');
  });
});

describe('plan of the nightly experiment (rounds against its history)', () => {
  it('prices the expected quiet night, about 1.1 of its 3 rounds, under 60% of two fixed repeats', () => {
    // Arrange
    const { spec } = loadSpecFile(join(repoRoot, 'experiments', 'nightly-regression.json'), workloads);

    // Act
    const share = quietNightShare(spec)!;

    // Assert: two fixed repeats cost 2/3 of the 3-round maximum.
    expect(share * 3).toBeGreaterThanOrEqual(1);
    expect(share * 3).toBeLessThan(1.2);
    expect(share / (2 / 3)).toBeLessThan(0.6);
  });
});
