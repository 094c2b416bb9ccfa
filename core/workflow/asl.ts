/**
 * The one loader of state-machines/benchmark.asl.json.
 * The stack and the local runner both substitute its function placeholders by the same rules.
 * Loading fails with a clear message when the file is unusable or a placeholder and a function do not pair up.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AuroraBenchError } from '../errors';
import { placeholderFor, TASK_NAMES, type TaskName } from './task-names';

/**
 * The state machine definition cannot be used as it is. The message names the file and what to fix.
 * @internal exported for its tests (a test seam)
 */
export class AslDefinitionError extends AuroraBenchError {
  override readonly name = 'AslDefinitionError';
}

/**
 * A Standard workflow runs at most 1 year, so a longer TimeoutSeconds could never fire.
 * See Step Functions Developer Guide, "Quotas related to state machine executions".
 * @internal exported for its tests (a test seam)
 */
export const MAX_STANDARD_EXECUTION_SECONDS = 365 * 24 * 3600;

/**
 * The definition's top-level TimeoutSeconds. See Developer Guide, "State Machine Structure".
 * It is required here because CDK applies its `timeout` prop only to chained states, never to text.
 * See aws-cdk-lib aws-stepfunctions/lib/state-machine.js.
 * Without it no execution would ever end TIMED_OUT.
 */
export function executionTimeoutSeconds(definition: string, source: string): number {
  const timeout = (JSON.parse(definition) as { TimeoutSeconds?: unknown }).TimeoutSeconds;
  if (timeout === undefined) {
    throw new AslDefinitionError(
      `${source}: no top-level TimeoutSeconds: an execution could run (and keep its resources) for up to a ` +
        `year; set it to the longest a run may take`,
    );
  }
  if (
    typeof timeout !== 'number' ||
    !Number.isInteger(timeout) ||
    timeout < 1 ||
    timeout > MAX_STANDARD_EXECUTION_SECONDS
  ) {
    throw new AslDefinitionError(
      `${source}: TimeoutSeconds must be a whole number of seconds from 1 to ${MAX_STANDARD_EXECUTION_SECONDS} ` +
        `(a Standard workflow runs at most a year), got ${JSON.stringify(timeout)}`,
    );
  }
  return timeout;
}

/** `${Name}` where Name is an identifier, as CloudFormation-style placeholders look. */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function readAslFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AslDefinitionError(`cannot read the state machine definition ${file}`, { cause: e, source: file });
  }
  try {
    JSON.parse(text);
  } catch (e) {
    throw new AslDefinitionError(`state machine definition ${file} is not valid JSON`, { cause: e, source: file });
  }
  return text;
}

/** The distinct placeholders of a definition, in order of first appearance. */
function placeholdersIn(definition: string): string[] {
  return [...new Set([...definition.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/**
 * Replace every placeholder with its value. Values may be CDK tokens, which CloudFormation resolves.
 * Every placeholder must have a value and every value a placeholder.
 */
export function substitutePlaceholders(
  definition: string,
  values: Readonly<Record<string, string>>,
  source: string,
): string {
  const found = placeholdersIn(definition);
  const unknown = found.filter((p) => !(p in values));
  if (unknown.length > 0) {
    throw new AslDefinitionError(
      `${source}: placeholder(s) ${unknown.map((p) => '${' + p + '}').join(', ')} would be left unsubstituted: ` +
        `no function or value provides them`,
    );
  }
  const unused = Object.keys(values).filter((k) => !found.includes(k));
  if (unused.length > 0) {
    throw new AslDefinitionError(
      `${source}: no placeholder for ${unused.map((p) => '${' + p + '}').join(', ')}: every Task function must ` +
        `be referenced by the definition`,
    );
  }
  // Escape first, since a CDK token's string form itself contains `${Token[...]}`.
  return escapeLiteralDollarBraces(definition).replace(PLACEHOLDER, (_m, name: string) => values[name]!);
}

/**
 * A `${` that is not a placeholder is text, such as a Comment.
 * CloudFormation linters read it as a parameter outside Fn::Sub (cfn-lint E1029).
 * So the `$` is written as the JSON escape \u0024, which parses to the same string.
 * `$` only occurs inside JSON strings, so the escape is always valid.
 * @internal exported for its tests (a test seam)
 */
export function escapeLiteralDollarBraces(definition: string): string {
  return definition.replace(/\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/g, '\\u0024{');
}

/** The placeholder -> value map for the Task functions. */
export function taskPlaceholderValues(arnOf: (task: TaskName) => string): Record<string, string> {
  return Object.fromEntries(TASK_NAMES.map((t) => [placeholderFor(t), arnOf(t)]));
}

let benchmarkAsl: string | undefined;

/** Found from core/workflow or dist/core/workflow. */
function benchmarkAslPath(): string {
  if (benchmarkAsl !== undefined) return benchmarkAsl;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'state-machines', 'benchmark.asl.json');
    if (existsSync(candidate)) return (benchmarkAsl = candidate);
    if (dirname(dir) === dir)
      throw new AslDefinitionError(`cannot find state-machines/benchmark.asl.json above ${__dirname}`);
  }
}

/** The definition with every Task placeholder replaced by arnFor(task), parsed. */
export function loadDefinition(arnFor: (task: TaskName) => string): Record<string, unknown> {
  const file = benchmarkAslPath();
  return JSON.parse(substitutePlaceholders(readAslFile(file), taskPlaceholderValues(arnFor), file)) as Record<
    string,
    unknown
  >;
}

export interface AslState {
  readonly Type: string;
  readonly Resource?: string;
  readonly Retry?: unknown[];
  readonly Catch?: unknown[];
  readonly Comment?: string;
  readonly ItemProcessor?: { readonly States: Record<string, AslState> };
  readonly Iterator?: { readonly States: Record<string, AslState> };
  readonly Branches?: readonly { readonly States: Record<string, AslState> }[];
}

/**
 * Every state of the definition by name, nested Map and Parallel states included.
 * Names are unique because overrides and progress lines are keyed by them.
 */
export function allStates(definition: Record<string, unknown>): Map<string, AslState> {
  const found = new Map<string, AslState>();
  const walk = (states: Record<string, AslState>) => {
    for (const [name, st] of Object.entries(states)) {
      if (found.has(name))
        throw new AslDefinitionError(`state name "${name}" is used twice: local overrides are keyed by state name`);
      found.set(name, st);
      if (st.ItemProcessor) walk(st.ItemProcessor.States);
      if (st.Iterator) walk(st.Iterator.States);
      for (const b of st.Branches ?? []) walk(b.States);
    }
  };
  walk(definition['States'] as Record<string, AslState>);
  return found;
}
