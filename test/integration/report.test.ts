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
import type { AbFindings } from '../../core/report/studies/ab';
import type { PriceFindings } from '../../core/report/studies/price';
import type { ThreadSweepFindings } from '../../core/report/studies/thread-sweep';
import type { ForwardingFindings } from '../../core/report/studies/forwarding';
import type { RateFindings } from '../../core/report/studies/rate';
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
    expect(report.sections.map((s) => s.id)).toEqual(['ab', 'price', 'bill']);
    const ab = section(report, 'ab');
    expect(ab.tables.map((t) => t.title)).toEqual([
      'AZ a',
      'AZ b',
      'Same class, different AZ (QPS)',
      'Per repeat: each run’s QPS and its place in its round',
    ]);
    const f = report.findings!['ab'] as AbFindings;
    const ro = f.azs[0]!.ratios[0]!;
    expect([
      ro.step,
      ro.variant,
      ro.baseline,
      ro.qps.estimate!.toFixed(3),
      ro.qps.direction,
      ro.qps.interval!.covers,
    ]).toEqual(['read-only t32', 'r6g-a', 'r5-a', '0.930', 'lower', 'run-to-run']);
    expect(f.azSpread[0]).toMatchObject({
      instanceClass: 'db.r5.2xlarge',
      step: 'read-only t32',
      azs: 'b/a',
      qps: { direction: 'higher' },
    });
    expect(f.azSpread[0]!.qps.estimate!).toBeCloseTo(1.04, 6);
    const price = report.findings!['price'] as PriceFindings;
    expect(price.variants.map((v) => [v.variant, v.hourly])).toEqual([
      ['r5-a', 1.16],
      ['r6g-a', 1.038],
      ['r5-b', 1.16],
      ['r6g-b', 1.038],
    ]);
    expect(section(report, 'price').findings[0]).toBe(
      'AZ a: r6g-a (aurora-mysql db.r6g.2xlarge) costs 89.5% of r5-a (aurora-mysql db.r5.2xlarge) per hour; ' +
        'its transactions per USD are read-only 103.9% (101.6%–106.3%) better, write-only 103.9% (101.6%–106.3%) ' +
        "better, read-write 103.9% (101.6%–106.3%) better of r5-a's.",
    );
    expect(renderTerminal(report)).toMatch(/TPS \(95% CI\)/);
    // The answer first: per AZ the ratios with intervals, then performance ratio vs price ratio with its interval.
    expect(report.answer!.tables.map((t) => t.title)).toEqual([
      'Per AZ: QPS, TPS and p95 per class (95% intervals)',
      'Per AZ: each variant over the baseline, with 95% intervals',
      'Performance ratio vs price ratio (TPS; transactions per unit of money = performance / price)',
    ]);
    const pp = report.answer!.tables[2]!.rows[0]!;
    expect(pp.slice(0, 3)).toEqual(['a', 'read-only t32', 'r6g-a/r5-a']);
    expect(pp[4]).toBe('89.48%');
    expect(pp[5]).toMatch(/^103\.9% \(\d+\.\d%–\d+\.\d%\) (better|within noise)$/);
    expect(renderTerminal(report).indexOf('== Answer ==')).toBeLessThan(
      renderTerminal(report).indexOf('== Variants compared'),
    );
  });

  it('S1, one repeat, equal variants: intervals from the per-interval samples, and "within the noise"', async () => {
    // Arrange: the same numbers for both classes, 1 repeat, noisy intervals
    const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', 'graviton-vs-intel.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const { runId } = writeRunFromSpec(
      lakeDir,
      { ...doc, repeats: 1 },
      () => ({ tps: 1000, qps: 20000, latPctMs: 10, noise: 0.2 }),
      { intervals: 40 },
    );
    // Act
    const ab = section(await reportOf(lakeDir, runId), 'ab');
    // Assert
    expect(ab.tables[0]!.rows[0]![7]).toBe('1 run, interval batches');
    expect(ab.tables[0]!.rows[0]![3]).toMatch(/^1,000 \(\d+–[\d,]+\)\*$/);
    // One run's interval batches see no run-to-run noise: never "within the noise" or "beyond" it, but "this run's".
    // The per-step sentences; the AZ spread and the one-in-twenty caution sit beside them in the evidence.
    const steps = ab.findings.filter(
      (f) => !f.startsWith('The same class in AZ ') && !f.startsWith('Each comparison at the 95% level'),
    );
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((f) => /within this run's noise/.test(f))).toBe(true);
  });

  it('S2: score, peak and fall-off per variant, connection errors marked and failed steps listed', async () => {
    // Act: the local run, where every offering runs on MariaDB on this machine
    const report = await reportOf(lakeDir, writeStudyRun(lakeDir, repoRoot, 'thread-sweep', 'local').runId);
    // Assert
    expect(report.sections.map((s) => s.id)).toEqual(['price', 'sweep', 'failures']);
    const sweep = section(report, 'sweep');
    const f = report.findings!['sweep'] as ThreadSweepFindings;
    expect(f.overall.slice(0, 3)).toEqual([
      { variant: 'aurora-mysql', score: 100 },
      { variant: 'rds-mariadb-pool', score: 95 },
      { variant: 'self-managed-pool', score: 80 },
    ]);
    const rw = f.sweeps.find((x) => x.label === 'read-write')!;
    expect(rw.variants.find((v) => v.variant === 'rds-mariadb-per-conn')).toMatchObject({
      peakThreads: 256,
      fallOffThreads: 1024,
    });
    expect(
      rw.variants.find((v) => v.variant === 'rds-mariadb-per-conn')!.errorPoints.map((e) => [e.threads, e.kind]),
    ).toEqual([
      [2048, 'deadlocks'],
      [3000, 'deadlocks'],
    ]);
    expect(rw.variants.find((v) => v.variant === 'rds-mysql')!.errorPoints.map((e) => [e.threads, e.kind])).toEqual([
      [3000, 'connection'],
    ]);
    expect(rw.variants.find((v) => v.variant === 'rds-mariadb-pool')).toMatchObject({
      peakThreads: 256,
      fallOffThreads: null,
    });
    // Thread pool against one thread per connection on the same offering, with a verdict.
    expect(f.threadPool.map((t) => [t.pool, t.perConnection])).toEqual([
      ['rds-mariadb-pool', 'rds-mariadb-per-conn'],
      ['self-managed-pool', 'self-managed-per-conn'],
    ]);
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
      // Errors per 100 committed transactions: errors can outnumber them, so not a share.
      expect.stringMatching(/^\d+\.\d\d$/),
      '12',
      '',
    ]);
    // The score and the TPS curves are the answer, shown first; the evidence keeps the rest.
    expect(sweep.answer!.charts.filter((c) => c.id.startsWith('sweep-tps'))).toHaveLength(3);
    expect(sweep.answer!.charts.filter((c) => c.id.startsWith('sweep-qps'))).toHaveLength(3);
    // The study's figures beside this run's come first; the score table follows.
    expect(sweep.answer!.tables.map((t) => t.title)).toEqual([
      'What the study found, and this run',
      expect.stringMatching(/^100-point score/),
      'Overall score ratios',
      "This run's noise: score ratios of servers that ran alike",
      'What else shapes these numbers',
    ]);
    expect(sweep.answer!.lines[1]).toMatch(
      // One repeat: the ratio of the scores, no within-run interval, no direction word, and what would resolve it.
      new RegExp(
        "^aurora-mysql has the highest score in this run, [\\d.]+% of rds-mariadb-pool's \\(the next\\); " +
          'one repeat cannot resolve a ranking',
      ),
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
    expect(sweep.findings).toEqual([
      'rw: a peaks at 8 threads, no fall-off past it (fall-off: below 90% of the peak).',
      'No connection errors up to 8 threads (the most this run tried).',
      'Deadlocks and lock waits below 0.1 per 100 committed transactions at every point.',
    ]);
    expect(sweep.answer!.lines).toContain(
      'Deadlocks and lock waits below 0.1 per 100 committed transactions at every point.',
    );
    expect(sweep.tables.map((t) => t.title)).toEqual([
      'Peak and fall-off (TPS)',
      'TPS per thread count (95% interval)',
    ]);
  });

  it('S3: writer vs reader, the read share from which the reader wins, scale-out and consistency cost', async () => {
    // Act
    const report = await study('write-forwarding');
    const fwd = section(report, 'forwarding');
    const f = report.findings!['forwarding'] as ForwardingFindings;
    // Assert: one repeat, so the verdicts are this run's
    expect(f.readShares.map((v) => [v.threads, v.winsFrom, v.wins.length, v.runToRun])).toEqual([
      [32, 0.9, 1, false],
      [64, null, 0, false],
      [128, null, 0, false],
    ]);
    expect(fwd.answer!.lines).toContainEqual(
      expect.stringMatching(
        /from which the reader wins: no threshold resolved; in this run the reader was higher .* /.source +
          /at 90:10 only, the highest share tried \(32 threads\)/.source,
      ),
    );
    expect(fwd.answer!.tables.find((t) => t.title.startsWith('Reader/writer TPS'))!.head).toEqual([
      'threads',
      '50:50',
      '60:40',
      '≈70:30',
      '80:20',
      '90:10',
    ]);
    expect(f.scaleOut.map((x) => [x.readers, x.threadsEach, Math.round(x.ratio!.estimate! * 100)])).toEqual([
      [2, 32, 139],
      [2, 32, 139],
      [2, 32, 139],
      [2, 32, 139],
      [2, 32, 139],
    ]);
    const consistency = fwd.answer!.tables.find((t) => t.title.startsWith('Read consistency'))!;
    const vsEventual = consistency.head.indexOf('p95 ms vs EVENTUAL');
    expect(consistency.rows.map((r) => [r[0], r[vsEventual]!.split(' ').pop()])).toEqual([
      ['EVENTUAL', '-'],
      ['SESSION', 'run*'],
      ['GLOBAL', 'run*'],
    ]);
    expect(f.consistency.map((c) => c.tailCost?.direction ?? null)).toEqual([null, 'higher', 'higher']);
  });

  it('S4: each class marked CPU-bound, network-bound or client-bound as the original study found', async () => {
    // Act
    const net = section(await study('network-throughput'), 'network');
    // Assert
    const bound = net.answer!.tables[0]!.head.indexOf('bound');
    const bounds = net.answer!.tables[0]!.rows.map((r) => `${r[1]} ${r[2]}: ${r[bound]}`);
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
    // 1540 MB/s and 1540/300 MB/s x 8
    expect([net.answer!.tables[0]!.rows[5]![3], net.answer!.tables[0]!.rows[5]![4]]).toEqual(['12.32', '0.041']);
    expect(net.answer!.lines.map((l) => l.split(' (')[0])).toEqual([
      // From the cells shown: (3.41 + 0.011) / (1.17 + 0.004) - 1 = +191%.
      '12 clients against 1 moved r6i-large +191%, r6i-xlarge +514%, r6i-2xlarge +953%, r6i-4xlarge +963% Gbps: ' +
        'more clients help at every class, so one client alone did not find the server’s limit.',
      'Client-bound',
      "12 clients make the server give out first only where 12 × one client's Gbps is above the class limit",
    ]);
    // The 12-client design's check from the one-client cells: 12 × 1.17 = 14.0 > 12.5 at every class.
    const check = net.answer!.tables[0]!.head.indexOf('12 × 1-client Gbps');
    expect(net.answer!.tables[0]!.rows[0]![check]).toBe('14.0');
    expect(net.answer!.lines[2]).toMatch(/: above it at r6i-large, r6i-xlarge, r6i-2xlarge, r6i-4xlarge\.$/);
    // One sentence for the verdicts, a clause per kind of bound.
    expect(net.answer!.lines[1]).toMatch(
      /^Client-bound \(4 of 8 points: .*; cpu-bound \(2 of 8 .*; network-bound \(2 of 8 /,
    );
  });

  it('S4: a class whose metrics window missed datapoints is flagged partial, not averaged silently', async () => {
    // Arrange: the 2xlarge cells' network window lacks two of its five minutes.
    const written = writeStudyRun(
      lakeDir,
      repoRoot,
      'network-throughput',
      'aws',
      (cell, _step, metric) =>
        cell.variant.instanceClass === 'db.r6i.2xlarge' && metric === 'NetworkTransmitThroughput',
    );
    // Act
    const net = section(await reportOf(lakeDir, written.runId), 'network');
    // Assert
    const rows = net.answer!.tables[0]!.rows;
    expect(rows[5]![3]).toBe('12.32 partial');
    expect(rows[5]![6]).not.toContain('partial');
    expect(rows.filter((r) => r[3]!.includes('partial')).map((r) => r[1])).toEqual([
      'db.r6i.2xlarge',
      'db.r6i.2xlarge',
    ]);
    expect((net.answer!.tables[0]!.notes ?? []).join('\n')).toMatch(
      /partial: some datapoints of the step's window never arrived .*metric_windows\.complete = false/,
    );
    expect(net.findings.filter((f) => f.includes('(partial: server metrics incomplete)'))).toHaveLength(2);
  });

  it('S5: the knee of each variant and its capacity', async () => {
    // Act
    const report = await study('rate-sweep');
    const rate = section(report, 'rate');
    const f = report.findings!['rate'] as RateFindings;
    // Assert: per repeat, the knee at an offered rate, the capacity from the unlimited-rate step
    const insert = f.sweeps.find((x) => x.workload === 'insert')!;
    expect(
      insert.variants.map((v) => [
        v.variant,
        v.repeats.map((r) => [r.kneeOffered, r.saturatedAtOffered, r.reason, r.capacity]),
      ]),
    ).toEqual([
      // The spec lists r5 first: the baseline of every ratio, as in S1 (r6g over r5).
      ['r5-2xl', [1, 2].map(() => [24000, 32000, 'throughput', 29800])],
      ['r6g-2xl', [1, 2].map(() => [64000, 80000, 'throughput', 64800])],
    ]);
    expect(insert.capacityRatios[0]!.ratio.estimate!).toBeCloseTo(64800 / 29800, 6);
    expect(rate.answer!.charts.map((c) => c.id)).toEqual([
      'rate-achieved-0',
      'rate-latency-0',
      'rate-achieved-1',
      'rate-latency-1',
      'rate-achieved-2',
      'rate-latency-2',
    ]);
  });

  it('writes self-contained HTML: inline SVG charts, no script, no external reference', async () => {
    // Arrange
    const report = await study('rate-sweep');
    // Act
    const html = renderHtml(report);
    // Assert
    expect(html.match(/<svg /g)!.length).toBe(
      report.sections.reduce((a, s) => a + s.charts.length + (s.answer?.charts.length ?? 0), 0),
    );
    expect(html).not.toMatch(/<script|<link |src="http|href="http|@import/);
    expect(html).toMatch(/ecmeta_data_index/);
  });

  it(
    "labels a local run's reader steps as the client-side emulation of write forwarding, in the answer and " +
      'the plan notes',
    async () => {
      // Arrange: the S3 experiment planned locally runs its reader steps as the emulation
      const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', 'write-forwarding.json'), 'utf8')) as unknown;
      const { runId } = writeRunFromSpec(lakeDir, doc, () => ({ tps: 100 }), {
        backend: 'local',
        scripts: { 'rw_consistency.lua': '--' },
      });
      // Act
      const report = await reportOf(lakeDir, runId);
      // Assert
      // In the banner: it changes how every reader step reads.
      expect((report.warnings ?? []).join('\n')).toMatch(
        new RegExp(
          /Local rehearsal: MariaDB has no write forwarding; the reader steps ran a client-side/.source +
            / emulation on real GTID replication/.source,
        ),
      );
      expect(report.answer!.tables.map((t) => t.title)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Reader\/writer TPS.* by threads and read share/)]),
      );
      expect(report.notes.join('\n')).toMatch(/client-side EMULATION of Aurora write forwarding/);
    },
  );
});
