/**
 * The serverless, storage and bill sections' findings are typed data (`report --json` prints them):
 * numbers and intervals, with strings only for names and labels, and the section is rendered from them.
 */
import { resolve } from 'node:path';
import { validateSpec } from '../../core/experiment/validate';
import { loadPrices } from '../../core/plan/cost';
import { planRun } from '../../core/plan/plan';
import { analyzeSections, makeContext } from '../../core/report/sections';
import type { UsagePoint } from '../../core/report/aurora-usage';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

/** Strings a finding may hold: names and labels that are data, not formatted figures. */
const NAME_KEYS = new Set(['workload', 'target', 'name', 'instanceClass', 'readerScaling', 'configured', 'cellId']);
const NAME_KEYS_BILL = new Set(['computeWhat', 'region', 'currency', 'unconfirmedPrices', 'missing']);

function formattedStrings(value: unknown, key: string, path: string): string[] {
  if (typeof value === 'string') return NAME_KEYS.has(key) || NAME_KEYS_BILL.has(key) ? [] : [`${path}: ${value}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => formattedStrings(v, key, `${path}[${i}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => formattedStrings(v, k, `${path}.${k}`));
  return [];
}

function analyzed() {
  const s = validateSpec({
    name: 'choices',
    engine: { kind: 'aurora-mysql', version: '3.08.0' },
    variants: [
      { name: 'prov', instanceClass: 'db.r6g.xlarge', storage: 'standard' },
      { name: 'sls', instanceClass: 'db.serverless', minAcu: 1, maxAcu: 16 },
    ],
    data: { tables: 4, tableSize: 1_000_000 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [16] }],
    repeats: 3,
  });
  const plan = planRun(s, { backend: 'aws', runId: 'unit-run' });
  const at = (minute: number): string => new Date(Date.parse('2024-05-01T10:00:00Z') + minute * 60000).toISOString();
  const steps = plan.cells.map((cell) =>
    stepResult({
      variant: cell.variant.name,
      cell_id: cell.cellId,
      repeat: cell.repeat,
      step_id: cell.steps[0]!.stepId,
      workload: 'rw',
      threads: 16,
      started_at: at(0),
      ended_at: at(10),
      tps: (cell.variant.name === 'sls' ? 900 : 1000) + (cell.repeat - 1) * 10,
      lat_p99_ms: 30,
    }),
  );
  const point = (cellId: string, stepId: string, metric: string, minute: number, value: number): UsagePoint => ({
    cell_id: cellId,
    step_id: stepId,
    instance_id: `${cellId}-w`,
    metric,
    ts: at(minute),
    value,
  });
  const capacity = plan.cells
    .filter((c) => c.variant.name === 'sls')
    .flatMap((c) =>
      [1, 4, 8, 8, 8].map((v, m) => point(c.cellId, c.steps[0]!.stepId, 'ServerlessDatabaseCapacity', m, v)),
    );
  const volumeIo = plan.cells.flatMap((c) =>
    [0, 5].map((m) => point(c.cellId, c.steps[0]!.stepId, 'VolumeReadIOPs', m, 9_000_000)),
  );
  const data = { ...runData(steps, s), plan, auroraUsage: { capacity, volumeIo } };
  return new Map(analyzeSections(makeContext(data, prices)).map((a) => [a.id, a]));
}

describe('the Aurora choices findings', () => {
  const sections = analyzed();

  it.each(['serverless', 'storage', 'bill'])('%s: its findings hold no formatted figures', (id) => {
    const a = sections.get(id as 'serverless')!;
    expect(a).toBeDefined();
    expect(a.findings).not.toHaveProperty('tables');
    expect(formattedStrings(a.findings, '', id)).toEqual([]);
  });

  it('carries the figures the sections show as numbers and intervals', () => {
    const serverless = sections.get('serverless')!.findings as {
      rows: { variant: { name: string }; tps: { estimate: number }; scalingLagS: { estimate: number } | null }[];
      comparisons: { tpsRatio: { estimate: number } }[];
    };
    expect(serverless.rows.map((r) => r.variant.name)).toEqual(['prov', 'sls']);
    expect(serverless.rows[1]!.tps.estimate).toBeCloseTo(910, 9);
    expect(serverless.rows[1]!.scalingLagS!.estimate).toBe(120);
    expect(serverless.rows[0]!.scalingLagS).toBeNull();
    expect(serverless.comparisons[0]!.tpsRatio.estimate).toBeCloseTo(910 / 1010, 9);
    // 2 windows x 9,000,000 requests over 600 s x ~1,010 TPS, per transaction.
    const storage = sections.get('storage')!.findings as { rows: { measured: { ioPerTx: number } | null }[] };
    expect(storage.rows[0]!.measured!.ioPerTx).toBeCloseTo(18_000_000 / (600 * 1010), 9);
    const bill = sections.get('bill')!.findings as { complete: boolean; total: number; rows: unknown[] };
    expect(bill.complete).toBe(true);
    expect(bill.total).toBeGreaterThan(0);
    // Two variants x three repeats: one bill row per cell.
    expect(bill.rows).toHaveLength(6);
  });
});
