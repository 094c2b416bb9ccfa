/**
 * The report of a judged run shows its verdicts (the lake's verdicts
 * table), regressions first; an unjudged run has no such section.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { verdictsSection } from '../../core/report/verdicts-section';
import { verdictRow } from '../helpers/lake-fixtures';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));
const steps = [stepResult({ variant: 'a', step_id: 'rw-t4' })];

describe('verdictsSection', () => {
  it('lists every verdict, regressions first, and names each regression and improvement in the findings', () => {
    // Arrange
    const verdicts = [
      verdictRow({ run_id: 'r', metric: 'qps', verdict: 'within-noise' }),
      verdictRow({ run_id: 'r', metric: 'latency', verdict: 'improved', value: 8, baseline_mean: 10, ratio: 0.8 }),
      verdictRow({ run_id: 'r', metric: 'tps', verdict: 'regressed', value: 700, baseline_mean: 1000, ratio: 0.7 }),
    ];

    // Act
    const section = verdictsSection(makeContext({ ...runData(steps), verdicts }, prices));

    // Assert
    expect(section!.tables[0]!.rows.map((r) => [r[1], r[2], r[6]])).toEqual([
      ['TPS', 'REGRESSED', '70.0%'],
      ['p95 latency', 'improved', '80.0%'],
      ['QPS', 'within the noise', '100.0%'],
    ]);
    expect(section!.findings[0]).toMatch(
      /^1 regressed, 1 improved, 1 within the noise, 0 with the noise unknown, 0 not judged/,
    );
    expect(section!.findings.slice(1)).toEqual([
      'REGRESSED: rw t4 [a] TPS 700 against 1,000 (70.0% of the baseline of 3 runs)',
      expect.stringMatching(/^improved: rw t4 \[a\] p95 latency/),
    ]);
  });

  it('is left out for a run without verdicts', () => {
    expect(verdictsSection(makeContext(runData(steps), prices))).toBeNull();
    expect(verdictsSection(makeContext({ ...runData(steps), verdicts: [] }, prices))).toBeNull();
  });
});
