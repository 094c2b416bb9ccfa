/**
 * S2's report on planted truths, round 2: the local topology stated once, the noise yardstick with
 * its basis, the fall-off wording as a share of the peak, and the pool's tail latency per workload.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import type { Report, TableBlock } from '../../core/report/model';
import type { RunData } from '../../core/report/load';
import { experiment, plantedRunData, quietNoise } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S2 = experiment('thread-sweep');
const quiet = quietNoise();

/** As a local run records it: every server a lone writer with its binary log on. */
function withConfig(data: RunData): RunData {
  const variants = [...new Set(data.steps.map((st) => st.variant))];
  const row = (variant: string, kind: string, name: string, value: string) => ({ variant, kind, name, value });
  return {
    ...data,
    serverConfig: variants.flatMap((v) => [
      row(v, 'requested', 'innodb_flush_log_at_trx_commit', v === 'aurora-mysql' ? '0' : '2'),
      row(v, 'requested', 'thread_handling', v.endsWith('-pool') ? 'pool-of-threads' : 'one-thread-per-connection'),
      row(v, 'performance', 'log_bin', 'ON'),
      ...(v.startsWith('self-managed') ? [row(v, 'requested', 'innodb_flush_neighbors', '0')] : []),
    ]),
  };
}

/** In read-only self-managed-pool reads 600 TPS at 8 threads alone (1,000 elsewhere); its twin reads 1,000. */
const report = (fall = false): Report =>
  buildReport(
    withConfig(
      plantedRunData(
        S2,
        (cell, step) => {
          const v = cell.variant.name;
          if (v === 'self-managed-pool' && step.workload === 'read-only' && step.threads === 8) return { tps: 600 };
          // With a fall: every variant half its peak past 64 threads.
          return { tps: fall && step.threads > 64 ? 500 : 1000 };
        },
        { seed: 7, runId: 's2-round2', noise: quiet },
      ),
    ),
    prices,
  );

const answerTable = (r: Report, title: string): TableBlock => r.answer!.tables.find((t) => t.title.startsWith(title))!;

describe("S2's local topology", () => {
  it('states once what every variant ran as: a lone writer, binary log on', () => {
    // Act
    const rows = answerTable(report(), 'What else shapes these numbers').rows;
    // Assert: the plan gives every variant 0 readers, as the price note counts them
    expect(rows).toContainEqual([
      'servers each variant ran as (locally)',
      'every variant: one server (the writer), no replicas, binary log on; ' +
        'replication (the study: asynchronous) not run',
    ]);
  });
});

describe("S2's noise yardstick", () => {
  it('names the point behind the widest gap, and shows the A/A pair beside it', () => {
    // Act
    const r = report();
    const pool = r.answer!.lines.find((l) => l.startsWith('Thread pool'))!;
    const noise = answerTable(r, "This run's noise");
    // Assert: the planted 600 against 1,000 at 8 threads is the gap's one point; the A/A pair's gap is small
    expect(pool).toMatch(/mostly one point: self-managed-pool at 8 threads, \d{3} TPS against \d{3}\)/);
    expect(pool).toMatch(/the A\/A pair \([a-z-]+, [a-z-]+\) differs 10\d\.\d% overall/);
    expect(noise.head).toEqual(['pair', 'overall score ratio', 'widest workload score ratio']);
    expect(noise.rows[0]![0]).toBe('rds-mariadb-pool / self-managed-pool (ran alike in read-only)');
    expect(noise.rows[1]![0]).toMatch(
      /^rds-m[a-z-]+ \/ rds-m[a-z-]+ \(A\/A pair: identical servers, run separately\)$/,
    );
  });

  it('keeps the overall score ratios on one basis: no per-workload noise row, no repeated column', () => {
    // Act
    const ratios = answerTable(report(), 'Overall score ratios');
    // Assert
    expect(ratios.rows.some((x) => /read-only score/.test(x[0]!))).toBe(false);
    expect(ratios.head).not.toContain('interval from');
    expect(ratios.notes!.join(' ')).toContain("for the best two their own gap, for the thread pools the study's 7–9%");
  });
});

describe("S2's fall-off wording", () => {
  it('says what share of the peak remains, never "worse", and the last point as a share of the peak', () => {
    // Act
    const r = report(true);
    const sweep = r.sections.find((s) => s.id === 'sweep')!;
    const table = sweep.tables.find((t) => t.title.startsWith('Peak and fall-off'))!;
    const cells = table.rows.map((x) => x[5]!).filter((c) => c !== '-');
    // Assert
    expect(table.head[6]).toBe('last point / peak');
    expect(cells.length).toBeGreaterThan(0);
    for (const c of cells) expect(c).toMatch(/^\d+% (\(\d+%–\d+%\) )?of peak\*?$/);
    expect(r.answer!.lines.join(' ')).toMatch(/\(the last point is \d+(–\d+)?% of the peak\)/);
    expect(r.answer!.lines.join(' ')).not.toMatch(/last vs peak/);
  });
});

describe("S2's limits and client-bound points", () => {
  it('says no step was client-bound when none was, and whose max_connections ran locally', () => {
    // Act
    const r = report();
    const score = answerTable(r, '100-point score');
    const conn = answerTable(r, 'What the study found').rows.find((x) => x[0]!.startsWith('connection errors'))![1]!;
    // Assert: the planted run has no saturated client
    expect(score.notes!.join(' ')).toContain('no step was client-bound (no client saturated its CPU)');
    expect(score.notes!.join(' ')).not.toContain('a client-bound one left out is not scored');
    expect(conn).not.toContain("not the offerings' limits");
    expect(conn).toMatch(/a self-managed MariaDB defaults to 151 unless configured/);
  });
});
