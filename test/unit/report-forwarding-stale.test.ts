/** The write-forwarding section shows, per consistency level, the stale reads next to the latency cost. */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzeForwarding, forwardingSection } from '../../core/report/studies/forwarding';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

function consistencyTable(steps: Parameters<typeof runData>[0]) {
  // Each step's workload options come from the spec: here the level only.
  const spec = {
    name: 'fwd',
    variants: [],
    workloads: ['EVENTUAL', 'SESSION', 'GLOBAL'].map((level) => ({
      name: `rw-${level}`,
      script: 'rw_consistency.lua',
      threads: [8],
      options: { consistency: level },
    })),
  } as never;
  const findings = analyzeForwarding(makeContext(runData(steps, spec), prices));
  const section = findings === null ? null : forwardingSection(findings);
  return {
    findings,
    section,
    table: [...(section?.tables ?? []), ...(section?.answer?.tables ?? [])].find((t) =>
      t.title.startsWith('Read consistency'),
    ),
  };
}

describe('write forwarding: stale reads per consistency level', () => {
  it("puts each level's stale reads (summed over repeats) next to its latency, and names them in the findings", () => {
    // Arrange: EVENTUAL misses some of its own writes, SESSION and GLOBAL none.
    const level = (name: string, repeat: number, stale: number, latPct: number) =>
      stepResult({
        variant: 'wf',
        step_id: `rw-${name}-t8`,
        workload: `rw-${name}`,
        target: 'reader',
        repeat,
        lat_pct_ms: latPct,
        stale_reads: stale,
        read_back_checks: 1000,
      });
    const steps = [
      level('EVENTUAL', 1, 30, 25),
      level('EVENTUAL', 2, 20, 26),
      level('SESSION', 1, 0, 28),
      level('SESSION', 2, 0, 29),
      level('GLOBAL', 1, 0, 40),
      level('GLOBAL', 2, 0, 41),
    ];

    // Act
    const { findings, section, table } = consistencyTable(steps);

    // Assert
    expect(table!.head[table!.head.length - 1]).toBe('stale reads');
    expect(table!.rows.map((r) => [r[0], r[r.length - 1]])).toEqual([
      ['EVENTUAL', '50 / 2,000 (2.50%)'],
      ['SESSION', '0 / 2,000 (0.00%)'],
      ['GLOBAL', '0 / 2,000 (0.00%)'],
    ]);
    expect(findings!.consistency.map((c) => [c.level, c.staleReads])).toEqual([
      ['EVENTUAL', { stale: 50, checks: 2000 }],
      ['SESSION', { stale: 0, checks: 2000 }],
      ['GLOBAL', { stale: 0, checks: 2000 }],
    ]);
    expect(section!.answer!.lines.join(' ')).toMatch(
      /Stale reads after the session's own write: EVENTUAL 50 \/ 2,000 \(2\.50%\), SESSION 0 \/ 2,000/,
    );
  });

  it('says stale reads are not measured when the rows carry no read-after-write counts', () => {
    // Arrange
    const steps = ['EVENTUAL', 'SESSION'].map((name) =>
      stepResult({ variant: 'wf', step_id: `rw-${name}-t8`, workload: `rw-${name}`, target: 'reader' }),
    );

    // Act
    const { table } = consistencyTable(steps);

    // Assert
    expect(table!.rows.map((r) => r[r.length - 1])).toEqual(['not measured', 'not measured']);
    expect(table!.notes).toContain(
      "This run's rows carry no read-after-write counts, so stale reads are not measured.",
    );
  });
});
