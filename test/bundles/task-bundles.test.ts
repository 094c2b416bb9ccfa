/**
 * Each Task's function bundles its own Task and the AWS backend parts that Task calls, not the task
 * registry (core/workflow/task-registry.ts, which imports every Task), not the full AWS backend,
 * and not the parts of other Tasks; and no Task can load DuckDB: the handler entries bundled as
 * NodejsFunction bundles them (lib/workflow.ts: esbuild, @aws-sdk and @duckdb/node-api external,
 * the package's sideEffects list), read through esbuild's metafile: the modules that put code into
 * the bundle (after tree shaking), and the packages it leaves to the runtime.
 */
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { TASK_NAMES, type TaskName } from '../../core/workflow/task-names';
import { PROJECT_ROOT } from '../cdk/cdk-fixture';

async function metafileOf(entry: string): Promise<Metafile> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    write: false,
    minify: true,
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*', '@duckdb/node-api'],
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
  });
  return out.metafile;
}

/** What the bundle holds: the modules that put code into it, the packages it requires at run time, its size. */
function contents(meta: Metafile): { modules: string[]; externals: string[]; bytes: number } {
  const outputs = Object.values(meta.outputs);
  expect(outputs).toHaveLength(1);
  const output = outputs[0]!;
  return {
    modules: Object.keys(output.inputs),
    externals: output.imports.filter((i) => i.external).map((i) => i.path),
    bytes: output.bytes,
  };
}

/**
 * The modules that do one backend part's work (core/backends/aws/parts, the Task wiring of
 * core/task-deps), and the functions whose Task calls it (lambdas/<task>/handler.ts composes them;
 * lib/backend-permissions.ts grants the same parts).
 */
const PART_MODULES: readonly { part: string; modules: readonly string[]; tasks: readonly TaskName[] }[] = [
  {
    part: 'preflight',
    modules: [
      'core/task-deps/aws-preflight-deps.ts',
      'core/backends/aws/preflight.ts',
      'core/backends/aws/preflight-network.ts',
    ],
    tasks: ['plan-run'],
  },
  {
    part: 'databases',
    // db-instances.ts also holds the RDS instance parameter rules the preflight checks a spec with: not a marker.
    modules: ['core/backends/aws/parts/databases.ts', 'core/backends/aws/self-managed-servers.ts'],
    tasks: ['provision-cell', 'check-cell-ready'],
  },
  {
    part: 'client machines',
    modules: ['core/backends/aws/parts/client-machines.ts'],
    tasks: ['start-clients', 'check-clients-ready'],
  },
  {
    part: 'runner jobs',
    modules: ['core/backends/aws/parts/runner-jobs.ts', 'core/backends/aws/jobs.ts'],
    tasks: ['run-step'],
  },
  {
    part: 'server metrics',
    modules: ['core/backends/aws/parts/server-metrics.ts', 'core/backends/aws/metrics.ts'],
    tasks: ['run-step', 'collect-late-metrics'],
  },
  { part: 'cell teardown', modules: ['core/backends/aws/parts/cell-teardown.ts'], tasks: ['teardown-cell'] },
  {
    part: 'compaction',
    modules: ['core/task-deps/athena-compaction-deps.ts', 'core/backends/aws/athena-compaction.ts'],
    tasks: ['finish-run'],
  },
  {
    part: 'verdicts',
    modules: ['core/backends/aws/parts/verdict-alerts.ts', 'core/backends/aws/verdict-alerts.ts'],
    tasks: ['compute-verdicts'],
  },
  // A history read through Athena: ComputeVerdicts judges the run on it, JudgeRound tests a round against it.
  {
    part: 'history reads',
    modules: ['core/regression/judge.ts', 'core/backends/aws/athena-lake.ts'],
    tasks: ['compute-verdicts', 'judge-round'],
  },
];

/** Modules no function bundles: the registry of every Task, and the backend and deps with every part. */
const EVERY_TASK_MODULES = [
  'core/workflow/task-registry.ts',
  'core/backends/aws/aws-backend.ts',
  'core/task-deps/aws-task-deps.ts',
  'lambdas/runtime/aws-deps.ts',
];

describe.each(TASK_NAMES.map((t) => [t]))('the %s function', (task) => {
  let bundle: { modules: string[]; externals: string[]; bytes: number };
  beforeAll(async () => {
    bundle = contents(await metafileOf(relative(PROJECT_ROOT, join(PROJECT_ROOT, 'lambdas', task, 'handler.ts'))));
  }, 60_000);

  test('bundles its own deps wiring, without the task registry or the backend with every part', () => {
    expect(bundle.modules).toEqual(
      expect.arrayContaining([
        'lambdas/runtime/aws-runtime.ts',
        'core/task-deps/aws-function-deps.ts',
        'core/backends/aws/parts/compose.ts',
      ]),
    );
    expect(bundle.modules.filter((m) => EVERY_TASK_MODULES.includes(m))).toEqual([]);
  });

  test("bundles the backend parts its Task calls and no other Task's", () => {
    const held = PART_MODULES.map(({ part, modules }) => ({
      part,
      modules: modules.filter((m) => bundle.modules.includes(m)),
    }));
    const expected = PART_MODULES.map(({ part, modules, tasks }) => ({
      part,
      modules: tasks.includes(task) ? modules : [],
    }));
    expect(held).toEqual(expected);
  });

  test("only PlanRun, which validates the experiment, holds the experiment schema's validator (zod)", () => {
    expect(bundle.modules.some((m) => /(^|\/)node_modules\/zod\//.test(m))).toBe(task === 'plan-run');
  });

  test('holds no YAML parser but in PlanRun (which reads spec files): hashing a definition needs none', () => {
    // The chain that brought it into ComputeVerdicts: regression/measurement.ts
    // -> experiment/validate.ts (canonicalJson) -> yaml.
    expect(bundle.modules.some((m) => /(^|\/)node_modules\/yaml\//.test(m))).toBe(task === 'plan-run');
  });

  test('holds no DuckDB and requires nothing the nodejs22.x runtime lacks', () => {
    // The chain that once brought it in: aws-deps.ts ->
    // regression/judge.ts -> load.ts -> lake/results.ts -> lake/duckdb.ts.
    expect(bundle.modules).not.toContain('core/lake/duckdb.ts');
    expect(
      bundle.externals.filter((p) => !p.startsWith('@aws-sdk/') && !p.startsWith('node:') && !isBuiltin(p)),
    ).toEqual([]);
  });
});
