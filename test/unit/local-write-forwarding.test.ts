/**
 * The local backend's write-forwarding capability: MariaDB replicas cannot forward writes, so a
 * job whose writes go to a reader of a write-forwarding variant (RunnerJob.writeForwarding) is
 * adapted by the backend itself into the client-side emulation (client/workloads/wf_emulation.lua,
 * a second connection to the writer); the workflow's job carries only the intent.
 */
import type { CellResources, RunnerJob } from '../../core/backend';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { emulatingForwarding } from '../../core/backends/local/parts/forwarding-emulation';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';
import { jobsToStart } from '../../core/workflow/tasks/step-jobs';
import type { TaskDeps } from '../../core/workflow/tasks/types';

const spec: SpecInput = {
  name: 'wf-cap',
  engine: { version: '3.04.0' },
  variants: [
    {
      name: 'fwd',
      instanceClass: 'db.r6g.large',
      readers: 1,
      writeForwarding: { enabled: true, consistency: 'SESSION' },
    },
  ],
  data: { tables: 1, tableSize: 100 },
  defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'rw-reader', test: 'oltp_read_write', target: 'reader', threads: [1] }],
};

const resources = {
  cellId: 'c1',
  clusterId: 'k1',
  writer: { host: '127.0.0.1', port: 13306 },
  readers: [{ host: '127.0.0.1', port: 13307 }],
  clients: [{ clientId: 'client-1' }],
  credentials: { user: 'sbtest', secretRef: 'local' },
  notes: [],
  backendState: {},
} as unknown as CellResources;

const job = (over: Partial<RunnerJob>): RunnerJob =>
  ({
    jobId: 'c1/s1/run/client-1',
    phase: 'run',
    clientId: 'client-1',
    endpoint: { host: '127.0.0.1', port: 13307 },
    workload: 'oltp_read_write',
    sysbenchArgs: ['--tables=1', '--threads=4'],
    outputPrefix: 'raw/c1/s1/run/client-1/',
    ...over,
  }) as RunnerJob;

describe('the local backend emulates write forwarding', () => {
  it('declares it emulates; the workflow hands it only the intent: the workload, the level, no port', async () => {
    const dir = mkdtempSync(join(process.env['TMPDIR'] ?? tmpdir(), 'wf-cap-'));
    try {
      const backend = new LocalBackend({
        lakeDir: join(dir, 'lake'),
        runRoot: join(dir, 'runs'),
        repoRoot: dir,
        hostRunsDir: join(dir, 'host-runs'),
      });
      expect(backend.writeForwarding).toBe('emulated');
      const plan = planRun(validateSpec(spec), { backend: 'local', runId: 'wf-cap-1' });
      const cell = plan.cells[0]!;
      const step = cell.steps.find((s) => s.target !== 'writer')!;
      const run = {
        runId: plan.runId,
        specName: plan.specName,
        backend: 'local' as const,
        region: plan.region,
        engineVersion: plan.engine.version,
        dt: plan.dt,
        ttlHours: plan.ttlHours,
      };
      const deps = { backend } as unknown as TaskDeps;
      const [built] = await jobsToStart(deps, { run, cell, resources, step, phase: 'run' });
      expect(built!.workload).toBe('oltp_read_write');
      expect(built!.writeForwarding).toEqual({ consistency: 'SESSION' });
      expect(built).not.toHaveProperty('extraPort');
      // A backend that forwards natively gets the job as it is.
      const [native] = await jobsToStart(
        { backend: { kind: 'aws', lake: backend.lake, writeForwarding: 'native' } } as unknown as TaskDeps,
        {
          run,
          cell,
          resources,
          step,
          phase: 'run',
        },
      );
      expect(native).not.toHaveProperty('writeForwarding');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs a forwarded job as wf_emulation.lua over the step's workload, the writer as its second port", () => {
    const adapted = emulatingForwarding(job({ writeForwarding: { consistency: 'SESSION' } }), resources);
    expect(adapted).toEqual({
      ...job({ writeForwarding: { consistency: 'SESSION' } }),
      workload: 'wf_emulation.lua',
      sysbenchArgs: [
        '--tables=1',
        '--threads=4',
        '--wf_base=oltp_read_write',
        '--wf_writer_port=13306',
        '--consistency=SESSION',
      ],
      extraPort: 13306,
    });
    expect(
      emulatingForwarding(job({ workload: 'oltp_write_only', writeForwarding: { consistency: 'EVENTUAL' } }), resources)
        .sysbenchArgs,
    ).toContain('--wf_base=oltp_write_only');
  });

  it("keeps a step's own consistency option instead of adding the variant's level", () => {
    const own = job({
      workload: 'rw_consistency.lua',
      sysbenchArgs: ['--tables=1', '--consistency=GLOBAL'],
      writeForwarding: { consistency: 'GLOBAL' },
    });
    expect(emulatingForwarding(own, resources).sysbenchArgs).toEqual([
      '--tables=1',
      '--consistency=GLOBAL',
      '--wf_base=rw_consistency',
      '--wf_writer_port=13306',
    ]);
  });

  it('leaves a job without forwarded writes, and a prepare, as they are', () => {
    const plain = job({});
    expect(emulatingForwarding(plain, resources)).toBe(plain);
    const prepare = job({ phase: 'prepare', writeForwarding: { consistency: 'SESSION' } });
    expect(emulatingForwarding(prepare, resources)).toBe(prepare);
  });
});
