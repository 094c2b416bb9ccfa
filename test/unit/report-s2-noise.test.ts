/**
 * S2's noise and its ranking on planted truths: servers that differ only in parameters a workload
 * cannot feel are a noise pair for it; one noise figure judges every comparison; a lead that exists
 * only where its commit settings act is named as those settings, not the offering.
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

/** As a local run records it: aurora-mysql's commit flush 0, the self-managed pair's flush_neighbors 0. */
function withConfig(data: RunData): RunData {
  const variants = [...new Set(data.steps.map((st) => st.variant))];
  const row = (variant: string, kind: string, name: string, value: string) => ({ variant, kind, name, value });
  // As the plan notes it: MariaDB has no innodb_trx_commit_allow_data_loss, so it is not applied locally.
  const note = {
    path: 'variants[name=aurora-mysql].clusterParameters.innodb_trx_commit_allow_data_loss',
    message: 'not applicable locally: MariaDB has no system variable innodb_trx_commit_allow_data_loss',
  };
  const notes = [...(JSON.parse(data.run.notes || '[]') as unknown[]), note];
  return {
    ...data,
    run: { ...data.run, notes: JSON.stringify(notes) },
    serverConfig: variants.flatMap((v) => [
      row(v, 'requested', 'innodb_flush_log_at_trx_commit', v === 'aurora-mysql' ? '0' : '2'),
      row(v, 'requested', 'max_connections', '3000'),
      row(v, 'requested', 'thread_handling', v.endsWith('-pool') ? 'pool-of-threads' : 'one-thread-per-connection'),
      ...(v.startsWith('self-managed') ? [row(v, 'requested', 'innodb_flush_neighbors', '0')] : []),
    ]),
  };
}

/**
 * aurora-mysql three times as fast where it commits, a little slower in read-only; in read-only
 * rds-mariadb-pool 1.6x self-managed-pool at 8 threads alone (they differ only in flush_neighbors).
 */
const report = (): Report =>
  buildReport(
    withConfig(
      plantedRunData(
        S2,
        (cell, step) => {
          const v = cell.variant.name;
          if (v === 'aurora-mysql') return { tps: step.workload === 'read-only' ? 950 : 3000 };
          if (v === 'rds-mariadb-pool' && step.workload === 'read-only' && step.threads === 8) return { tps: 1600 };
          return { tps: 1000 };
        },
        { seed: 7, runId: 's2-noise', noise: quiet },
      ),
    ),
    prices,
  );

const answer = (r: Report): readonly string[] => r.answer?.lines ?? [];

describe('S2 noise and ranking', () => {
  it('counts servers that differ only in a parameter read-only cannot feel as a noise pair', () => {
    // Act
    const text = answer(report()).join(' ');
    // Assert: flush_neighbors acts on no read-only step, so their 8-thread gap is this run's noise
    expect(text).toMatch(
      new RegExp(
        'the widest gap between servers that ran alike here is 1[01]\\d\\.\\d% ' +
          '\\(read-only score, rds-mariadb-pool over self-managed-pool',
      ),
    );
  });

  it('judges the thread-pool ratios against that one noise figure', () => {
    // Act
    const r = report();
    const pool = answer(r).find((l) => l.startsWith('Thread pool'))!;
    const row = [...r.answer!.tables]
      .find((t) => t.title === 'What the study found, and this run')!
      .rows.find((x) => x[0]!.startsWith('a thread pool'))![1]!;
    // Assert: the sentence and the table quote the same noise, and say inside
    const noise = /servers that ran alike here is ([\d.]+%)/.exec(pool)![1]!;
    expect(pool).toMatch(/; all inside this run's noise: /);
    expect(row).toContain(`noise up to ${noise}`);
    expect(row).not.toContain('outside');
  });

  it('names a lead that exists only where its commit settings act as those settings', () => {
    // Act
    const text = answer(report()).join(' ');
    // Assert
    expect(text).toMatch(
      new RegExp(
        "aurora-mysql's lead \\([\\d.]+% of [a-z-]+'s score\\) is most likely its commit settings " +
          '\\(untested: no variant ran both settings; it also ran first\\): ' +
          'it alone ran innodb_flush_log_at_trx_commit 0 \\(others 2\\)',
      ),
    );
    // Planted: 3,000 TPS against 1,000 where it commits, 950 in read-only (the best there scores 100)
    expect(text).toMatch(
      /it scores [23]\.\d–3\.\d× the others only in the workloads that commit \(read-write, write-only\)/,
    );
    expect(text).toMatch(/in read-only, which commits nothing, [89]\d\.\d against the best's 100/);
    expect(text).not.toMatch(/commit settings, not the offering|not first/);
    expect(text).not.toMatch(/aurora-mysql has the highest score/);
  });

  it('keeps the Answer to its verdicts: the per-workload fall-offs stay in the evidence', () => {
    // Act
    const r = report();
    const sweep = r.sections.find((s) => s.id === 'sweep')!;
    // Assert
    expect(answer(r).length).toBeLessThanOrEqual(5);
    expect(answer(r).join(' ')).not.toMatch(/^read-write: /m);
    expect(sweep.findings.some((l) => l.startsWith('read-write: '))).toBe(true);
  });
});

describe("S2's appendix", () => {
  it('names a self-managed variant by its EC2 class, as the price table does', () => {
    // Act
    const variants = report().meta.find(([k]) => k === 'variants')![1];
    // Assert
    expect(variants).toContain('self-managed-pool (EC2 r6g.2xlarge)');
    expect(variants).not.toMatch(/self-managed-[a-z-]+ \(db\./);
    expect(variants).toContain('rds-mysql (db.r6g.2xlarge)');
  });
});
