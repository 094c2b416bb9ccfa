/**
 * How long the local backend takes to provision a writer and a reader until the reader replicates, and to tear it down.
 * The template is timed apart, since it is paid once per machine and version.
 * For bench/ scripts. Figures are wall-clock milliseconds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RunContext } from '../../backend';
import type { CellPlan } from '../../plan/types';
import { LocalBackend } from './local-backend';
import { checkLocalDependencies } from './preflight';
import { ensureTemplate } from './template';

export interface ProvisioningMeasurement {
  readonly serverVersion: string;
  readonly instanceClass: string;
  /** Time to make sure the template exists: near 0 when cached, seconds on first use. */
  readonly templateMs: number;
  /** Per sample: provisionCell until checkCellReady says ready. */
  readonly provisionMs: readonly number[];
  readonly teardownMs: readonly number[];
  readonly medianProvisionMs: number;
  readonly maxProvisionMs: number;
}

export interface ProvisioningOptions {
  readonly samples?: number;
  readonly instanceClass?: string;
  readonly repoRoot?: string;
  readonly templateRoot?: string;
  readonly clusterParameters?: CellPlan['variant']['clusterParameters'];
  readonly instanceParameters?: CellPlan['variant']['instanceParameters'];
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : Math.round((s[mid - 1]! + s[mid]!) / 2);
}

export async function measureLocalProvisioning(options: ProvisioningOptions = {}): Promise<ProvisioningMeasurement> {
  const samples = options.samples ?? 3;
  const instanceClass = options.instanceClass ?? 'db.r6g.large';
  const versions = await checkLocalDependencies();
  let t = performance.now();
  await ensureTemplate(versions.tools, versions.serverVersion, options.templateRoot);
  const templateMs = Math.round(performance.now() - t);

  const scratch = await mkdtemp(join(tmpdir(), 'ab-provision-bench-'));
  const backend = new LocalBackend({
    lakeDir: join(scratch, 'lake'),
    runRoot: join(scratch, 'runs'),
    repoRoot: options.repoRoot ?? process.cwd(),
    ...(options.templateRoot ? { templateRoot: options.templateRoot } : {}),
  });
  const provisionMs: number[] = [];
  const teardownMs: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const run: RunContext = {
        runId: `provision-bench-${i}`,
        specName: 'provision-bench',
        backend: 'local',
        region: 'local',
        engineVersion: '-',
        dt: new Date().toISOString().slice(0, 10),
        ttlHours: 1,
      };
      const cell: CellPlan = {
        cellId: 'bench-r1',
        index: 0,
        repeat: 1,
        variant: {
          name: 'bench',
          instanceClass,
          readers: 1,
          clusterParameters: options.clusterParameters ?? {},
          instanceParameters: options.instanceParameters ?? {},
          performanceInsights: false,
          clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
        },
        data: { tables: 1, tableSize: 1, reuse: 'cell', prepareThreads: 1 },
        steps: [],
      };
      t = performance.now();
      const resources = await backend.provisionCell(run, cell);
      while (!(await backend.checkCellReady(run, cell, resources)).ready) await new Promise((r) => setTimeout(r, 20));
      provisionMs.push(Math.round(performance.now() - t));
      t = performance.now();
      await backend.teardownCell(run, cell, resources);
      teardownMs.push(Math.round(performance.now() - t));
    }
  } finally {
    for (let i = 0; i < samples; i++) await backend.cleanupRun(`provision-bench-${i}`);
    await rm(scratch, { recursive: true, force: true });
  }
  return {
    serverVersion: versions.serverVersion,
    instanceClass,
    templateMs,
    provisionMs,
    teardownMs,
    medianProvisionMs: median(provisionMs),
    maxProvisionMs: Math.max(...provisionMs),
  };
}
