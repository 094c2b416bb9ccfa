/**
 * The error model.
 * An `AuroraBenchError` is one the user can act on, so it prints without a stack.
 * Its message says what is wrong and how to fix it.
 * Anything else reaching the CLI is a defect and prints with its stack.
 * `name` is what the state machine's Retry and Catch match, so every subclass sets and keeps its own.
 */

export interface AuroraBenchErrorOptions {
  readonly cause?: unknown;
  /** The file or execution input the error is about. */
  readonly source?: string;
  /** Where in that file, as a JSON path. */
  readonly jsonPath?: string;
}

/** Marks user-facing errors also across copies of this module, such as a bundled Lambda. */
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

/** A command line that cannot work as given. */
export class UsageError extends AuroraBenchError {
  override readonly name = 'UsageError';
}

/** @internal Exported for its tests. */
export function isUserFacingError(error: unknown): error is AuroraBenchError {
  return (
    error instanceof AuroraBenchError ||
    (error instanceof Error && (error as unknown as Record<symbol, unknown>)[USER_FACING] === true)
  );
}

/** How deep a cause chain is followed. A cycle must not hang the printer. */
const MAX_CAUSES = 10;

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause));

function causeLine(cause: unknown): string {
  if (isUserFacingError(cause)) return cause.message;
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}

/**
 * The text for any error, followed by its cause chain with one "caused by:" line each.
 * A user-facing error shows its message. An unexpected one shows its stack, which is what fixing it needs.
 * A Lambda keeps only name and message, so a wrapper may already carry its cause's message.
 * Such a cause gets no line repeating it.
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
