/**
 * S4's local bounds table shows the host CPU figure its host-bound verdict rests on, so a reader can
 * check the verdict against it.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import type { RunData } from '../../core/report/load';
import { makeContext } from '../../core/report/sections';
import { networkSection } from '../../core/report/studies/network';
import { runData, stepResult } from '../helpers/step-results';

const prices = loadPrices(resolve(__dirname, '../..'));

const spec = {
  name: 'net',
  variants: [{ name: 'r6i-large', instanceClass: 'db.r6i.large' }],
  workloads: [
    { name: 'scan-1-client', script: 'scan.lua', threads: [1], clients: 1 },
    { name: 'scan-2-clients', script: 'scan.lua', threads: [1], clients: 2 },
  ],
} as never;

function localRun(): RunData {
  const steps = [
    stepResult({ variant: 'r6i-large', step_id: 'scan-1-client-t1', workload: 'scan-1-client', threads: 1 }),
    stepResult({
      variant: 'r6i-large',
      step_id: 'scan-2-clients-t1',
      workload: 'scan-2-clients',
      threads: 1,
      clients: 2,
      ok_clients: 2,
    }),
  ].map((s) => ({ ...s, instance_class: 'db.r6i.large' }));
  const base = runData(steps, spec);
  const metric = (step_id: string, role: string, name: string, value: number) => ({
    cell_id: 'r6i-large-r1',
    step_id,
    role,
    instance_id: role,
    metric: name,
    avg_value: value,
    max_value: value,
    samples: 10,
    source: 'local',
    partial: false,
  });
  return {
    ...base,
    run: { ...base.run, backend: 'local' },
    metrics: [
      metric('scan-1-client-t1', 'client', 'ClientHostCPU', 97),
      metric('scan-2-clients-t1', 'client', 'ClientHostCPU', 99),
      metric('scan-1-client-t1', 'writer', 'CPUUtilization', 10),
      metric('scan-2-clients-t1', 'writer', 'CPUUtilization', 12),
    ],
  };
}

describe("S4's local bounds table", () => {
  it('shows the host CPU % per point, the figure the host verdict used', () => {
    // Act
    const section = networkSection(makeContext(localRun(), prices))!;
    // The author's table is the Answer's.
    const table = section.answer!.tables[0]!;
    const col = table.head.indexOf('host CPU%');
    // Assert
    expect(col).toBeGreaterThan(-1);
    expect(table.rows.map((r) => r[col])).toEqual(['97', '99']);
    expect(section.findings.join(' ')).toMatch(/97% busy|99% busy/);
  });
});
