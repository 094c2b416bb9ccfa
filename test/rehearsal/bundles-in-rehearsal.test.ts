/**
 * `run --aws-rehearsal` runs each Task as its synthesized function (lib/synthesized-workflow.ts
 * synthesizeBundledCached) in the Lambda sandbox (core/rehearsal/lambda-sandbox.ts): a process per
 * cold start, reused while warm, the template's timeout enforced, the function's SDK calls answered
 * by the rehearsal's emulations. Shown with a run that succeeds, and with two defects only a bundle
 * can have: one that does not load (the shape of jsonc-parser's UMD `main`, which `require`s its own
 * files at run time) and one that outlives its function's timeout.
 */
import { cpSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalLake } from '../../core/lake/duckdb';
import type { MetricWindowRow, ServerMetricRow } from '../../core/lake/rows';
import type { RehearsalOptions, RehearsalResult } from '../../core/rehearsal/run-rehearsal';
import { TASK_NAMES, type TaskName } from '../../core/workflow/task-names';
import { rehearsalFile, rehearse as rehearseFile, wiring } from '../helpers/rehearsal-file';

const file = rehearsalFile('abr-bundles-');
// The synthesis with its bundling (minutes on a busy machine when nothing is cached), before any test's clock starts.
beforeAll(() => wiring.synthesize('us-east-1'), 900_000);

function specFile(name: string): string {
  const spec = join(file.work, `${name}.json`);
  writeFileSync(
    spec,
    JSON.stringify({
      name,
      engine: { version: '3.04.0' },
      region: 'us-east-1',
      variants: [
        {
          name: 'one',
          instanceClass: 'db.r6g.large',
          az: 'a',
          readers: 0,
          clusterParameters: {},
          clients: { count: 1, instanceType: 'c6g.large' },
        },
      ],
      data: { tables: 1, tableSize: 500 },
      defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
      workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [2], target: 'writer' }],
      ttlHours: 1,
    }),
  );
  return spec;
}

/**
 * The synthesis with one Task's asset replaced by a copy whose index.js is `indexJs` (the bundle
 * itself renamed bundle.js beside it), and that function's timeout, when given.
 */
function withAsset(task: TaskName, indexJs: string, timeoutS?: number): RehearsalOptions['synthesize'] {
  return (region) => {
    const synthesis = wiring.synthesize(region);
    return {
      ...synthesis,
      functions: synthesis.functions.map((f) => {
        if (f.task !== task) return f;
        const assetDir = mkdtempSync(join(file.work, `${task}-asset-`));
        cpSync(f.assetDir, assetDir, { recursive: true });
        renameSync(join(assetDir, 'index.js'), join(assetDir, 'bundle.js'));
        writeFileSync(join(assetDir, 'index.js'), indexJs);
        return { ...f, assetDir, ...(timeoutS !== undefined ? { timeoutS } : {}) };
      }),
    };
  };
}

async function rehearse(
  name: string,
  extra: Partial<RehearsalOptions> = {},
): Promise<{ r: RehearsalResult; lines: string[] }> {
  const { r, timed } = await rehearseFile(file, specFile(name), { lakeDir: join(file.work, `${name}-lake`), ...extra });
  return { r, lines: timed };
}

