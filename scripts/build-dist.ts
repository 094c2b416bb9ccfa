/**
 * Emits dist/ from the TypeScript sources tsconfig.json includes, one file at a time with esbuild
 * (tsconfig has isolatedModules: every file compiles alone, as Jest's transform compiles them), and
 * copies the JSON files they import, as tsc's resolveJsonModule emit does. Type errors are
 * `npm run typecheck`'s to report (tsc --noEmit: `npm run build` and scripts/test.sh run it);
 * emitting takes about a second where tsc's own emit, which type-checks first, takes 15-20 s of one
 * core. package.json's build script bundles this file into dist/ and runs it:
 *   npx esbuild scripts/build-dist.ts --bundle --platform=node --packages=external --outfile=dist/build-dist.js
 *   node dist/build-dist.js
 */
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The checkout: this file runs as dist/build-dist.js (bundled) or dist/scripts/build-dist.js. */
const PROJECT_ROOT = resolve(__dirname, __dirname.endsWith(join('dist', 'scripts')) ? '../..' : '..');

/** The TypeScript sources tsconfig.json compiles (its include and exclude), relative to the checkout. */
function sources(root: string): { files: string[]; outDir: string; target: string } {
  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (p) => readFileSync(p, 'utf8'));
  const errors = [...(read.error ? [read.error] : [])];
  const parsed = ts.parseJsonConfigFileContent(read.config as object, ts.sys, root, undefined, configPath);
  errors.push(...parsed.errors);
  if (errors.length > 0)
    throw new Error(
      `${configPath}: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`,
    );
  const outDir = parsed.options.outDir;
  if (outDir === undefined) throw new Error(`${configPath}: compilerOptions.outDir is not set`);
  // tsconfig's target (ES2022) names the language level; esbuild takes it lower-cased.
  const target = ts.ScriptTarget[parsed.options.target ?? ts.ScriptTarget.ES2022].toLowerCase();
  return { files: parsed.fileNames.filter((f) => !f.endsWith('.d.ts')), outDir, target };
}

/** The JSON files `files` import by relative path (ts.preProcessFile: imports without a type check). */
function importedJson(files: readonly string[]): string[] {
  const json = new Set<string>();
  for (const file of files) {
    for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (imported.fileName.startsWith('.') && imported.fileName.endsWith('.json'))
        json.add(resolve(dirname(file), imported.fileName));
    }
  }
  return [...json].sort();
}

export async function buildDist(root: string): Promise<{ files: number; json: number }> {
  const { files, outDir, target } = sources(root);
  await build({
    entryPoints: files,
    outdir: outDir,
    outbase: root,
    absWorkingDir: root,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target,
    sourcemap: true,
    // Class fields as tsconfig's target compiles them (defined, not assigned).
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
    // import() stays a require() in a promise, as tsc's CommonJS output has it.
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
  });
  const json = importedJson(files);
  for (const file of json) {
    const out = join(outDir, relative(root, file));
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(file, out);
  }
  return { files: files.length, json: json.length };
}

if (require.main === module) {
  buildDist(PROJECT_ROOT).then(
    ({ files, json }) => console.log(`dist: ${files} TypeScript files, ${json} JSON files`),
    (e: unknown) => {
      console.error(`dist: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
