import type { TaskError } from './types';

/** The readable part of a Catch Cause. Lambda wraps it as JSON {errorType, errorMessage, trace}. */
export function causeText(error: TaskError | undefined): string | null {
  if (error === undefined) return null;
  const cause = error.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string; errorType?: string } | null;
    if (parsed && typeof parsed.errorMessage === 'string')
      return `${parsed.errorType ?? error.Error}: ${parsed.errorMessage}`;
  } catch {
    // A plain message.
  }
  return cause.startsWith(error.Error) ? cause : `${error.Error}: ${cause}`;
}
