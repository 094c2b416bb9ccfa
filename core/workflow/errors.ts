/**
 * Named errors the state machine's Retry/Catch match by name (a Lambda's errorType is error.name).
 */

/** The execution input is not a valid experiment (nothing is created). */
export class InvalidSpecError extends Error {
  override readonly name = 'InvalidSpecError';
}

/** A Task was called with an event missing a field: a bug in the ASL or a hand-started execution. */
export class InvalidTaskInputError extends Error {
  override readonly name = 'InvalidTaskInputError';
}

/** The cluster or the clients did not become ready in time. */
export class NotReadyInTimeError extends Error {
  override readonly name = 'NotReadyInTimeError';
}

/** sysbench prepare failed: the cell has no data to run on. */
export class DataPrepareFailedError extends Error {
  override readonly name = 'DataPrepareFailedError';
}
