/**
 * S4's verdicts are traceable: every row's bound follows, by the rule the table's note states once, from
 * the figures shown in that row (server, client and host CPU %, the gain with more clients), and the
 * Answer's verdict sentence states no point's figure (the rule column has them, so it cannot contradict one).
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { Report } from '../../core/report/model';

type ReportTable = NonNullable<Report['answer']>['tables'][number];
import type { RunData } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import { experiment, plantedRunData, type Truth } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));
const S4 = experiment('network-throughput');
const MB = 1e6;

/** One client at oneClientCpu % of its core; the most clients move `gain` more bytes; the host as given. */
const truth =
  (gain: number, oneClientCpu: number, hostCpu: number): Truth =>
  (_cell, step) => ({
    tps: step.clients === 1 ? 5 : 5 * (1 + gain),
    clientCpuPct: step.clients === 1 ? oneClientCpu : 50,
    metrics: {
      NetworkTransmitThroughput: 140 * MB * (step.clients === 1 ? 1 : 1 + gain),
      NetworkReceiveThroughput: 0.1 * MB,
      CPUUtilization: 15,
      ClientHostCPU: step.clients === 1 ? hostCpu : 99,
    },
  });

/** The planted lake's host CPU as the local runner stores it: a client-side metric. */
function planted(t: Truth, seed: number, coTenant = false): RunData {
  const d = plantedRunData(S4, t, { seed, runId: `s4v-${seed}` });
  return {
    ...d,
    run: coTenant ? { ...d.run, notes: JSON.stringify([{ path: 'host', message: 'shared vm, 3 other runs' }]) } : d.run,
    metrics: d.metrics.map((m) => (m.metric === 'ClientHostCPU' ? { ...m, role: 'client' } : m)),
  };
}

const table = (r: Report): ReportTable => r.answer!.tables.find((t) => t.title === 'Throughput per class')!;

/** The verdict the stated rule gives from a row's shown figures (local runs: no class limit). */
function verdictFromColumns(cells: Record<string, string>): string {
  const num = (s: string | undefined): number | null => (s === undefined || s === '-' ? null : Number.parseFloat(s));
  const server = num(cells['server CPU% of its cores']);
  const client = num(cells['client CPU%']);
  const host = num(cells['host CPU%']);
  const gainCell = cells['Gbps with more clients']!;
  const gain = gainCell === '-' ? null : Number.parseFloat(gainCell);
  if (server !== null && server >= 90) return 'cpu-bound';
  if (gain !== null && gain >= 15) {
    if (client !== null && client >= 70) return 'client-bound';
    return host !== null && host >= 90 ? 'unclear' : 'no limit reached';
  }
  if (host !== null && host >= 90) return gain === null ? 'unclear' : 'host-bound';
  if (client !== null && client >= 90) return 'client-bound';
  return 'no limit reached';
}

function rowsOf(r: Report): Record<string, string>[] {
  const t = table(r);
  return t.rows.map((row) => Object.fromEntries(t.head.map((h, i) => [h, row[i]!])));
}

describe('S4 verdicts traceable to the shown columns', () => {
  const seen = new Set<string>();
  const cases: [string, Truth][] = [
    ['client busy, 2 clients +60%', truth(0.6, 75, 70)],
    ['client idle, 2 clients +60%, host busy', truth(0.6, 40, 95)],
    ['client idle, 2 clients +60%', truth(0.6, 40, 60)],
    ['2 clients move no more, host busy', truth(0, 50, 95)],
    ['client near the line', truth(0.3, 70, 80)],
  ];
  it.each(cases)('%s: each bound follows from its row by the stated rule', (_name, t) => {
    for (let seed = 1; seed <= 6; seed++) {
      // Act
      const r = buildReport(planted(t, seed), prices);
      const rows = rowsOf(r);
      // Assert: the rule is stated once, and every row's bound is what it gives from the row's cells.
      expect(table(r).notes!.filter((n) => /^Verdict \(the first rule that holds\)/.test(n))).toHaveLength(1);
      for (const row of rows) {
        const rule = row['rule (from the columns)']!;
        seen.add(row.bound!);
        expect({ row: row.variant, bound: row.bound }).toEqual({ row: row.variant, bound: verdictFromColumns(row) });
        // The rule column quotes the row's own figures.
        for (const [col, label] of [
          ['client CPU%', 'client CPU'],
          ['host CPU%', 'host CPU'],
        ] as const) {
          const quoted = new RegExp(`${label} (\\d+)`).exec(rule)?.[1];
          if (quoted !== undefined) expect(quoted).toBe(row[col]);
        }
        const gain = /^[+-]\d+%/.exec(rule)?.[0];
        if (gain !== undefined) expect(row['Gbps with more clients']).toMatch(new RegExp(`^\\${gain} with`));
      }
      // The verdict sentence names no figure but the rule's thresholds.
      const line = (r.answer?.lines ?? []).find((l) => /\d+ of \d+ points/.test(l))!;
      const pcts = [...line.matchAll(/(\d+)%/g)].map((m) => m[1]);
      expect(pcts.every((p) => ['15', '70', '90'].includes(p!))).toBe(true);
    }
  });

  it('the cases above reach every local verdict but CPU-bound', () => {
    expect([...seen].sort()).toEqual(['client-bound', 'host-bound', 'no limit reached', 'unclear']);
  });

  it('with other runs on the host, one load given different verdicts is unclear, and its rule says why', () => {
    let overridden = 0;
    for (let seed = 1; seed <= 6; seed++) {
      // Act: the one client near the busy line, so the classes' verdicts split on noise.
      const rows = rowsOf(buildReport(planted(truth(0.6, 70, 70), seed, true), prices));
      for (const row of rows) {
        const rule = row['rule (from the columns)']!;
        if (/other runs on the host; same load elsewhere: /.test(rule)) {
          overridden++;
          expect(row.bound).toBe('unclear');
        } else expect(row.bound).toBe(verdictFromColumns(row));
      }
    }
    // Assert: the case happened, so the check above ran on it.
    expect(overridden).toBeGreaterThan(0);
  });

  it('a receive column of zeros is left out with one line saying why', () => {
    // Act
    const r = buildReport(planted(truth(0.6, 75, 70), 1), prices);
    // Assert
    expect(table(r).head).not.toContain('receive Gbps');
    expect(table(r).notes!.filter((n) => /^Receive Gbps left out: /.test(n))).toHaveLength(1);
    expect(table(r).notes!.some((n) => /^Server CPU%: .* share of all the CPUs it may use/.test(n))).toBe(true);
  });
});
