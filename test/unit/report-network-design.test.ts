/**
 * S4's Answer says where the run departs from the study's design (its client program, its step length, its
 * client count) and what that leaves unknown; on AWS it checks the 12-client design from the measured
 * one-client Gbps. Every figure it names is a cell of a table beside it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { Report } from '../../core/report/model';
import type { RunData } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import { S4_STUDY } from '../../core/report/studies/network-design';
import { plantedS4, s4ClientBound } from '../helpers/planted-lakes';
import { checkReport } from '../helpers/report-claims';

const repoRoot = resolve(__dirname, '../..');
const prices = loadPrices(repoRoot);

const planted = (seed = 1): RunData => plantedS4(s4ClientBound(0.6, 75, 70), { seed, runId: `s4d-${seed}` });

type Table = NonNullable<Report['answer']>['tables'][number];
const tableOf = (r: Report, title: string): Table | undefined => r.answer!.tables.find((t) => t.title === title);
const rowsOf = (t: Table): Record<string, string>[] =>
  t.rows.map((row) => Object.fromEntries(t.head.map((h, i) => [h, row[i]!])));

describe("S4's departures from the study's design", () => {
  it("states the full-scale steps of the experiment's own file", () => {
    // Arrange
    const spec = JSON.parse(readFileSync(resolve(repoRoot, 'experiments/network-throughput.json'), 'utf8')) as {
      defaults: { durationS: number; warmupS: number };
    };
    // Assert
    expect(S4_STUDY.fullScale).toEqual({ durationS: spec.defaults.durationS, warmupS: spec.defaults.warmupS });
  });

  it('says the one-client verdicts are about the Lua scan, and the steps too short to tell a burst', () => {
    // Act
    const r = buildReport(planted(), prices);
    const lines = r.answer!.lines;
    const design = tableOf(r, 'This rehearsal against the study and the planned AWS run')!;
    // Assert: one Answer line, backed by the design table's cells.
    const line = lines.find((l) => /sysbench Lua scan/.test(l))!;
    expect(line).toContain(
      "the clients are a sysbench Lua scan, not the study's mysql CLI loop, so the verdicts on the one client " +
        'below are about this client, not the study’s ~1.17 Gbps one',
    );
    // The banner's "at most 8 s" and the Answer's "8 s" agree: every step ran at the rehearsal's cap.
    expect(line).toContain(
      "each point measured 8 s after a 1 s warm-up (every step at the rehearsal's cap) where the study measured " +
        'after ~3 min of steady load, so a burst cannot be told from a sustained rate',
    );
    expect(lines).toHaveLength(5);
    // Three columns: this run, the study's own write-up, the planned AWS run; none mixes the two.
    expect(design.head).toEqual(['', 'this run', 'the study (its write-up)', 'the planned AWS run']);
    const byWhat = Object.fromEntries(design.rows.map((row) => [row[0]!, row.slice(1)]));
    expect(byWhat['each point measured']).toEqual([
      "8 s after a 1 s warm-up (every step: the rehearsal's cap)",
      'after ~3 min of steady load',
      '300 s after a 120 s warm-up',
    ]);
    expect(byWhat.client![0]).toMatch(/^sysbench Lua scan \(fullscan_1kb\.lua\): one connection kept/);
    expect(byWhat.client![1]).toMatch(
      /^a mysql CLI loop, reconnecting per query and formatting every row \(~1\.17 Gbps/,
    );
    expect(byWhat.client![2]).toBe('this Lua scan');
    // The 12-client design: 12 × 1.17 = 14 Gbps was sized for the study's client; for the Lua client, unknown.
    expect(byWhat['clients at once']).toEqual([
      '2',
      '12, sized for its mysql CLI client: 12 × 1.17 = 14 Gbps > 12.5, the class limit',
      // Each c6i.large client is itself "up to": past its burst, its baseline caps what 12 of them send.
      '12 Lua clients pass 12.5 Gbps only if one sends over 1.04 Gbps, unknown until its 1-client points measure ' +
        'one; a c6i.large is itself "up to" on a 0.781 Gbps baseline, so past their burst 12 send at most 9.4 ' +
        'Gbps, under 12.5',
    ]);
    // The engine each ran, and what the version change leaves comparable.
    expect(byWhat.engine!.slice(1)).toEqual([
      'Aurora MySQL 3.04.0',
      "Aurora MySQL 3.10.4 (not the study's 3.04.0: the same rows and protocol, so Gbps compare; its CPU% may not)",
    ]);
    // The study's own results beside the rehearsal's.
    expect(byWhat['transmit at the most clients, server CPU']![1]).toBe(
      'large 3.41 Gbps at 100% CPU, xlarge 7.18 Gbps at 98% CPU, 2xlarge 12.32 Gbps at 71% CPU, 4xlarge 12.44 ' +
        'Gbps at 29% CPU; receive 1.3–3.8 MB/s (interface bytes: ACKs, a reconnect a query; not comparable with ' +
        'Bytes_received)',
    );
    // The local receive is not set beside the study's: it is a different count (the throughput table's note has it).
    expect(byWhat['transmit at the most clients, server CPU']![0]).not.toMatch(/receive|KB\/s/);
    // Nor is the local Gbps: beside the study's 3.41 it would read as a reproduction.
    expect(byWhat['transmit at the most clients, server CPU']![0]).toMatch(/^not comparable \(loopback/);
    expect(byWhat['transmit at the most clients, server CPU']![0]).not.toMatch(/Gbps/);
  });

  it('checks the pipeline: bytes sent a scanned row, from the transmit and the scans, against ~1 KB rows', () => {
    // Arrange: 10,000 rows a scan, 22 scans/s for 1 client and 43 for 2, sending 1,030 B a row; then 10 B.
    const base = planted();
    const stepOf = new Map(base.steps.map((x) => [`${x.cell_id}/${x.step_id}`, x]));
    const run = (bytes: number): RunData => ({
      ...base,
      spec: { ...base.spec!, data: { ...base.spec!.data, tableSize: 10_000 } },
      steps: base.steps.map((x) => ({ ...x, tps: x.clients === 1 ? 22 : 43 })),
      metrics: base.metrics.map((m) => {
        const x = stepOf.get(`${m.cell_id}/${m.step_id}`);
        return m.metric === 'NetworkTransmitThroughput' && x !== undefined
          ? { ...m, avg_value: (x.clients === 1 ? 22 : 43) * 10_000 * bytes }
          : m;
      }),
    });
    const cellOf = (d: RunData): string =>
      tableOf(buildReport(d, prices), 'This rehearsal against the study and the planned AWS run')!.rows.find((r) =>
        r[0]!.startsWith('bytes sent a scanned row'),
      )![1]!;
    // Act / Assert
    expect(cellOf(run(1030))).toBe(
      "1,030 B at every point, as ~1 KB rows predict: the server's byte counter and the clients' own scan count agree",
    );
    expect(cellOf(run(10))).toMatch(/^10 B at every point: not the ~1 KB a row should send/);
    // On AWS the figure is CloudWatch's interface bytes, not Bytes_sent: not the same check.
    const table = tableOf(buildReport(run(1030), prices), 'This rehearsal against the study and the planned AWS run')!;
    const row = table.rows.find((r) => r[0]!.startsWith('bytes sent a scanned row'))!;
    expect(row[3]).toMatch(/^not the same check: CloudWatch counts interface bytes \(TCP\/IP headers too\)/);
    // What the run validated, in one line from what it measured.
    // The rules that fired are named, and the two the study's question rests on, which cannot fire locally, are not
    // called validated.
    expect(table.notes).toEqual([
      "Validated end to end by this run: 8 steps on 4 emulated classes ran and were stored; the server's byte and " +
        'CPU counters were sampled at 8 of 8; the bytes-a-row check agrees; the verdict rules 3 ' +
        '(one-client-limited) and 6 (unclear), the only ones that fired. Not validated: verdict rules 1 (CPU-bound) ' +
        "and 2 (network-bound), which the study's question rests on (locally they cannot fire: the server shares " +
        "this machine's CPUs with its clients, and loopback has no limit); CloudWatch metrics, the class network " +
        'limits, the AWS clients.',
    ]);
    // A point whose server CPU reached the line fires rule 1: then only rule 2 is left unexercised.
    const hot = run(1030);
    const cpuBound: RunData = {
      ...hot,
      metrics: hot.metrics.map((m) => (m.metric === 'CPUUtilization' ? { ...m, avg_value: 95 } : m)),
    };
    const note = tableOf(buildReport(cpuBound, prices), table.title)!.notes![0]!;
    expect(note).toContain('; the verdict rule 1 (cpu-bound), the only one that fired. Not validated: verdict rule 2 ');
    expect(note).toMatch(/rule 2 \(network-bound\), which the study's question rests on \(locally it cannot fire/);
    expect(tableOf(buildReport(run(10), prices), table.title)!.notes![0]).not.toMatch(/check agrees/);
  });

  it('on AWS, checks the most clients × one client’s Gbps against each class limit, from the shown cells', () => {
    // Arrange: the planted run as an AWS run, r6i-large's transmit cut to a tenth, r6i-4xlarge's 6 times.
    const local = planted();
    const cellsOf = (v: string): Set<string> =>
      new Set(local.steps.filter((x) => x.variant === v).map((x) => x.cell_id));
    const [large, biggest] = [cellsOf('r6i-large'), cellsOf('r6i-4xlarge')];
    const scale = (cell: string): number => (large.has(cell) ? 0.1 : biggest.has(cell) ? 6 : 1);
    const data: RunData = {
      ...local,
      run: { ...local.run, backend: 'aws', notes: '[]' },
      metrics: local.metrics
        .filter((m) => m.metric !== 'ClientHostCPU')
        .map((m) =>
          m.metric === 'NetworkTransmitThroughput' ? { ...m, avg_value: m.avg_value * scale(m.cell_id) } : m,
        ),
    };
    // Act
    const r = buildReport(data, prices);
    const t = tableOf(r, 'Throughput per class')!;
    const rows = rowsOf(t);
    // Assert: the column's product is clients × the one-client transmit cell; the line sorts by the limit.
    const col = '2 × 1-client Gbps';
    expect(t.head).toContain(col);
    const above: string[] = [];
    const below: string[] = [];
    for (const row of rows.filter((x) => x['Gbps with more clients'] !== '-')) {
      const product = 2 * Number(row['transmit Gbps']);
      expect(row[col]).toBe(product.toFixed(1));
      (product > Number(row['limit Gbps']) ? above : below).push(row.variant!);
    }
    for (const row of rows.filter((x) => x['Gbps with more clients'] === '-')) expect(row[col]).toBe('-');
    const line = r.answer!.lines.find((l) => /clients make the server give out first/.test(l))!;
    expect(line).toContain(`(the column "${col}")`);
    expect(line).toContain(`below it at ${below.join(', ')}, where 2 clients could not reach the limit`);
    expect(above).toEqual(['r6i-4xlarge']);
    expect(line).toContain('above it at r6i-4xlarge; below it at r6i-large, r6i-xlarge, r6i-2xlarge');
    // Its figures follow from the cells, and no local design table on AWS.
    expect(checkReport(r, { sections: ['network'] })).toEqual([]);
    expect(tableOf(r, 'This rehearsal against the study and the planned AWS run')).toBeUndefined();
  });

  it('holds each direction to the class limit, not their sum (the limit holds each way at once)', () => {
    // Arrange: an AWS run whose every point sends 85% of 12.5 Gbps and receives 12%: 97% together.
    const local = planted();
    const gbps = (x: number): number => (x * 1e9) / 8;
    const data: RunData = {
      ...local,
      run: { ...local.run, backend: 'aws', notes: '[]' },
      metrics: local.metrics
        .filter((m) => m.metric !== 'ClientHostCPU')
        .map((m) =>
          m.metric === 'NetworkTransmitThroughput'
            ? { ...m, avg_value: gbps(0.85 * 12.5) }
            : m.metric === 'NetworkReceiveThroughput'
              ? { ...m, avg_value: gbps(0.12 * 12.5) }
              : m,
        ),
    };
    // Act
    const rows = rowsOf(tableOf(buildReport(data, prices), 'Throughput per class')!);
    // Assert
    expect(rows.map((x) => x.bound).filter((b) => b === 'network-bound')).toEqual([]);
  });
});
