/**
 * The error model. An `AuroraBenchError` is one the user can act on: its message says what is wrong
 * and how to fix it (naming the file and JSON path, or the account setting), so it is printed
 * without a stack. Anything else reaching the CLI is a defect and is printed with its stack.
 *
 * `name` is what the state machine's Retry/Catch match (a Lambda's errorType is error.name) and
 * what scripts and tests see, so every subclass sets its own and keeps it (see
 * core/workflow/errors.ts for the names the ASL matches). `cause` is the lower-level error this one
 * explains (ES2022 Error cause); `source` the file or input it is about; `jsonPath` where in it.
 */

export interface AuroraBenchErrorOptions {
  readonly cause?: unknown;
  /** The file (or execution input) the error is about. */
  readonly source?: string;
  /** Where in that file, as a JSON path (`variants[0].parameters`). */
  readonly jsonPath?: string;
}

/** Marks user-facing errors also across copies of this module (a bundled Lambda, a second require). */
const USER_FACING = Symbol.for('aurora-bench.user-facing-error');

export class AuroraBenchError extends Error {
  override readonly name: string = 'AuroraBenchError';
  readonly source?: string;
  readonly jsonPath?: string;

  constructor(message: string, options: AuroraBenchErrorOptions = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    if (options.source !== undefined) this.source = options.source;
    if (options.jsonPath !== undefined) this.jsonPath = options.jsonPath;
    Object.defineProperty(this, USER_FACING, { value: true });
  }
}

/** A command line that cannot work as given (conflicting or missing options). */
export class UsageError extends AuroraBenchError {
  override readonly name = 'UsageError';
}

/** @internal exported for its tests (a test seam) */
export function isUserFacingError(error: unknown): error is AuroraBenchError {
  return (
    error instanceof AuroraBenchError ||
    (error instanceof Error && (error as unknown as Record<symbol, unknown>)[USER_FACING] === true)
  );
}

/** How deep a cause chain is followed (a cycle must not hang the printer). */
const MAX_CAUSES = 10;

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause));

function causeLine(cause: unknown): string {
  if (isUserFacingError(cause)) return cause.message;
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}

/**
 * The text for any error: a user-facing one as its message and then its cause chain, one
 * "caused by:" line each, no stack; an unexpected one as its stack (what is needed to fix it) and
 * then its cause chain. Each text is printed once: a wrapper that carries its cause's message in its
 * own (an error crossing a Lambda keeps only name and message) gets no line repeating it.
 */
export function formatError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = [isUserFacingError(error) ? error.message : (error.stack ?? String(error))];
  let cause: unknown = error.cause;
  for (let depth = 0; cause !== undefined && depth < MAX_CAUSES; depth++) {
    const message = messageOf(cause);
    if (message === '' || !lines.some((line) => line.includes(message))) lines.push(`  caused by: ${causeLine(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return lines.join('\n');
}
