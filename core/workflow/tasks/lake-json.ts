import type { TaskDeps } from './types';

/** A JSON object from the lake; undefined when it is absent or empty. */
export async function readJson<T>(deps: TaskDeps, key: string): Promise<T | undefined> {
  const text = await deps.backend.lake.get(key);
  return text === undefined || text.trim() === '' ? undefined : (JSON.parse(text) as T);
}
