/**
 * Plausible runs of the five studies, written to a lake from the real experiment files, with
 * numbers shaped like the original studies' findings (r6g ~93% of r5, a per-connection server
 * falling past 512 threads, a reader winning at high read shares, CPU- vs network-bound classes, a
 * rate knee).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CellPlan, StepPlan } from '../../core/plan/types';
import { writeRunFromSpec, type RunFixtureOptions, type StepNumbers, type WrittenRun } from './report-fixtures';

export const STUDIES = [
  'graviton-vs-intel',
  'thread-sweep',
  'write-forwarding',
  'network-throughput',
  'rate-sweep',
] as const;
export type Study = (typeof STUDIES)[number];

function numbers(study: Study, cell: CellPlan, step: StepPlan): StepNumbers {
  const cls = cell.variant.instanceClass;
  switch (study) {
    case 'graviton-vs-intel': {
      const base: Record<string, number> = { 'read-only': 9500, 'write-only': 5800, 'read-write': 2550 };
      const tps =
        (base[step.workload] ?? 1000) *
        (cls.includes('r6g') ? 0.93 : 1) *
        (cell.variant.az === 'b' ? 1.04 : 1) *
        (1 + 0.01 * (cell.repeat - 2));
      return { tps, qps: tps * (step.workload === 'read-only' ? 20 : 18), latPctMs: 60000 / tps };
    }
    case 'thread-sweep': {
      // The offerings: Aurora MySQL best, RDS for MariaDB close, the self-managed servers slower, RDS
      // for MySQL refusing the last point (a connection limit); one thread per connection falls past 512.
      const perConn = cell.variant.name.includes('per-conn');
      const engine = cell.variant.engine?.kind ?? 'aurora-mysql';
      const factor: Record<string, number> = {
        'aurora-mysql': 1,
        'rds-mariadb': 0.95,
        'rds-mysql': 0.85,
        'self-managed': 0.8,
      };
      let tps = 40 * Math.min(step.threads, 256) * (factor[engine] ?? 1);
      if (perConn && step.threads > 512) tps *= 512 / step.threads;
      if (engine === 'rds-mysql' && step.threads >= 3000)
        return { tps: 0, failed: 'FATAL: error 1040: Too many connections' };
      return {
        tps,
        qps: tps * 20,
        latPctMs: (step.threads * 1000) / tps,
        errors: perConn && step.threads >= 2048 ? 5000 : 0,
        reconnects: perConn && step.threads >= 2048 ? 12 : 0,
      };
    }
    case 'write-forwarding': {
      const ps = typeof step.options.point_selects === 'number' ? step.options.point_selects : 10;
      const readShare = ps / (ps + 4);
      let tps = 1500 * (32 / step.threads) ** 0.1;
      if (step.target === 'reader') tps *= 0.7 + 0.5 * (readShare - 0.5) * (step.threads === 32 ? 2 : 1);
      if (step.target === 'all-readers') tps *= 1.3;
      const consistency = (step.options as Record<string, unknown>)['consistency'];
      const level = typeof consistency === 'string' ? consistency : '';
      const lat = level === 'GLOBAL' ? 40 : level === 'SESSION' ? 28 : 25;
      return { tps, qps: tps * (ps + 4), latPctMs: lat, latAvgMs: lat / 2 };
    }
    case 'network-throughput': {
      const size = cls.split('.')[2]!;
      const twelve = step.clients > 1;
      const table: Record<string, [number, number]> = {
        large: [426e6, 100],
        xlarge: [898e6, 98],
        '2xlarge': [1540e6, 71],
        '4xlarge': [1555e6, 29],
      };
      const [bytes, cpu] = twelve ? table[size]! : [146e6, 31];
      return {
        tps: bytes / 1e9,
        qps: bytes / 1e9,
        latPctMs: 8000,
        clientCpuPct: twelve ? 60 : 95,
        clientSaturated: !twelve,
        metrics: { NetworkTransmitThroughput: bytes, NetworkReceiveThroughput: bytes / 300, CPUUtilization: cpu },
      };
    }
    case 'rate-sweep': {
      const capacity = cls.includes('r6g') ? 64800 : 29800;
      if (step.rate === 0) return { tps: capacity, latPctMs: 30 };
      const offered = step.rate * step.clients;
      return { tps: Math.min(offered, capacity), latPctMs: offered > capacity ? 25 : 0.8 };
    }
  }
}

export function writeStudyRun(
  lakeDir: string,
  repoRoot: string,
  study: Study,
  backend: 'aws' | 'local' = 'aws',
  incompleteMetric?: RunFixtureOptions['incompleteMetric'],
): WrittenRun {
  const doc = JSON.parse(readFileSync(join(repoRoot, 'experiments', `${study}.json`), 'utf8')) as unknown;
  return writeRunFromSpec(lakeDir, doc, (cell, step) => numbers(study, cell, step), {
    backend,
    ...(incompleteMetric ? { incompleteMetric } : {}),
    runId: `${study}-fixture`,
    intervals: 30,
    scripts: { 'fullscan_1kb.lua': '-- fixture', 'rw_consistency.lua': '-- fixture' },
  });
}
