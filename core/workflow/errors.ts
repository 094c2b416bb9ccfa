/**
 * Errors the workflow's Tasks throw. The state machine's Catch matches them by `name`.
 * They fail the cell or run with their name and message. The retried ones are in core/backend.ts.
 * test/unit/asl-error-names.test.ts keeps the ASL's names and these classes in step.
 */
import { AuroraBenchError } from '../errors';

/** The execution input is not a valid experiment, so nothing is created. */
export class InvalidSpecError extends AuroraBenchError {
  override readonly name = 'InvalidSpecError';
}

/** A Task event lacks a field. That is a bug in the ASL or a hand-started execution. */
export class InvalidTaskInputError extends AuroraBenchError {
  override readonly name = 'InvalidTaskInputError';
}

/** The cluster or the clients did not become ready in time. */
export class NotReadyInTimeError extends AuroraBenchError {
  override readonly name = 'NotReadyInTimeError';
}

/**
 * A parameter value the experiment asked for is not what the server runs with.
 * Measuring would describe another configuration.
 */
export class ConfigurationNotInEffectError extends AuroraBenchError {
  override readonly name = 'ConfigurationNotInEffectError';
}

/** sysbench prepare failed, so the cell has no data to run on. */
export class DataPrepareFailedError extends AuroraBenchError {
  override readonly name = 'DataPrepareFailedError';
}
