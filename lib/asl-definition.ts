/**
 * Reads state-machines/benchmark.asl.json at synth time and substitutes its `${<Pascal>FunctionArn}`
 * placeholders (core/workflow/task-names.ts). Synth fails with a clear message when the file is
 * missing or not JSON, when a placeholder has no function, or when a function has no placeholder.
 */
import { readFileSync } from 'node:fs';
import { placeholderFor, TASK_NAMES, type TaskName } from '../core/workflow/task-names';

export class AslDefinitionError extends Error {
  override readonly name = 'AslDefinitionError';
}

/**
 * "Maximum execution time: 1 year" for a Standard workflow (Step Functions Developer Guide, Quotas,
 * "Quotas related to state machine executions"); a longer TimeoutSeconds could never fire.
 */
export const MAX_STANDARD_EXECUTION_SECONDS = 365 * 24 * 3600;

/**
 * The definition's top-level TimeoutSeconds ("The maximum number of seconds an execution of the state
 * machine can run. If it runs longer than the specified time, the execution fails with a
 * States.Timeout Error Name": Developer Guide, "State Machine Structure"). Required here: CDK's
 * StateMachine `timeout` prop is applied only to a definition built from chained states
 * (aws-cdk-lib aws-stepfunctions/lib/state-machine.js sets graph.timeout for a ChainDefinitionBody
 * only), never to one given as text, so without it no execution would ever end TIMED_OUT.
 */
export function executionTimeoutSeconds(definition: string, source: string): number {
  const timeout = (JSON.parse(definition) as { TimeoutSeconds?: unknown }).TimeoutSeconds;
  if (timeout === undefined) {
    throw new AslDefinitionError(`${source}: no top-level TimeoutSeconds: an execution could run (and keep its resources) for up to a year; set it to the longest a run may take`);
  }
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_STANDARD_EXECUTION_SECONDS) {
    throw new AslDefinitionError(`${source}: TimeoutSeconds must be a whole number of seconds from 1 to ${MAX_STANDARD_EXECUTION_SECONDS} (a Standard workflow runs at most a year), got ${JSON.stringify(timeout)}`);
  }
  return timeout;
}

/** `${Name}` where Name is an identifier: what CloudFormation-style placeholders look like. */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function readAslFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AslDefinitionError(`state machine definition ${file}: ${(e as Error).message}`);
  }
  try {
    JSON.parse(text);
  } catch (e) {
    throw new AslDefinitionError(`state machine definition ${file} is not valid JSON: ${(e as Error).message}`);
  }
  return text;
}

/** The distinct placeholders of a definition, in order of first appearance. */
export function placeholdersIn(definition: string): string[] {
  return [...new Set([...definition.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/**
 * Replace every placeholder with its value (the values may be CDK tokens, which CloudFormation
 * resolves through Fn::Join). Every placeholder must have a value and every value a placeholder.
 */
export function substitutePlaceholders(definition: string, values: Readonly<Record<string, string>>, source: string): string {
  const found = placeholdersIn(definition);
  const unknown = found.filter((p) => !(p in values));
  if (unknown.length > 0) {
    throw new AslDefinitionError(`${source}: placeholder(s) ${unknown.map((p) => '${' + p + '}').join(', ')} would be left unsubstituted: no function or value provides them`);
  }
  const unused = Object.keys(values).filter((k) => !found.includes(k));
  if (unused.length > 0) {
    throw new AslDefinitionError(`${source}: no placeholder for ${unused.map((p) => '${' + p + '}').join(', ')}: every Task function must be referenced by the definition`);
  }
  // Escape first: the values may be CDK tokens, whose string form itself contains `${Token[...]}`.
  return escapeLiteralDollarBraces(definition).replace(PLACEHOLDER, (_m, name: string) => values[name]!);
}

/**
 * A `${` that is not a placeholder is text (e.g. a Comment mentioning "${...FunctionArn}"). CloudFormation
 * linters read it as a parameter outside Fn::Sub (cfn-lint E1029), so write the `$` as the JSON
 * escape \u0024: the state machine parses exactly the same string. `$` only occurs inside JSON
 * strings, so the escape is always valid there.
 */
export function escapeLiteralDollarBraces(definition: string): string {
  return definition.replace(/\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/g, '\\u0024{');
}

/** The placeholder -> value map for the Task functions. */
export function taskPlaceholderValues(arnOf: (task: TaskName) => string): Record<string, string> {
  return Object.fromEntries(TASK_NAMES.map((t) => [placeholderFor(t), arnOf(t)]));
}
