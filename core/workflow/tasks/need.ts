import { InvalidTaskInputError } from '../errors';

/** A Task's check that every named field of its event is present. */
export function need<T extends object>(event: T, fields: readonly (keyof T & string)[], task: string): void {
  const received: unknown = event; // The state machine's JSON is not guaranteed to match the type.
  if (received === null || typeof received !== 'object')
    throw new InvalidTaskInputError(`${task}: event is not an object`);
  for (const f of fields) {
    if ((event as Record<string, unknown>)[f] === undefined)
      throw new InvalidTaskInputError(`${task}: event.${f} is missing`);
  }
}
