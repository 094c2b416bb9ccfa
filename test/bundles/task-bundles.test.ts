/**
 * Each Task's function bundles its own Task, not the task registry (core/workflow/task-registry.ts,
 * which imports every Task), and no Task can load DuckDB: the handler entries bundled as
 * NodejsFunction bundles them (lib/workflow.ts: esbuild, @aws-sdk and @duckdb/node-api external),
 * read through esbuild's metafile: the modules that put code into the bundle (after tree shaking),
 * and the packages it leaves to the runtime.
 */
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { TASK_NAMES } from '../../core/workflow/task-names';
import { PROJECT_ROOT } from '../cdk/cdk-fixture';

async function metafileOf(entry: string): Promise<Metafile> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    write: false,
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*', '@duckdb/node-api'],
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
  });
  return out.metafile;
}

/** What the bundle holds: the modules that put code into it, and the packages it requires at run time. */
function contents(meta: Metafile): { modules: string[]; externals: string[] } {
  const outputs = Object.values(meta.outputs);
  expect(outputs).toHaveLength(1);
  const output = outputs[0]!;
  return { modules: Object.keys(output.inputs), externals: output.imports.filter((i) => i.external).map((i) => i.path) };
}

describe.each(TASK_NAMES.map((t) => [t]))('the %s function', (task) => {
  let bundle: { modules: string[]; externals: string[] };
  beforeAll(async () => {
    bundle = contents(await metafileOf(relative(PROJECT_ROOT, join(PROJECT_ROOT, 'lambdas', task, 'handler.ts'))));
  }, 60_000);

  test('bundles its Task and its AWS deps, without the task registry', () => {
    expect(bundle.modules).toEqual(expect.arrayContaining(['lambdas/runtime/aws-runtime.ts', 'lambdas/runtime/aws-deps.ts']));
    expect(bundle.modules).not.toContain('core/workflow/task-registry.ts');
  });

  test('holds no DuckDB and requires nothing the nodejs22.x runtime lacks', () => {
    // The chain that once brought it in: aws-deps.ts -> regression/judge.ts -> load.ts -> lake/results.ts -> lake/duckdb.ts.
    expect(bundle.modules).not.toContain('core/lake/duckdb.ts');
    expect(bundle.externals.filter((p) => !p.startsWith('@aws-sdk/') && !p.startsWith('node:') && !isBuiltin(p))).toEqual([]);
  });
});
