/**
 * Reports computed from runs written as lake rows (the real experiment files, real DuckDB): each
 * study's section says what its author asked, with the numbers the rows imply.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import type { Report, ReportSection } from '../../core/report/model';
import { buildReport, renderHtml, renderTerminal } from '../../core/report/report';
import { loadRun } from '../../core/report/load';
import { writeRunFromSpec } from '../helpers/report-fixtures';
import { writeStudyRun, type Study } from '../helpers/study-runs';

const repoRoot = resolve(__dirname, '../..');

async function reportOf(lakeDir: string, runId: string): Promise<Report> {
  return withLake(lakeDir, async (lake) => buildReport(await loadRun(lake, runId), loadPrices(repoRoot)));
}

function section(report: Report, id: ReportSection['id']): ReportSection {
  const s = report.sections.find((x) => x.id === id);
  if (!s) throw new Error(`no ${id} section; sections: ${report.sections.map((x) => x.id).join(', ')}`);
  return s;
}

describe('study reports from lake rows', () => {
  let lakeDir: string;
  beforeEach(() => {
    lakeDir = mkdtempSync(join(tmpdir(), 'aurora-bench-report-'));
  });
  afterEach(() => rmSync(lakeDir, { recursive: true, force: true }));

  const study = async (s: Study): Promise<Report> => reportOf(lakeDir, writeStudyRun(lakeDir, repoRoot, s).runId);

  it('S1: per AZ, r6g/r5 ratios with intervals, the AZ-to-AZ table and price-performance', async () => {
    // Act
    const report = await study('graviton-vs-intel');
    // Assert
    expect(report.sections.map((s) => s.id)).toEqual(['ab', 'price']);
    const ab = section(report, 'ab');
    expect(ab.tables.map((t) => t.title)).toEqual(['AZ a', 'AZ b', 'Same class, different AZ (QPS)']);
    expect(ab.findings[0]).toMatch(/^read-only t32 in AZ a: QPS r6g-a\/r5-a = 93\.0% \(95% CI [\d.]+%–[\d.]+%\): r6g-a is worse beyond the noise\./);
    expect(ab.tables[2]!.rows[0]).toEqual(['db.r5.2xlarge', 'read-only t32', 'b/a', expect.stringMatching(/^104\.00% .* better$/)]);
    const price = section(report, 'price');
    expect(price.findings[0]).toBe("AZ a: r6g-a costs 89.48% of r5-a per hour; its transactions per USD are read-only 103.9%, write-only 103.9%, read-write 103.9% of r5-a's.");
    expect(renderTerminal(report)).toMatch(/TPS ±95% CI/);
    // The answer first: per AZ the ratios with intervals, then performance ratio vs price ratio with its interval.
    expect(report.answer!.tables.map((t) => t.title)).toEqual([
      'Per AZ: each variant over the baseline, with 95% intervals',
      'Performance ratio vs price ratio (TPS; transactions per unit of money = performance / price)',
    ]);
    const pp = report.answer!.tables[1]!.rows[0]!;
    expect(pp.slice(0, 3)).toEqual(['a', 'read-only t32', 'r6g-a/r5-a']);
    expect(pp[4]).toBe('89.5%');
    expect(pp[5]).toMatch(/^103\.9\d% \(\d+\.\d%–\d+\.\d%\) (better|within noise)$/);
    expect(renderTerminal(report).indexOf('== Answer ==')).toBeLessThan(renderTerminal(report).indexOf('== Variants compared'));
  });

  it('S1 with one repeat and equal variants: intervals from the per-interval samples, and "within the noise"', async () => {
    // Arrange: the same numbers for both classes, 1 repeat, noisy intervals
    const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', 'graviton-vs-intel.json'), 'utf8')) as Record<string, unknown>;
    const { runId } = writeRunFromSpec(lakeDir, { ...doc, repeats: 1 }, () => ({ tps: 1000, qps: 20000, latPctMs: 10, noise: 0.2 }), { intervals: 40 });
    // Act
    const ab = section(await reportOf(lakeDir, runId), 'ab');
    // Assert
    expect(ab.tables[0]!.rows[0]![7]).toBe('1 run, interval batches');
    expect(ab.tables[0]!.rows[0]![3]).toMatch(/^1,000 ±\d+$/);
    expect(ab.findings.every((f) => /within the noise/.test(f))).toBe(true);
  });

  it('S2: score, peak and fall-off per variant, connection errors marked and failed steps listed', async () => {
    // Act: the local run, where every offering runs on MariaDB on this machine
    const report = await reportOf(lakeDir, writeStudyRun(lakeDir, repoRoot, 'thread-sweep', 'local').runId);
    // Assert
    expect(report.sections.map((s) => s.id)).toEqual(['price', 'sweep', 'failures']);
    const sweep = section(report, 'sweep');
    expect(sweep.findings[0]).toMatch(
      /^Score: aurora-mysql 100\.0, rds-mariadb-pool 95\.0, self-managed-pool 80\.0, rds-mysql \d+\.\d, rds-mariadb-per-conn \d+\.\d, self-managed-per-conn \d+\.\d\.$/,
    );
    expect(sweep.findings).toContain('read-write, rds-mariadb-per-conn: peak at 256 threads; falls off from 1024 threads (17% of peak at 3000); errors from 2048 threads.');
    expect(sweep.findings).toContain('read-write, rds-mariadb-pool: peak at 256 threads; no fall-off past the peak.');
    const errors = sweep.tables.find((t) => t.title === 'Points with errors')!;
    expect(errors.rows).toContainEqual([
      'read-write',
      'rds-mysql',
      '3000',
      'step failed: connection limit (1040 too many connections)',
      '0',
      '-',
      '0',
      'FATAL: error 1040: Too many connections',
    ]);
    expect(errors.rows).toContainEqual([
      'read-write',
      'rds-mariadb-per-conn',
      '2048',
      expect.stringMatching(/^ran with errors: ignored SQL errors \(deadlocks 1213/),
      '5,000',
      expect.stringMatching(/%$/),
      '12',
      '',
    ]);
    // The score and the TPS curves are the answer, shown first; the evidence keeps the rest.
    expect(sweep.answer!.charts.filter((c) => c.id.startsWith('sweep-tps'))).toHaveLength(3);
    expect(sweep.answer!.tables[0]!.title).toMatch(/^100-point score/);
    expect(sweep.answer!.lines[1]).toMatch(
      /^The ranking of aurora-mysql above rds-mariadb-pool is (within the noise|beyond)|^aurora-mysql ranks above rds-mariadb-pool beyond the noise/,
    );
    expect(section(report, 'failures').tables[0]!.rows).toHaveLength(3);
  });

  it('S2: a few deadlocks are normal OLTP behaviour, not an error point', async () => {
    // Arrange: 3 errors in ~30,000 transactions at every thread count
    const doc = {
      name: 'deadlocks',
      engine: { version: '3.04.0' },
      variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1, 2, 4, 8] }],
    };
    const { runId } = writeRunFromSpec(lakeDir, doc, (_c, step) => ({ tps: 500 * step.threads, errors: 3 }));
    // Act
    const sweep = section(await reportOf(lakeDir, runId), 'sweep');
    // Assert
    expect(sweep.findings).toEqual(['rw, a: peak at 8 threads; no fall-off past the peak.']);
    expect(sweep.tables.map((t) => t.title)).toEqual(['Peak and fall-off (TPS)', 'TPS per thread count, with its spread']);
  });

  it('S3: writer vs reader, the read share from which the reader wins, scale-out and consistency cost', async () => {
    // Act
    const fwd = section(await study('write-forwarding'), 'forwarding');
    // Assert
    expect(fwd.findings).toContain('32 threads: the reader beats the writer beyond the noise from a read share of 90:10 (reads:writes) upwards.');
    expect(fwd.answer!.tables[0]!.head).toEqual(['threads', '50:50', '60:40', '≈70:30', '80:20', '90:10']);
    expect(fwd.findings).toContain('64 threads: the reader does not beat the writer beyond the noise at any read share tried (best 89.9% of the writer).');
    expect(fwd.findings.filter((f) => /^ps\d+-2readers: 2 readers x 32 threads give 1[34]\d\.\d% of the writer's TPS at 64 threads\.$/.test(f))).toHaveLength(5);
    const consistency = fwd.answer!.tables.find((t) => t.title.startsWith('Read consistency'))!;
    expect(consistency.rows.map((r) => [r[0], r[5]!.split(' ').pop()])).toEqual([
      ['EVENTUAL', '-'],
      ['SESSION', 'worse'],
      ['GLOBAL', 'worse'],
    ]);
  });

  it('S4: each class marked CPU-bound, network-bound or client-bound as the original study found', async () => {
    // Act
    const net = section(await study('network-throughput'), 'network');
    // Assert
    const bounds = net.tables[0]!.rows.map((r) => `${r[1]} ${r[2]}: ${r[8]}`);
    expect(bounds).toEqual([
      'db.r6i.large scan-1-client (1 client): client-bound',
      'db.r6i.large scan-12-clients (12 clients): cpu-bound',
      'db.r6i.xlarge scan-1-client (1 client): client-bound',
      'db.r6i.xlarge scan-12-clients (12 clients): cpu-bound',
      'db.r6i.2xlarge scan-1-client (1 client): client-bound',
      'db.r6i.2xlarge scan-12-clients (12 clients): network-bound',
      'db.r6i.4xlarge scan-1-client (1 client): client-bound',
      'db.r6i.4xlarge scan-12-clients (12 clients): network-bound',
    ]);
    expect([net.tables[0]!.rows[5]![3], net.tables[0]!.rows[5]![4]]).toEqual(['12.32', '0.041']); // 1540 MB/s and 1540/300 MB/s x 8
    expect(net.answer!.lines.map((l) => l.split(' (')[0])).toEqual(['Client-bound', 'Cpu-bound', 'Network-bound']);
  });

  it('S4: a class whose server metrics window missed datapoints is flagged partial, not averaged silently', async () => {
    // Arrange: the 2xlarge cells' network window lacks two of its five minutes.
    const written = writeStudyRun(
      lakeDir,
      repoRoot,
      'network-throughput',
      'aws',
      (cell, _step, metric) => cell.variant.instanceClass === 'db.r6i.2xlarge' && metric === 'NetworkTransmitThroughput',
    );
    // Act
    const net = section(await reportOf(lakeDir, written.runId), 'network');
    // Assert
    const rows = net.tables[0]!.rows;
    expect(rows[5]![3]).toBe('12.32 partial');
    expect(rows[5]![6]).not.toContain('partial');
    expect(rows.filter((r) => r[3]!.includes('partial')).map((r) => r[1])).toEqual(['db.r6i.2xlarge', 'db.r6i.2xlarge']);
    expect((net.tables[0]!.notes ?? []).join('\n')).toMatch(/partial: some datapoints of the step's window never arrived .*metric_windows\.complete = false/);
    expect(net.findings.filter((f) => f.includes('(partial: server metrics incomplete)'))).toHaveLength(2);
  });

  it('S5: the knee of each variant and its capacity', async () => {
    // Act
    const rate = section(await study('rate-sweep'), 'rate');
    // Assert
    const insert = rate.tables[0]!.rows.filter((r) => r[0]!.startsWith('insert'));
    expect(insert.map((r) => [r[1], r[2], r[3], r[4]])).toEqual([
      ['r6g-2xl', '64,000', '80,000 (throughput)', '64,800'],
      ['r5-2xl', '24,000', '32,000 (throughput)', '29,800'],
    ]);
    expect(rate.answer!.charts.map((c) => c.id)).toEqual(['rate-achieved-0', 'rate-latency-0', 'rate-achieved-1', 'rate-latency-1', 'rate-achieved-2', 'rate-latency-2']);
  });

  it('writes self-contained HTML: inline SVG charts, no script, no external reference', async () => {
    // Arrange
    const report = await study('rate-sweep');
    // Act
    const html = renderHtml(report);
    // Assert
    expect(html.match(/<svg /g)!.length).toBe(report.sections.reduce((a, s) => a + s.charts.length + (s.answer?.charts.length ?? 0), 0));
    expect(html).not.toMatch(/<script|<link |src="http|href="http|@import/);
    expect(html).toMatch(/ecmeta_data_index/);
  });

  it("labels a local run's reader steps as the client-side emulation of write forwarding, in the answer and the plan notes", async () => {
    // Arrange: the S3 experiment planned locally runs its reader steps as the emulation
    const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', 'write-forwarding.json'), 'utf8')) as unknown;
    const { runId } = writeRunFromSpec(lakeDir, doc, () => ({ tps: 100 }), { backend: 'local', scripts: { 'rw_consistency.lua': '--' } });
    // Act
    const report = await reportOf(lakeDir, runId);
    // Assert
    expect(report.answer!.lines.join('\n')).toMatch(/Local rehearsal: MariaDB has no write forwarding; the reader steps ran a client-side emulation on real GTID replication/);
    expect(report.answer!.tables.map((t) => t.title)).toEqual(expect.arrayContaining([expect.stringMatching(/^Reader\/writer TPS .* by threads and read share/)]));
    expect(report.notes.join('\n')).toMatch(/client-side EMULATION of Aurora write forwarding/);
  });
});
