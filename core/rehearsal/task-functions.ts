/** The template's functions as the rehearsal runs them, one per Task, with the deployed stack's environment. */
import { TASK_NAMES, type TaskName } from '../workflow/task-names';
import type { RehearsedFunction } from './rehearsal-options';

/** The function of each Task in the synthesized template. A Task without one fails here. */
export function taskFunctions(functions: readonly RehearsedFunction[]): Map<TaskName, RehearsedFunction> {
  const byTask = new Map<TaskName, RehearsedFunction>();
  for (const f of functions) if (f.task !== undefined) byTask.set(f.task, f);
  const missing = TASK_NAMES.filter((t) => !byTask.has(t));
  if (missing.length > 0)
    throw new Error(`the synthesized template has no function for the Task(s) ${missing.join(', ')}`);
  return byTask;
}

/**
 * A function's environment as the deployed stack gives it.
 * Each CloudFormation reference resolves to the rehearsal's resource.
 * The rehearsal's shorter timings replace the template's literal ones.
 */
export function functionEnvironment(
  fn: RehearsedFunction,
  rehearsal: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    const own = rehearsal[name];
    if (own !== undefined) env[name] = own;
    else if (typeof value === 'string') env[name] = value;
    else
      throw new Error(
        `function ${fn.logicalId}: its Environment variable ${name} is a CloudFormation reference the ` +
          `rehearsal has no value for: ` +
          JSON.stringify(value).slice(0, 200),
      );
  }
  return { ...env, ...rehearsal };
}
