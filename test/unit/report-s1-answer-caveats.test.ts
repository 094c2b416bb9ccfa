/**
 * S1's caveats on planted runs (test/helpers/planted-lakes.ts): a repeat far from its sibling is
 * flagged where its ratio is quoted, an A/A price-performance verdict is read as the price
 * difference, the priced region is among the Appendix's deviations, and the Answer says the cells
 * ran one at a time.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport, renderTerminal } from '../../core/report/report';
import { widthText } from '../../core/report/studies/ab';
import type { RatioFinding } from '../../core/report/findings';
import type { Report } from '../../core/report/model';
import type { NoiseModel } from '../../bench/noise-model';
import { experiment, plantedRunData, type Truth } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S1 = experiment('graviton-vs-intel');

/** Little noise (0.5% a run), so what the report says follows from the planted truth. */
const quiet: NoiseModel = {
  runs: { sigma: 0.005, phi: 0, df: 100 },
  intervals: { sigma: 0.005, phi: 0, df: 100 },
  levels: {},
};

const report = (truth: Truth, runId: string): Report =>
  buildReport(plantedRunData(S1, truth, { seed: 1, runId, scale: 'small', noise: quiet }), prices);

const answer = (r: Report): string[] => [...(r.answer?.lines ?? []), ...(r.answer?.more ?? [])];

describe("S1's Answer caveats", () => {
  it('flags a repeat far from its sibling where its ratio is quoted, and states the rule once', () => {
    // Arrange: r6g-a's first repeat at a third of its second; every other repeat alike.
    const r = report(
      (cell) => ({ tps: cell.variant.name === 'r6g-a' && cell.repeat === 1 ? 400 : 1200, latPctMs: 40 }),
      's1-far',
    );
    // Assert
    const text = renderTerminal(r);
    const lineA = text.split('\n').find((l) => l.includes('AZ a, r6g-a vs r5-a'))!;
    expect(lineA).toMatch(/r6g-a's repeats [\d,]+ and [\d,]+ QPS far apart †/);
    expect(text.split('\n').find((l) => l.includes('AZ b, r6g-b vs r5-b'))).not.toContain('†');
    expect(text.match(/†: a repeat more than 1\.5× above or below/g)).toHaveLength(1);
  });

  it('reads an A/A price-performance "better" as the method seeing the price difference, in both places', () => {
    // Arrange: identical servers, no noise: TPS ratio 100%, so price-performance is 100% over the price ratio.
    const r = report(() => ({ tps: 1000, latPctMs: 40 }), 's1-aa-price');
    // Assert
    const text = renderTerminal(r);
    const price = text.split('\n').filter((l) => /[Ee]qual throughput would give (the variant )?111\.76%/.test(l));
    // The Answer's price line and the Price-performance section's AZ lines: the price list, every interval holding it.
    expect(price.some((l) => l.includes('* Price: no per-USD winner can show here: r6g-a/r5-a and r6g-b/r5-b'))).toBe(
      true,
    );
    expect(price.some((l) => l.includes('* AZ b: r6g-b'))).toBe(true);
    expect(price.every((l) => /every interval includes (that figure|111\.76%)/.test(l))).toBe(true);
  });

  it('names the priced region among the deviations and the one-at-a-time run in the Answer', () => {
    // Act
    const r = report(() => ({ tps: 1000, latPctMs: 40 }), 's1-deviations');
    // Assert
    const deviation = r.meta.find(([k]) => k === 'deviation (prices)')?.[1] ?? '';
    expect(deviation).toContain("us-east-1's (the experiment's region): price ratio 89.48%");
    expect(deviation).toContain("cn-northwest-1 prices (the S1 study author's table");
    expect(deviation).toContain('give 92.61%');
    expect(renderTerminal(r)).toContain("--scale small ran one cell at a time, not a round's clusters at once");
    expect(answer(r).join(' ')).not.toMatch(/ would \(/);
  });

  it('keeps the Answer to five findings, the price line among them, the AZ spread with its evidence', () => {
    // Arrange: identical servers: nothing beyond the noise, so the one-in-twenty caution has nothing to read.
    const r = report(() => ({ tps: 1000, latPctMs: 40 }), 's1-five');
    // Assert
    expect(r.answer?.more ?? []).toEqual([]);
    const lines = r.answer?.lines ?? [];
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(lines.some((l) => l.startsWith('Price: no per-USD winner'))).toBe(true);
    expect(lines.some((l) => l.startsWith('Besides the classes'))).toBe(true);
    expect(lines.some((l) => l.startsWith('The same class in AZ '))).toBe(false);
    const ab = r.sections.find((s) => s.id === 'ab');
    expect(ab?.findings.some((l) => l.startsWith('The same class in AZ '))).toBe(true);
  });

  it('gives a CI width from the unrounded ends, and only a bound where the high end is past the printed range', () => {
    const ratio = (low: number, high: number): RatioFinding =>
      ({ estimate: 0.699, interval: { low, high, covers: 'run-to-run' } }) as unknown as RatioFinding;
    // "<10%–662.3%": the width is 662.3 minus a low end under 10, never past 990.
    expect(widthText(ratio(0.074, 6.623))).toBe('654.9 pts');
    expect(widthText(ratio(0.05, 12))).toBe('> 995 pts');
    expect(widthText(ratio(0.5, 11))).toBe('> 950 pts');
  });
});
