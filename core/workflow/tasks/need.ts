import { InvalidTaskInputError } from '../errors';

/** A Task's check of its event: every named field is present (InvalidTaskInputError otherwise). */
export function need<T extends object>(event: T, fields: readonly (keyof T & string)[], task: string): void {
  const received: unknown = event; // the state machine's JSON: the type is what it should be, not a guarantee
  if (received === null || typeof received !== 'object')
    throw new InvalidTaskInputError(`${task}: event is not an object`);
  for (const f of fields) {
    if ((event as Record<string, unknown>)[f] === undefined)
      throw new InvalidTaskInputError(`${task}: event.${f} is missing`);
  }
}
