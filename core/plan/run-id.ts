/**
 * What a run id may be. It names folders, S3 keys and the Step Functions execution.
 * An execution name takes 1-80 letters, digits, '-' and '_'. See Step Functions API Reference, StartExecution.
 * An id is checked before anything starts, so "." or ".." never names the lake's own folder mid-run.
 */
import { UsageError } from '../errors';

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/;

const RUN_ID_RULE = '1 to 80 letters, digits, "-" and "_", starting with a letter or digit';

/** Why `id` cannot be a run id, or undefined. */
function runIdProblem(id: string): string | undefined {
  if (RUN_ID.test(id)) return undefined;
  const shown = id.length > 40 ? `${JSON.stringify(id.slice(0, 40))}... (${id.length} characters)` : JSON.stringify(id);
  return `--run-id ${shown} is not a run id: a run id is ${RUN_ID_RULE}`;
}

/** A --run-id that cannot be one is refused before anything starts. */
export function checkRunId(id: string | undefined): void {
  const problem = id === undefined ? undefined : runIdProblem(id);
  if (problem !== undefined) throw new UsageError(problem);
}
