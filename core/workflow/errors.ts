/**
 * Errors the workflow's Tasks throw. A Lambda reports a thrown error under its `name` (errorType),
 * which is what the state machine's Retry/Catch match: these are caught by the Catch (States.ALL)
 * and fail the cell or run with their name and message; the retried ones (TransientBackendError,
 * ResourceStillInUseError) are in core/backend.ts. test/unit/asl-error-names.test.ts keeps the ASL's
 * names and these classes in step.
 */
import { AuroraBenchError } from '../errors';

/** The execution input is not a valid experiment (nothing is created). */
export class InvalidSpecError extends AuroraBenchError {
  override readonly name = 'InvalidSpecError';
}

/** A Task was called with an event missing a field: a bug in the ASL or a hand-started execution. */
export class InvalidTaskInputError extends AuroraBenchError {
  override readonly name = 'InvalidTaskInputError';
}

/** The cluster or the clients did not become ready in time. */
export class NotReadyInTimeError extends AuroraBenchError {
  override readonly name = 'NotReadyInTimeError';
}

/**
 * A parameter value the experiment asked for is not what the server runs with (read at prepare,
 * core/workflow/effective-config.ts): measuring would describe another configuration.
 */
export class ConfigurationNotInEffectError extends AuroraBenchError {
  override readonly name = 'ConfigurationNotInEffectError';
}

/** sysbench prepare failed: the cell has no data to run on. */
export class DataPrepareFailedError extends AuroraBenchError {
  override readonly name = 'DataPrepareFailedError';
}
