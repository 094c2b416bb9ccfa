/**
 * What a local, scaled-down run's report says about how far it is from the study: the banner names
 * what --scale small changed, a short run's tail says how few transactions it rests on, and the class
 * note names only what differs between the classes.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import { buildReport, renderTerminal } from '../../core/report/report';
import { comparedOnAws } from '../../core/experiment/scale';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

const SCALE_NOTES = [
  { level: 'info', path: 'data', message: 'scaled for a local rehearsal: 1 x 1,000,000 rows -> 1 x 10,000' },
  {
    level: 'info',
    path: 'defaults',
    message: 'scaled for a local rehearsal: steps of at most 8 s (+1 s warm-up), 1 s report interval',
  },
  { level: 'info', path: 'variants[0].clients.count', message: 'scaled for a local rehearsal: 12 clients -> 2' },
  { level: 'info', path: 'variants[1].clients.count', message: 'scaled for a local rehearsal: 12 clients -> 2' },
  { level: 'info', path: 'workloads[0].threads', message: 'scaled for a local rehearsal: threads [1, 2] -> [1]' },
];

function localSmall(data: RunData, notes: unknown[]): RunData {
  return {
    ...data,
    run: { ...data.run, backend: 'local', spec_name: 'study-small', notes: JSON.stringify(notes) },
  };
}

describe('a local --scale small report', () => {
  it('names what the scale-down changed in the banner, once per change', () => {
    // Arrange
    const data = localSmall(runData([stepResult({ variant: 'a', step_id: 'rw' })]), SCALE_NOTES);

    // Act
    const banner = buildReport(data, prices).banner ?? '';

    // Assert
    expect(banner).toContain('1 x 1,000,000 rows -> 1 x 10,000');
    expect(banner).toContain('steps of at most 8 s (+1 s warm-up)');
    expect(banner.split('12 clients -> 2')).toHaveLength(2);
    expect(banner).not.toContain('threads [1, 2]');
    expect(banner).not.toContain('fewer rows, shorter steps');
  });

  it("says how few transactions a short run's widest p99 rests on", () => {
    // Arrange: 150 transactions a run: its p99 is its slowest one or two.
    const steps = [1, 2].map((repeat) =>
      stepResult({ variant: 'a', step_id: 'rw', repeat, events: 150, lat_p50_ms: 10, lat_p99_ms: 40, lat_max_ms: 60 }),
    );

    // Act
    const text = renderTerminal(buildReport(runData(steps), prices));

    // Assert
    expect(text).toMatch(/Widest tail: .*about 150 transactions a run, so that p99 is the run's 2 slowest/);
  });

  it("keeps a long run's widest tail without the sample-size caveat", () => {
    const steps = [
      stepResult({ variant: 'a', step_id: 'rw', events: 50_000, lat_p50_ms: 10, lat_p99_ms: 40, lat_max_ms: 60 }),
    ];
    const text = renderTerminal(buildReport(runData(steps), prices));
    expect(text).toContain('Widest tail:');
    expect(text).not.toContain('transactions a run, so that p99');
  });

  it('names only what differs between the classes in the local class note', () => {
    expect(comparedOnAws(['db.r6i.large', 'db.r6i.xlarge'])).toBe('class sizes are');
    expect(comparedOnAws(['db.r5.2xlarge', 'db.r6g.2xlarge'])).toBe(
      'processor families (such as Graviton vs Intel) are',
    );
    expect(comparedOnAws(['db.r5.large', 'db.r6g.2xlarge'])).toBe(
      'processor families (such as Graviton vs Intel) and class sizes are',
    );
  });
});
