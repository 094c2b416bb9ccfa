/**
 * Benchmark of the harness itself (issue targets in brackets):
 *   1. the same sysbench step run bare (sysbench straight at a local server) and through
 *      `aurora-bench run --local`'s code path (runLocal: the ASL under aws-local-stepfunctions, the
 *      runner, the parser, the lake), in one run, alternating: TPS ratio harness/bare  [>= 0.95]
 *   2. the harness's per-step overhead: the RunStep call that starts the step's run -> the RunStep
 *      call that collects it, minus the
 *      step's warm-up + duration  [<= 1 s, provisioning excluded]
 *   3. local provisioning of a writer + 1 reader until it replicates  [<= 5 s]
 *
 * Run: `node dist/bench/local-overhead.js [--duration 20] [--rounds 2]`
 * after `npm run build:dist` (scripts/setup.sh builds it). Prints figures; asserts nothing.
 */
import '../core/polyfills';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RunContext } from '../core/backend';
import { LocalBackend } from '../core/backends/local/local-backend';
import { measureLocalProvisioning } from '../core/backends/local/provision-bench';
import { checkLocalDependencies } from '../core/backends/local/preflight';
import { LOCAL_LOGINS } from '../core/backends/local/template';
import { planRun } from '../core/plan/plan';
import { validateSpec } from '../core/experiment/validate';
import { buildSysbenchArgs } from '../core/plan/sysbench-args';
import { parseSysbenchOutput } from '../core/sysbench/parser';
import { findRepoRoot } from '../core/cli/tool-info';
import type { ExecutionEvent } from '../core/workflow/local-runner';
import type { RunStepOutput } from '../core/workflow/tasks/step-types';
import { runLocal } from '../core/cli/run-local';

const REPO = findRepoRoot(__dirname);

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    threads: { type: 'string', default: '4' },
    samples: { type: 'string', default: '3' },
  },
});
const durationS = Number(values.duration);
const rounds = Number(values.rounds);
const threads = Number(values.threads);

const spec = validateSpec({
  name: 'bench-overhead',
  engine: { version: '3.04.0' },
  variants: [{ name: 'bench', instanceClass: 'db.r6g.large', readers: 0 }],
  data: { tables: 4, tableSize: 10000 },
  defaults: { durationS, warmupS: 0, reportIntervalS: 1 },
  workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [threads] }],
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** sysbench straight at a server the local backend provisions: the same server, data and options. */
async function bareTps(scratch: string, round: number): Promise<number> {
  const backend = new LocalBackend({ lakeDir: join(scratch, 'lake'), runRoot: join(scratch, 'runs'), repoRoot: REPO });
  const plan = planRun(spec, { backend: 'local', runId: `bench-bare-${round}` });
  const cell = plan.cells[0]!;
  const step = cell.steps[0]!;
  const run: RunContext = {
    runId: plan.runId,
    specName: plan.specName,
    backend: 'local',
    region: plan.region,
    engineVersion: plan.engine.version,
    dt: plan.dt,
    ttlHours: 1,
  };
  let resources = await backend.provisionCell(run, cell);
  for (let i = 0; i < 100; i++) {
    const ready = await backend.checkCellReady(run, cell, resources);
    resources = ready.resources;
    if (ready.ready) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    const w = resources.writer!;
    const conn = [
      `--mysql-host=${w.host}`,
      `--mysql-port=${w.port}`,
      `--mysql-user=${LOCAL_LOGINS.sbtest.user}`,
      `--mysql-password=${LOCAL_LOGINS.sbtest.password}`,
      '--mysql-db=sbtest',
    ];
    const sysbench = (phase: 'prepare' | 'run') =>
      spawnSync('sysbench', [step.test!, ...buildSysbenchArgs(step, cell.data, phase), ...conn, phase], {
        encoding: 'utf8',
      });
    const prep = sysbench('prepare');
    if (prep.status !== 0) throw new Error(`bare prepare failed: ${prep.stderr}`);
    const out = sysbench('run');
    const parsed = parseSysbenchOutput(out.stdout + out.stderr, {
      exitCode: out.status ?? 1,
      percentile: step.percentile,
    });
    if (parsed.status !== 'ok' || !parsed.summary) throw new Error(`bare run failed: ${parsed.error}`);
    return parsed.summary.tps;
  } finally {
    await backend.teardownCell(run, cell, resources);
    await backend.cleanupRun(run.runId);
  }
}

/**
 * The same step through `aurora-bench run --local`'s own code path (runLocal: spec file, plan, the
 * ASL under aws-local-stepfunctions, runner, parser, lake, cleanup); TPS from the outcome RunStep collected,
 * overhead and provisioning from the execution history.
 */
