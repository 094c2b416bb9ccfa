/**
 * Reading and validating experiment files, so nothing starts from a wrong spec.
 * Every error names the file and the JSON path, and says what was expected.
 */
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { auroraConfigurationProblems } from './aurora-configurations';
import { auroraParameterProblems } from './aurora-parameters';
import { awsNameProblems } from './aws-name-checks';
import { engineProblems } from './engine-checks';
import { SpecSchema, type Spec } from './schema';
import { MAX_SPEC_BYTES, parseStrictJson, specBytesToText, SpecTextError } from './spec-text';
import { AuroraBenchError } from '../errors';
import { MIB, readUserFile, readUserText, UserFileError } from '../user-file';

export interface SpecProblem {
  /** JSON path such as variants[1].instanceClass. "" is the whole document. */
  readonly path: string;
  readonly message: string;
}

/** Thrown for an unreadable or invalid spec. `problems` lists every one found. */
export class SpecError extends AuroraBenchError {
  override readonly name = 'SpecError';
  constructor(
    readonly source: string,
    readonly problems: readonly SpecProblem[],
  ) {
    super(
      `${source}: invalid experiment spec\n` +
        problems.map((p) => `  - ${p.path || '(root)'}: ${p.message}`).join('\n'),
    );
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json.length > 60 ? json.slice(0, 57) + '...' : json;
}

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = doc;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function joinOr(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]!}`;
}

/** zod issues to problems that say what was expected and what was found. */
export function problemsFromZod(error: z.ZodError, doc: unknown): SpecProblem[] {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path);
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    } else if (issue.code === 'invalid_value' && 'values' in issue) {
      message =
        `expected one of ` +
        issue.values.map((v) => JSON.stringify(v)).join(', ') +
        `, got ` +
        describeValue(valueAt(doc, issue.path));
    } else if (issue.code === 'invalid_type') {
      const found = valueAt(doc, issue.path);
      message =
        found === undefined
          ? `required (${issue.expected})`
          : `expected ${issue.expected}, got ${describeValue(found)}`;
    } else if (issue.code === 'invalid_union') {
      const expected = [
        ...new Set(issue.errors.flat().flatMap((e) => (e.code === 'invalid_type' ? [e.expected] : []))),
      ];
      const found = valueAt(doc, issue.path);
      message =
        `expected ` +
        (expected.length > 0 ? joinOr(expected) : 'another value') +
        `, got ` +
        (found === null ? 'null' : describeValue(found));
    } else if (issue.code === 'invalid_format' || issue.code === 'too_small' || issue.code === 'too_big') {
      message = `${issue.message}, got ${describeValue(valueAt(doc, issue.path))}`;
    }
    return { path, message };
  });
}

/**
 * Validate an already-parsed document. `source` names it in errors.
 * Past the schema, every Aurora parameter is checked against the parameter catalogue.
 * So a spec RDS would refuse is refused here, before any backend starts anything.
 */
export function validateSpec(doc: unknown, source = 'spec'): Spec {
  const result = SpecSchema.safeParse(doc);
  if (!result.success) throw new SpecError(source, problemsFromZod(result.error, doc));
  const problems = [
    ...awsNameProblems(result.data),
    ...engineProblems(result.data),
    ...auroraConfigurationProblems(result.data),
    ...auroraParameterProblems(result.data),
  ];
  if (problems.length > 0) throw new SpecError(source, problems);
  return result.data;
}

/**
 * Parse JSON, JSONC or YAML text by extension, with the file named in errors.
 * @internal Exported for its tests.
 */
export function parseSpecText(text: string, source: string): unknown {
  const ext = extname(source).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    try {
      // uniqueKeys refuses a duplicate key, since YAML 1.2 requires unique map keys.
      return parseYaml(text, { uniqueKeys: true });
    } catch (e) {
      throw new SpecError(source, [{ path: '', message: `not valid YAML: ${(e as Error).message.split('\n')[0]!}` }]);
    }
  }
  try {
    return parseStrictJson(text, { allowComments: ext === '.jsonc' });
  } catch (e) {
    if (e instanceof SpecTextError) throw new SpecError(source, e.problems);
    throw e;
  }
}

export interface LoadedSpec {
  readonly spec: Spec;
  readonly source: string;
  /** Custom Lua workloads the spec names, by file name, with their text. */
  readonly scripts: Record<string, string>;
}

/**
 * Where a workload's `script` is looked for.
 * The spec's folder comes first, then the workloads shipped with the runner.
 * A script is copied into the lake and shipped to every client, so it must stay in the spec's folder.
 * An absolute path, a ".." segment or a link out of the folder is refused, never read.
 */
function resolveScriptPath(script: string, specDir: string, builtinDir: string): string | undefined {
  const confined = confinedScriptPath(script, specDir);
  if (confined !== undefined && existsSync(confined)) return confined;
  const builtin = join(builtinDir, basename(script));
  return existsSync(builtin) ? builtin : undefined;
}

/** Why a script path is refused, or undefined when it may be read. */
function scriptPathProblem(script: string): string | undefined {
  if (!script.endsWith('.lua')) return `"${script}" is not a Lua file: a workload script is a .lua file`;
  if (isAbsolute(script))
    return (
      `"${script}" is an absolute path: give a path relative to the spec's folder (or a file name from ` +
      `client/workloads)`
    );
  if (script.split(/[\\/]/).includes('..'))
    return `"${script}" leaves the spec's folder (".."): put the script next to the spec, or in client/workloads`;
  return undefined;
}

