/**
 * Every sentence of a report agrees with the tables beside it (test/helpers/report-claims.ts), in
 * the terminal, on the HTML page and in `--json`: over the real local runs kept in
 * test/fixtures/lakes/local-small and over seeded synthetic runs of every study's experiment file
 * with noise drawn from this machine's fitted noise model (test/helpers/planted-lakes.ts).
 */
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import { loadRun, type RunData } from '../../core/report/load';
import { buildReport, renderHtml, renderJson } from '../../core/report/report';
import type { ReportSection } from '../../core/report/model';
import { checkHtml, checkJson, checkReport } from '../helpers/report-claims';
import { experiment, plantedRunData, recordedNoise } from '../helpers/planted-lakes';

const repoRoot = resolve(__dirname, '../..');
const lake = resolve(repoRoot, 'test', 'fixtures', 'lakes', 'local-small');
const prices = loadPrices(repoRoot);
const noise = recordedNoise();

/** The sections whose sentences are held to their tables. */
const CHECKED: ReportSection['id'][] = ['ab', 'price', 'sweep', 'forwarding', 'network', 'rate'];

function problems(data: RunData): string[] {
  const report = buildReport(data, prices);
  return [
    ...checkReport(report, { sections: CHECKED }),
    ...checkHtml(report, renderHtml(report)),
    ...checkJson(report, renderJson(report), { sections: CHECKED }),
  ].map((c) => `[${c.section}] ${c.problem}\n    in: ${c.sentence}`);
}

const FIXTURE_RUNS = [
  'graviton-vs-intel-small-20261127-112059-afed',
  'thread-sweep-small-20261127-114932-da85',
  'write-forwarding-small-20261127-113707-596c',
  'rate-sweep-small-20261127-112604-f737',
];

describe('sentences agree with their tables', () => {
  it.each(FIXTURE_RUNS)('real local run %s', async (runId) => {
    const data = await withLake(lake, (l) => loadRun(l, runId));
    expect(problems(data)).toEqual([]);
  });

  const STUDIES = ['graviton-vs-intel', 'thread-sweep', 'write-forwarding', 'network-throughput', 'rate-sweep'];
  it.each(STUDIES)('seeded synthetic runs of %s', (study) => {
    const found = new Set<string>();
    for (let seed = 1; seed <= 5; seed++) {
      const data = plantedRunData(
        experiment(study),
        (cell, step) => ({
          tps: (1000 * (cell.variant.name.length % 3 === 0 ? 1.1 : 1) * Math.min(step.threads, 64)) / 64 + 100,
        }),
        { seed, runId: `${study}-${seed}`, noise },
      );
      for (const p of problems(data)) found.add(p);
    }
    expect([...found]).toEqual([]);
  });
});