async function harness(
  scratch: string,
  round: number,
): Promise<{ tps: number; overheadS: number; provisionS: number }> {
  const backend = new LocalBackend({ lakeDir: join(scratch, 'lake'), runRoot: join(scratch, 'runs'), repoRoot: REPO });
  const specFile = join(scratch, `bench-${round}.json`);
  writeFileSync(specFile, JSON.stringify(spec));
  const times: Record<string, number> = {};
  const mark = (ev: ExecutionEvent) => {
    const key = `${ev.type}:${ev.state?.name ?? ''}`;
    if (!(key in times)) times[key] = ev.timestamp;
  };
  const result = await runLocal({
    specFile,
    repoRoot: REPO,
    lakeDir: join(scratch, 'lake'),
    backend,
    serverVersion: null,
    runId: `bench-harness-${round}`,
    onEvent: mark,
  });
  if (result.status !== 'SUCCEEDED' || !result.output) throw new Error(`harness run ${result.status}: ${result.cause}`);
  // RunStep's calls: the one that starts the run (its last attempt: earlier ones waited for the
  // prepare) and the first one after it that collects the step.
  const runStep = result.events.filter(
    (e) => e.state?.name === 'RunStep' && ['StateEntered', 'StateRetried', 'StateExited'].includes(e.type),
  );
  const output = (e: ExecutionEvent) => (e.state?.output as { step?: RunStepOutput } | undefined)?.step;
  const startedAt = runStep.findIndex((e) => e.type === 'StateExited' && output(e)?.started?.phase === 'run');
  const attempt = runStep.slice(0, startedAt).findLast((e) => e.type !== 'StateExited');
  const collected = runStep
    .slice(startedAt + 1)
    .find((e) => e.type === 'StateExited' && (output(e)?.collected.length ?? 0) > 0);
  if (startedAt < 0 || !attempt || !collected)
    throw new Error('harness run: no RunStep call started and collected the step');
  const tps = output(collected)!.collected[0]!.outcome.tps!;
  const stepWallS = (collected.timestamp - attempt.timestamp) / 1000;
  return {
    tps,
    overheadS: stepWallS - durationS,
    provisionS: (times['StateExited:ClientsReady']! - times['StateEntered:ProvisionCell']!) / 1000,
  };
}

async function main(): Promise<void> {
  const versions = await checkLocalDependencies();
  console.log(
    `aurora-bench harness benchmark: ${versions.serverVersion}, sysbench ${versions.sysbenchVersion}, ` +
      `oltp_read_write ${threads} threads, ${durationS} s steps, ${rounds} round(s)`,
  );
  const scratch = mkdtempSync(join(tmpdir(), 'ab-bench-'));
  try {
    const bare: number[] = [];
    const through: number[] = [];
    const overhead: number[] = [];
    const workflowProvision: number[] = [];
    for (let r = 0; r < rounds; r++) {
      // Alternate which goes first, so a drift of the machine does not fall on one side.
      const order = r % 2 === 0 ? (['bare', 'harness'] as const) : (['harness', 'bare'] as const);
      for (const side of order) {
        if (side === 'bare') bare.push(await bareTps(scratch, r));
        else {
          const h = await harness(scratch, r);
          through.push(h.tps);
          overhead.push(h.overheadS);
          workflowProvision.push(h.provisionS);
        }
      }
      console.log(
        `  round ${r + 1}: bare ${bare[r]!.toFixed(1)} tps, through the workflow ${through[r]!.toFixed(1)} ` +
          `tps, step overhead ${overhead[r]!.toFixed(2)} s`,
      );
    }
    const ratio = median(through) / median(bare);
    const provisioning = await measureLocalProvisioning({ samples: Number(values.samples), repoRoot: REPO });
    console.log('');
    console.log(
      `TPS ratio harness/bare (median):         ${ratio.toFixed(3)}   [target >= ` +
        `0.95] ${ratio >= 0.95 ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `per-step harness overhead (median):      ${median(overhead).toFixed(2)} s [target <= 1 ` +
        `s]   ${median(overhead) <= 1 ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `provisioning writer + 1 reader (median): ${(provisioning.medianProvisionMs / 1000).toFixed(2)} s ` +
        `[target <= 5 s]   ${provisioning.medianProvisionMs <= 5000 ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `  (samples ${provisioning.provisionMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s; ` +
        `teardown ${provisioning.teardownMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s; in the workflow ` +
        `incl. clients: ${workflowProvision.map((s) => s.toFixed(2)).join(', ')} s)`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
