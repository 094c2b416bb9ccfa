/**
 * S5's words: one name per concept ("capacity" = the highest rate achieved; the rates offered are multiples
 * of the "unlimited-rate TPS"), and price-performance of one server twice said as the price list plus noise,
 * with where the noise is read.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { Report } from '../../core/report/model';
import { buildReport, renderTerminal } from '../../core/report/report';
import { experiment, plantedRunData, type Truth } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S5 = experiment('rate-sweep');
/** A = B: the same capacity for every variant. */
const same: Truth = () => ({ tps: 2000 });

const text = (r: Report): string => renderTerminal(r);

describe('S5 words on an A/A sweep', () => {
  it('never calls the offered multiples "capacity", and says a price point cannot be judged', () => {
    for (let seed = 1; seed <= 3; seed++) {
      // Act
      const r = buildReport(plantedRunData(S5, same, { seed, runId: `s5w-${seed}` }), prices);
      const out = text(r);
      // Assert
      expect(out).not.toMatch(/\dx capacity/);
      expect(out).toMatch(/@0\.5x unlimited-rate TPS/);
      const price = out.split('\n').find((l) => /is priced at .* per hour/.test(l))!;
      // One server twice: the per-USD figures are the price list plus noise, said with where the noise is read.
      expect(price).toMatch(
        /here they are the same server, so equal throughput would give 111\.76% transactions per USD/,
      );
      expect(price).toMatch(/point estimates\b.*(intervals? include|their noise: the capacity ratios' intervals)/);
      expect(price).not.toMatch(/\b(worse|better|faster|slower)\b/);
    }
  });
});
