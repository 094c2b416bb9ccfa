/** The rate-sweep knee says when a client, not the server, was saturated. */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext, rateSection } from '../../core/report/sections';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

/** One variant's sweep: offered rates with achieved TPS, and which points had a saturated client. */
function sweep(points: readonly { rate: number; tps: number; saturated?: boolean }[]) {
  return points.map((p, i) =>
    stepResult({
      variant: 'r6g',
      step_id: `rw-r${p.rate}`,
      workload: 'rw',
      step_index: i,
      rate: p.rate,
      offered_tps: p.rate,
      tps: p.tps,
      lat_pct_ms: 1,
      saturated_clients: p.saturated ? 1 : 0,
    }),
  );
}

describe('rateSection: client saturation', () => {
  it("marks the client-bound points and says the knee may be the client's when the client saturated before the knee", () => {
    // Arrange: achieved stops tracking at 4000/s, where the client's CPU was already saturated.
    const steps = sweep([
      { rate: 1000, tps: 1000 },
      { rate: 2000, tps: 2000 },
      { rate: 4000, tps: 2600, saturated: true },
      { rate: 8000, tps: 2700, saturated: true },
    ]);

    // Act
    const section = rateSection(makeContext(runData(steps), prices))!;

    // Assert
    const table = section.tables[0]!;
    expect(table.head[table.head.length - 1]).toBe('client saturated at (offered/s)');
    expect(table.rows[0]!.slice(2, 4)).toEqual(['2,000', '4,000 (throughput)']);
    expect(table.rows[0]![table.rows[0]!.length - 1]).toBe('4,000, 8,000 (client-bound)');
    expect(section.findings[0]).toMatch(/The client saturated its CPU from 4,000\/s offered: the knee may be the client's, not the server's\.$/);
  });

  it('says nothing of the client when no client saturated', () => {
    // Arrange
    const steps = sweep([
      { rate: 1000, tps: 1000 },
      { rate: 2000, tps: 2000 },
      { rate: 4000, tps: 2600 },
    ]);

    // Act
    const section = rateSection(makeContext(runData(steps), prices))!;

    // Assert
    expect(section.tables[0]!.rows[0]![section.tables[0]!.rows[0]!.length - 1]).toBe('-');
    expect(section.findings[0]).not.toMatch(/client/);
  });

  it("does not blame the client when it saturated only after the server's knee", () => {
    // Arrange: the server saturates at 4000/s; the client only at 8000/s.
    const steps = sweep([
      { rate: 1000, tps: 1000 },
      { rate: 2000, tps: 2000 },
      { rate: 4000, tps: 2600 },
      { rate: 8000, tps: 2700, saturated: true },
    ]);

    // Act
    const section = rateSection(makeContext(runData(steps), prices))!;

    // Assert
    expect(section.tables[0]!.rows[0]![section.tables[0]!.rows[0]!.length - 1]).toBe('8,000 (client-bound)');
    expect(section.findings[0]).not.toMatch(/may be the client's/);
  });
});
