/** S5's knee is a bracket between two offered rates, never the lowest rate offered printed as a measured point. */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeRate, rateSection } from '../../core/report/studies/rate';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

describe("S5's knee", () => {
  it('is "between 0.5x and 0.9x" of capacity when only the lowest rate kept up; the grid cannot place it', () => {
    // Arrange: two repeats, each probed at its own capacity; 0.5x keeps up, 0.9x falls behind, 1.5x overloads.
    const steps = [1, 2].flatMap((repeat) => {
      const cap = repeat === 1 ? 8600 : 9000;
      const at = (x: number, achieved: number, status: 'ok' | 'overloaded' = 'ok') =>
        stepResult({
          variant: 'r6g',
          repeat,
          step_id: `ins-t96-c${x * 100}`,
          workload: 'ins',
          threads: 96,
          rate: 1,
          offered_tps: cap * x,
          tps: achieved,
          lat_pct_ms: 5,
          status,
        });
      return [
        stepResult({ variant: 'r6g', repeat, step_id: 'ins-t96', workload: 'ins', threads: 96, tps: cap }),
        at(0.5, cap * 0.5),
        at(0.9, cap * 0.7),
        at(1.5, cap * 0.9, 'overloaded'),
      ];
    });

    // Act
    const f = analyzeRate(makeContext(runData(steps), prices))!;
    const answer = rateSection(f).answer!.lines.join('\n');

    // Assert
    // Over the repeats: the lowest rate one kept up with and the highest one did not keep up with (lower < upper).
    expect(answer).toMatch(/knee r6g between 4,300 and 8,100\/s offered \(0\.5x and 0\.9x the unlimited-rate TPS\)/);
    expect(answer).toMatch(/A sweep of 3 rates .* cannot place a knee: .* add rates between them\./);
    expect(answer).not.toMatch(/knee \(highest offered rate kept up with\) r6g 4,300–4,500\/s/);
  });
});
