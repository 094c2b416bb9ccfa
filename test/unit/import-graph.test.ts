/**
 * The import graph follows the data's one-way path (docs/architecture.md): a folder imports only
 * folders in layers below its own, never one above (a back edge). The layers, lowest first, are the
 * path's stages as code depends on them: what a stage consumes (the contracts of the stages before
 * it) and the port it calls (core/backend.ts) sit below it; entry points (CLI, Lambdas, the CDK app)
 * sit on top.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const repoRoot = resolve(__dirname, '../..');

/** Lowest first. A folder may import its own layer's folders and any below; see docs/architecture.md. */
const LAYERS: readonly (readonly string[])[] = [
  // the user-facing error base every stage throws, number formatting every stage prints with, the seeded generator
  // the plan's randomized order and the change-point tests draw from, the reader of every file a user names
  // and Student's t the intervals are built from
  ['core/polyfills', 'core/errors', 'core/format', 'core/random', 'core/user-file', 'core/stats', 'prices'],
  ['core/rounds'], // the judge after each round: pure statistics the plan, the workflow and the report use
  ['core/aurora'], // facts about Aurora MySQL (parameter catalogue, write forwarding)
  ['core/experiment'], // spec: schema, validation, scaling
  ['core/plan'], // plan: cells, steps, order, cost
  ['core/sysbench'], // runner command and output parser
  ['core/runner'], // the client runner program (bundled as client/runner.js), its command line from core/sysbench
  ['core/lake'], // lake rows, their columns and queries
  ['core/backend'], // the Backend port the workflow calls
  ['core/workflow'], // the Tasks of the state machine
  ['core/backends/local', 'core/backends/aws'], // the two implementations of the port
  ['core/task-deps'], // the Tasks' deps wired from a backend for a platform (the AWS Lambdas and the rehearsal)
  ['core/report'], // reports over the lake
  ['core/regression'], // verdicts over many runs' lake rows
  ['core/cli', 'core/rehearsal'], // commands: local run, AWS run, the AWS rehearsal
  ['lambdas', 'lib'], // AWS entry points: the Task handlers, the CDK app
  ['bin', 'bench', 'scripts'], // command-line entry points
];

function areaOf(file: string): string {
  const parts = relative(repoRoot, file).split(sep);
  if (parts[0] === 'core' && parts[1] === 'backends') return parts.slice(0, 3).join('/');
  if (parts[0] === 'core') return `core/${parts[1]!.replace(/\.ts$/, '')}`;
  return parts[0]!;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

function layerOf(area: string): number {
  const i = LAYERS.findIndex((layer) => layer.includes(area));
  if (i < 0)
    throw new Error(
      `${area} is in no layer of test/unit/import-graph.test.ts: add it where it belongs in the data path ` +
        `(docs/architecture.md)`,
    );
  return i;
}

/**
 * Every relative import, require and import() of the production
 * code between two folders: "from -> to" and the importing files.
 */
function edges(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const top of ['core', 'lib', 'lambdas', 'bin', 'bench', 'scripts']) {
    for (const file of sourceFiles(join(repoRoot, top))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const imported of importedFiles) {
        if (!imported.fileName.startsWith('.')) continue;
        const from = areaOf(file);
        const to = areaOf(resolve(dirname(file), imported.fileName));
        if (from === to) continue;
        const edge = `${from} -> ${to}`;
        found.set(edge, [...(found.get(edge) ?? []), relative(repoRoot, file)]);
      }
    }
  }
  return found;
}

function backEdges(): Map<string, string[]> {
  return new Map(
    [...edges()].filter(([edge]) => {
      const [from, to] = edge.split(' -> ') as [string, string];
      return layerOf(to) > layerOf(from);
    }),
  );
}

describe('import graph: the one-way path of docs/architecture.md', () => {
  it('no folder imports a folder of a later layer (no back edge, and no list of exceptions)', () => {
    // Act
    const back = backEdges();

    // Assert
    const found = [...back].map(([edge, files]) => `${edge} (${[...new Set(files)].join(', ')})`);
    expect(found).toEqual([]);
  });

  it('core never imports lambdas, bin or lib; lib never imports CLI code', () => {
    // Arrange: the rules of the agreement, stated on their own so a change of the layers cannot drop them.
    const forbidden = (edge: string) =>
      /^core\/\S+ -> (lambdas|bin|lib)$/.test(edge) || /^lib -> (core\/cli|bin)$/.test(edge);

    // Act
    const all = [...edges().keys()];

    // Assert
    expect(all.filter(forbidden)).toEqual([]);
  });
});
