/**
 * S1's order note says how THIS run's cells ran, read from the lake's step start and end times:
 * at once when steps of different cells overlapped, else one after another, and why when --scale
 * small ran one cell at a time.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { Plan } from '../../core/plan/types';
import type { RunData } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

/** Two variants, three rounds; each step 60 s, a's and b's either at once or one after the other. */
function data(atOnce: boolean, specName: string): RunData {
  const at = (min: number): string => new Date(Date.parse('2026-11-23T01:00:00.000Z') + min * 60_000).toISOString();
  const steps = [1, 2, 3].flatMap((repeat) =>
    (['a', 'b'] as const).map((variant, i) => {
      const start = repeat * 10 + (atOnce ? 0 : 2 * i);
      return stepResult({
        variant,
        step_id: 'ro-t4',
        workload: 'ro',
        repeat,
        started_at: at(start),
        ended_at: at(start + 1),
        tps: (variant === 'a' ? 1000 : 900) + repeat * 7,
        qps: (variant === 'a' ? 16000 : 14400) + repeat * 50,
      });
    }),
  );
  const base = runData(steps);
  const plan = { order: 'interleaved', cells: [], maxConcurrency: atOnce ? 4 : 1 } as unknown as Plan;
  return { ...base, run: { ...base.run, spec_name: specName }, plan };
}

const orderNote = (d: RunData): string =>
  buildReport(d, prices)
    .sections.find((s) => s.id === 'ab')!
    .tables.flatMap((t) => t.notes ?? [])
    .find((n) => n.startsWith('Order:'))!;

describe("S1's order note", () => {
  it('says the variants of a round ran at the same time when their steps overlapped', () => {
    // Act
    const note = orderNote(data(true, 'gvi'));
    // Assert
    expect(note).toMatch(/^Order: interleaved\. The variants of a round ran at the same time in this run/);
    expect(note).toContain('maxConcurrency 4');
    expect(note).not.toContain('one after another');
  });

  it('says one after another, and why, when --scale small ran one cell at a time', () => {
    // Act
    const note = orderNote(data(false, 'gvi-small'));
    // Assert
    expect(note).toContain("one after another in this run (no two cells' steps overlapped in time");
    expect(note).toContain('--scale small runs one cell at a time (maxConcurrency 1)');
  });
});

describe("S1's pair-order caveat", () => {
  const answer = (d: RunData): string => (buildReport(d, prices).answer?.lines ?? []).join('\n');

  it('names the order when b ran right after a in every round, one cell at a time', () => {
    // Act
    const text = answer(data(false, 'gvi-small'));
    // Assert
    expect(text).toContain('Order: b ran right after a in all 3 rounds, so what a left on the host');
  });

  it('says nothing of order when the variants of a round ran at the same time', () => {
    // Act
    const text = answer(data(true, 'gvi'));
    // Assert
    expect(text).not.toContain('Order:');
  });
});
