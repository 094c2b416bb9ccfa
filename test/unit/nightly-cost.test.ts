/** Runs a month of the nightly schedule's cron expression (EventBridge Scheduler syntax) and the monthly cost line. */
import { nightlyCostLines, runsPerMonth } from '../../core/plan/nightly-cost';

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
});