describe('the AWS rehearsal runs the synthesized functions', () => {
  it('runs every Task in sandbox processes: a cold start each, warm ones reused, none in this process', async () => {
    // Act
    const { r, lines } = await rehearse('bundled');

    // Assert
    expect({ status: r.status, error: r.error, cause: r.cause?.slice(0, 500), tail: lines.slice(-15) }).toMatchObject({
      status: 'SUCCEEDED',
    });
    const ran = [...r.functions];
    expect(ran.map(([task]) => task).sort()).toEqual([...TASK_NAMES].sort());
    // ComputeVerdicts read the lake views' SQL shipped in its asset (lib/workflow.ts afterBundling).
    expect(lines.join('\n')).toMatch(/verdicts against the experiment's history/);
    expect(lines.join('\n')).not.toMatch(/verdicts not computed/);
    const synthesized = wiring.synthesize('us-east-1').functions;
    for (const [task, f] of ran) {
      // Bound by the template's logical id of the Task's function, not by the TypeScript handler.
      expect(f.logicalId).toBe(synthesized.find((s) => s.task === task)!.logicalId);
      // a Task only a failure path runs (TeardownCellOnError's function is TeardownCell's)
      if (f.invocations === 0) continue;
      expect(f.coldStarts).toBeGreaterThanOrEqual(1);
      expect(f.pids).not.toContain(process.pid);
    }
    for (const task of [
      'plan-run',
      'provision-cell',
      'check-cell-ready',
      'start-clients',
      'run-step',
      'teardown-cell',
      'finish-run',
    ] as const) {
      expect(r.functions.get(task)!.invocations).toBeGreaterThanOrEqual(1);
    }
    // RunStep is looked at again until the step is done: the later calls find its environment warm.
    const runStep = r.functions.get('run-step')!;
    expect(runStep.invocations).toBeGreaterThan(runStep.coldStarts);
    // The cluster volume's I/O, per interval (5 s in the rehearsal, published after each closes): the
    // late collection waited for the interval covering the step's end, so every one of them came.
    const lake = await LocalLake.open(join(file.work, 'bundled-lake'));
    try {
      const windows = await lake.query<MetricWindowRow>(
        `SELECT * FROM metric_windows WHERE run_id = '${r.plan.runId}' AND metric LIKE 'Volume%'`,
      );
      expect(windows.map((w) => [w.role, w.metric, w.period_s, w.complete]).sort()).toEqual([
        ['cluster', 'VolumeReadIOPs', 5, true],
        ['cluster', 'VolumeWriteIOPs', 5, true],
      ]);
      const lastStart = new Date(Date.parse(windows[0]!.window_end) - 5000).toISOString();
      const volume = await lake.query<ServerMetricRow>(
        `SELECT * FROM server_metrics WHERE run_id = '${r.plan.runId}' AND metric = 'VolumeReadIOPs'`,
      );
      expect(volume.map((m) => new Date(m.ts).toISOString())).toContain(lastStart);
    } finally {
      lake.close();
    }
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 900_000);

  it('fails PlanRun with Runtime.ImportModuleError, naming the function, when its bundle does not load', async () => {
    // Arrange: a bundle that requires a file of its own the asset does not have (esbuild bundling a
    // UMD `main` leaves such a require: evanw/esbuild#1619, microsoft/node-jsonc-parser#57).
    const synthesize = withAsset(
      'plan-run',
      "'use strict';\nrequire('./impl/format');\nmodule.exports = require('./bundle.js');\n",
    );

    // Act
    const { r, lines } = await rehearse('unloadable', { synthesize });

    // Assert
    expect(r.status).toBe('FAILED');
    const failed = r.events
      .filter((e) => e.type === 'StateFailed' || e.type === 'ExecutionFailed')
      .map((e) => `${e.state?.name ?? ''} ${e.Error ?? ''} ${e.Cause ?? ''}`);
    expect(failed.join('\n')).toMatch(/Runtime\.ImportModuleError/);
    expect(failed.join('\n')).toMatch(/Cannot find module '\.\/impl\/format'/);
    const logicalId = wiring.synthesize('us-east-1').functions.find((f) => f.task === 'plan-run')!.logicalId;
    expect(lines.join('\n')).toMatch(new RegExp(`plan-run \\(function ${logicalId}\\): Runtime\\.ImportModuleError`));
    expect(r.functions.get('provision-cell')!.invocations).toBe(0);
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 600_000);

  it("ends a Task past its timeout as Sandbox.Timedout, which the state machine's Catch tears down", async () => {
    // Arrange: StartClients waiting 6 s before its work, with a 2 s timeout.
    const slow =
      "'use strict';\nconst real = require('./bundle.js');\nexports.handler = async (event, context) => { " +
      'await new Promise((r) => setTimeout(r, 6000)); return real.handler(event, context); };\n';
    const synthesize = withAsset('start-clients', slow, 2);

    // Act
    const { r, lines } = await rehearse('timed-out', { synthesize });

    // Assert
    const timedOut = r.events.filter((e) => e.Error === 'Sandbox.Timedout');
    expect({ timedOut: timedOut.map((e) => `${e.type} ${e.state?.name ?? ''}`), tail: lines.slice(-10) }).toMatchObject(
      {
        timedOut: expect.arrayContaining([expect.stringMatching(/StartClients/)]),
      },
    );
    expect(timedOut[0]!.Cause).toMatch(/Task timed out after 2\.00 seconds/);
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'TeardownCellOnError')).toHaveLength(
      1,
    );
    expect(r.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'RunStep')).toHaveLength(0);
    // The killed environment is not reused: StartClients ran once, a cold start.
    expect(r.functions.get('start-clients')).toMatchObject({ invocations: 1, coldStarts: 1 });
    expect(r.leftBehind).toEqual([]);
    expect(r.notCleaned).toEqual([]);
  }, 600_000);
});
