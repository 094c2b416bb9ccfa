/**
 * S2's words about servers that are not identical: a recorded parameter apart means not identical,
 * a gap that holds at every scored thread count is systematic, and unresolved is never "no effect".
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import type { Report } from '../../core/report/model';
import type { RunData } from '../../core/report/load';
import { experiment, plantedRunData, quietNoise } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S2 = experiment('thread-sweep');
const quiet = quietNoise();

/** The lake's server_config as a local run records it: the self-managed pair alone sets flush_neighbors. */
function withConfig(data: RunData): RunData {
  const variants = [...new Set(data.steps.map((st) => st.variant))];
  const row = (variant: string, kind: string, name: string, value: string) => ({ variant, kind, name, value });
  return {
    ...data,
    serverConfig: variants.flatMap((v) => [
      row(v, 'requested', 'innodb_flush_log_at_trx_commit', v === 'aurora-mysql' ? '0' : '2'),
      row(v, 'requested', 'max_connections', '3000'),
      row(v, 'requested', 'thread_handling', v.endsWith('-pool') ? 'pool-of-threads' : 'one-thread-per-connection'),
      ...(v.startsWith('self-managed') ? [row(v, 'requested', 'innodb_flush_neighbors', '0')] : []),
    ]),
  };
}

/** self-managed-per-conn three times as fast in read-only; everything else alike. */
const report = (): Report =>
  buildReport(
    withConfig(
      plantedRunData(
        S2,
        (cell, step) => ({
          tps: cell.variant.name === 'self-managed-per-conn' && step.workload === 'read-only' ? 3000 : 1000,
        }),
        { seed: 3, runId: 's2-identity', noise: quiet },
      ),
    ),
    prices,
  );

const lines = (r: Report): string[] => [
  ...(r.answer?.lines ?? []),
  ...(r.answer?.more ?? []),
  ...r.sections.flatMap((s) => s.findings),
];
const studyRows = (r: Report): readonly (readonly string[])[] =>
  [...(r.answer?.tables ?? []), ...r.sections.flatMap((s) => s.tables)].find(
    (t) => t.title === 'What the study found, and this run',
  )!.rows;

describe('S2: identical servers, systematic gaps and unresolved differences', () => {
  it('never calls servers identical when a recorded parameter differs between them', () => {
    // Act
    const text = lines(report()).join(' ');
    // Assert: the self-managed variants ran innodb_flush_neighbors 0, the others not
    expect(text).not.toMatch(/identically here score up to [\d.]+% of each other \([^)]*self-managed/);
    expect(text).not.toMatch(/self-managed-per-conn \/ rds-mariadb-per-conn \([^)]*identical here\)/);
  });

  it('calls a gap that holds at every scored thread count systematic, with the causes the lake names', () => {
    // Act
    const text = lines(report()).join(' ');
    // Assert
    expect(text).toMatch(
      new RegExp(
        "self-managed-per-conn's read-only score is [\\d.]+% of [a-z-]+'s, its TPS interval above [a-z-]+'s " +
          'at every scored thread count \\([\\d, ]+\\): ' +
          'a systematic difference between these two in this run, not noise',
      ),
    );
    expect(text).toMatch(
      /candidate causes: their recorded parameters \([^)]*innodb_flush_neighbors 0 vs unset: MariaDB's default 1/,
    );
  });

  it('says unresolved, never "no effect", and states the ranking the same way in sentence and table', () => {
    // Act
    const r = report();
    const text = lines(r).join(' ');
    const ranking = studyRows(r).find((row) => row[0]!.startsWith('a ranking of offerings'))![1]!;
    // Assert
    expect(text).not.toMatch(/no effect/);
    expect(text).toMatch(
      /has the highest score in this run, [\d.]+% of [a-z-]+'s \(the next\); one repeat cannot resolve a ranking/,
    );
    expect(ranking).toMatch(
      /^[a-z-]+ the highest score in this run, [\d.]+% of [a-z-]+; one repeat cannot resolve a ranking/,
    );
    expect(ranking).not.toMatch(/no ranking/);
  });

  it('does not claim the absence of a run-order trend, and cannot test connection limits locally', () => {
    // Act
    const r = report();
    const conn = studyRows(r).find((row) => row[0] === 'connection errors at high thread counts')![1]!;
    // Assert
    expect(lines(r).join(' ')).not.toMatch(/no trend of the scores/);
    expect(conn).toMatch(
      /^not testable here: none up to 1,024 threads, but locally every server ran max_connections 3,000 /,
    );
  });

  it('names deadlocks on the scaled data as a scale effect', () => {
    // Arrange: deadlocks from 256 threads in every variant
    const data = withConfig(
      plantedRunData(S2, (_c, step) => ({ tps: 1000, errors: step.threads >= 256 ? 5000 : 0 }), {
        seed: 5,
        runId: 's2-dead',
        noise: quiet,
      }),
    );
    const note = { path: 'data', message: 'scaled for a local rehearsal: 10 x 10,000,000 rows -> 4 x 10,000' };
    const notes = [...(JSON.parse(data.run.notes || '[]') as unknown[]), note];
    // Act
    const text = lines(buildReport({ ...data, run: { ...data.run, notes: JSON.stringify(notes) } }, prices)).join(' ');
    // Assert
    expect(text).toMatch(
      new RegExp(
        'Deadlocks and lock waits above 0\\.1 per 100 committed transactions: .*?; on the scaled data ' +
          '\\(4 x 10,000 rows instead of 10 x 10,000,000\\) many threads contend for few rows: ' +
          'a scale effect, not the offerings\\.',
      ),
    );
  });

  it('answers the headline as not testable, and never says "falls" where the interval reaches 100%', () => {
    // Act
    const r = report();
    const headline = studyRows(r).find((row) => row[0]!.startsWith('the headline: cloud RDS 1.6x self-built'))![1]!;
    const falls = lines(r)
      .join(' ')
      .match(/falls to \d+% \(\d+%–(\d+)%\)/g)
      ?.map((m) => Number(/–(\d+)%/.exec(m)![1]));
    // Assert
    expect(headline).toMatch(/^not testable locally: the cloud offerings and self-managed are one MariaDB/);
    expect((falls ?? []).filter((high) => high >= 100)).toEqual([]);
  });
});