function confinedScriptPath(script: string, specDir: string): string | undefined {
  if (scriptPathProblem(script) !== undefined) return undefined;
  const candidate = resolve(specDir, script);
  if (!existsSync(candidate)) return candidate;
  // A symbolic link inside the folder may still point out of it, so compare real paths.
  const realDir = realpathSync(specDir);
  const real = realpathSync(candidate);
  const rel = relative(realDir, real);
  return rel !== '' && !rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel) ? candidate : undefined;
}

/** The spec file's text. It is refused when missing, irregular, too large, binary or not UTF-8. */
function readSpecFileText(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readUserFile(file, MAX_SPEC_BYTES);
  } catch (e) {
    if (!(e instanceof UserFileError)) throw e;
    const message =
      e.kind === 'too-large'
        ? `the file is ${e.size ?? '?'} bytes; a spec may be at most ${MAX_SPEC_BYTES} bytes (1 MiB): the whole ` +
          `spec travels in the workflow's input, which Step Functions limits to 256 KiB per state`
        : e.reason;
    throw new SpecError(file, [{ path: '', message }]);
  }
  try {
    return specBytesToText(bytes);
  } catch (e) {
    if (e instanceof SpecTextError) throw new SpecError(file, e.problems);
    throw e;
  }
}

/** The most bytes of a workload's Lua script. sysbench's own scripts are under 20 KiB. */
const MAX_SCRIPT_BYTES = MIB;

export function loadSpecFile(file: string, builtinWorkloadsDir: string): LoadedSpec {
  const text = readSpecFileText(file);
  const doc = parseSpecText(text, file);
  const spec = validateSpec(doc, file);
  const scripts: Record<string, string> = {};
  const problems: SpecProblem[] = [];
  const specDir = dirname(resolve(file));
  spec.workloads.forEach((w, i) => {
    if (w.script === undefined) return;
    const refused = scriptPathProblem(w.script);
    if (refused !== undefined) {
      problems.push({ path: `workloads[${i}].script`, message: refused });
      return;
    }
    const found = resolveScriptPath(w.script, specDir, builtinWorkloadsDir);
    if (found === undefined) {
      problems.push({
        path: `workloads[${i}].script`,
        message:
          `Lua file "${w.script}" not found next to the spec or in client/workloads (a link out of the ` +
          `spec's folder is not followed)`,
      });
      return;
    }
    try {
      scripts[basename(found)] = readUserText(found, MAX_SCRIPT_BYTES);
    } catch (e) {
      if (!(e instanceof UserFileError)) throw e;
      problems.push({ path: `workloads[${i}].script`, message: `${found}: ${e.reason}` });
    }
  });
  if (problems.length > 0) throw new SpecError(file, problems);
  return { spec, source: file, scripts };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const SPEC_SCHEMA_ID = 'https://github.com/aurora-bench/aurora-bench/experiments/schema.json';

/** Whether a file is the published experiment JSON Schema, by its $id. */
export function isSpecSchemaFile(file: string): boolean {
  try {
    return (JSON.parse(readUserText(file, MAX_SPEC_BYTES)) as { $id?: unknown }).$id === SPEC_SCHEMA_ID;
  } catch {
    return false;
  }
}

/** The JSON Schema published as experiments/schema.json for editors. */
export function specJsonSchema(): object {
  const schema = z.toJSONSchema(SpecSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: SPEC_SCHEMA_ID,
    title: 'aurora-bench experiment',
  };
}
