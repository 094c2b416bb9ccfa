/** The rate-sweep knee says when a client, not the server, was saturated. */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateVariantSentence } from '../../core/report/studies/rate';
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

describe('rate sweep: client saturation', () => {
  it("marks client-bound points; says the knee may be the client's if the client saturated before it", () => {
    // Arrange: achieved stops tracking at 4000/s, where the client's CPU was already saturated.
    const steps = sweep([
      { rate: 1000, tps: 1000 },
      { rate: 2000, tps: 2000 },
      { rate: 4000, tps: 2600, saturated: true },
      { rate: 8000, tps: 2700, saturated: true },
    ]);

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;

    // Assert
    const v = f.sweeps[0]!.variants[0]!;
    expect(v.repeats[0]).toMatchObject({
      kneeOffered: 2000,
      saturatedAtOffered: 4000,
      reason: 'throughput',
      clientBoundFrom: 4000,
    });
    expect(v.points.filter((p) => p.clientBound).map((p) => p.offered)).toEqual([4000, 8000]);
    expect(rateVariantSentence(f.sweeps[0]!, v)).toMatch(
      /The client saturated its CPU from 4,000\/s offered: the knee may be the client's\.$/,
    );
  });

  it('says nothing of the client when no client saturated', () => {
    // Arrange
    const steps = sweep([
      { rate: 1000, tps: 1000 },
      { rate: 2000, tps: 2000 },
      { rate: 4000, tps: 2600 },
    ]);

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;

    // Assert
    const v = f.sweeps[0]!.variants[0]!;
    expect(v.repeats[0]!.clientBoundFrom).toBeNull();
    expect(rateVariantSentence(f.sweeps[0]!, v)).not.toMatch(/client/);
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
    const f = analyzeRate(makeContext(runData(steps), prices))!;

    // Assert
    const v = f.sweeps[0]!.variants[0]!;
    expect(v.repeats[0]).toMatchObject({ saturatedAtOffered: 4000, clientBoundFrom: 8000 });
    expect(rateVariantSentence(f.sweeps[0]!, v)).not.toMatch(/may be the client's/);
  });
});
