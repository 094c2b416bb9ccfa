/**
 * Reading and validating experiment files. Every error names the file and the JSON path, and says
 * what was expected, so nothing starts from a spec that is wrong.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { auroraParameterProblems } from '../aurora/spec-parameters';
import { SpecSchema, type Spec } from './schema';
import { AuroraBenchError } from '../errors';

export interface SpecProblem {
  /** JSON path such as variants[1].instanceClass, or "" for the whole document. */
  readonly path: string;
  readonly message: string;
}

/** Thrown for an unreadable or invalid spec; `problems` lists every one found, not just the first. */
export class SpecError extends AuroraBenchError {
  override readonly name = 'SpecError';
  constructor(
    readonly source: string,
    readonly problems: readonly SpecProblem[],
  ) {
    super(`${source}: invalid experiment spec\n` + problems.map((p) => `  - ${p.path || '(root)'}: ${p.message}`).join('\n'));
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
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

/** zod issues to problems that say what was expected and what was found. */
export function problemsFromZod(error: z.ZodError, doc: unknown): SpecProblem[] {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path);
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      message = `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    } else if (issue.code === 'invalid_value' && 'values' in issue) {
      message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(valueAt(doc, issue.path))}`;
    } else if (issue.code === 'invalid_type') {
      const found = valueAt(doc, issue.path);
      message = found === undefined ? `required (${issue.expected})` : `expected ${issue.expected}, got ${describeValue(found)}`;
    } else if (issue.code === 'invalid_format' || issue.code === 'too_small' || issue.code === 'too_big') {
      message = `${issue.message}, got ${describeValue(valueAt(doc, issue.path))}`;
    }
    return { path, message };
  });
}

/**
 * Validate an already-parsed document; `source` names it in errors. Past the schema, every Aurora
 * parameter is checked against the parameter catalogue for the spec's engine version
 * (core/aurora/parameter-catalogue.ts), so a spec RDS would refuse is refused here, before any
 * backend, local or AWS, starts anything.
 */
export function validateSpec(doc: unknown, source = 'spec'): Spec {
  const result = SpecSchema.safeParse(doc);
  if (!result.success) throw new SpecError(source, problemsFromZod(result.error, doc));
  const parameterProblems = auroraParameterProblems(result.data);
  if (parameterProblems.length > 0) throw new SpecError(source, parameterProblems);
  return result.data;
}

/** Parse JSON or YAML text (by extension; JSON when unsure), with the file named in syntax errors. */
export function parseSpecText(text: string, source: string): unknown {
  const ext = extname(source).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    try {
      return parseYaml(text);
    } catch (e) {
      throw new SpecError(source, [{ path: '', message: `not valid YAML: ${(e as Error).message}` }]);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SpecError(source, [{ path: '', message: `not valid JSON: ${(e as Error).message}` }]);
  }
}

export interface LoadedSpec {
  readonly spec: Spec;
  readonly source: string;
  /** Custom Lua workloads the spec names, by file name, with their text. */
  readonly scripts: Record<string, string>;
}

/**
 * Where a workload's `script` is looked for: relative to the spec file first, then the workloads
 * shipped with the client runner (client/workloads), so ready experiments can name those directly.
 */
export function resolveScriptPath(script: string, specDir: string, builtinDir: string): string | undefined {
  for (const candidate of [resolve(specDir, script), join(builtinDir, basename(script))]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

export function loadSpecFile(file: string, builtinWorkloadsDir: string): LoadedSpec {
  if (!existsSync(file)) throw new SpecError(file, [{ path: '', message: 'file not found' }]);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SpecError(file, [{ path: '', message: `cannot read: ${(e as Error).message}` }]);
  }
  const doc = parseSpecText(text, file);
  const spec = validateSpec(doc, file);
  const scripts: Record<string, string> = {};
  const problems: SpecProblem[] = [];
  spec.workloads.forEach((w, i) => {
    if (w.script === undefined) return;
    const found = resolveScriptPath(w.script, dirname(resolve(file)), builtinWorkloadsDir);
    if (found === undefined) {
      problems.push({ path: `workloads[${i}].script`, message: `Lua file "${w.script}" not found next to the spec or in client/workloads` });
      return;
    }
    scripts[basename(found)] = readFileSync(found, 'utf8');
  });
  if (problems.length > 0) throw new SpecError(file, problems);
  return { spec, source: file, scripts };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with keys sorted, so equal specs hash equal whatever order they were written in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export const SPEC_SCHEMA_ID = 'https://github.com/aurora-bench/aurora-bench/experiments/schema.json';

/** Whether a file is the published experiment JSON Schema (by its $id), not an experiment. */
export function isSpecSchemaFile(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { $id?: unknown }).$id === SPEC_SCHEMA_ID;
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
