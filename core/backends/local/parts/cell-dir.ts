import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { destroyCell, type RunRegistry } from '../registry';

/**
 * A fresh directory for a cell inside its run directory, recorded in the registry before any server starts.
 * A previous attempt this process no longer knows about is destroyed first, so a cell always starts clean.
 */
export async function openCellDir(registry: RunRegistry, cellId: string): Promise<string> {
  const previous = (await registry.read())?.cells[cellId];
  if (previous) {
    await destroyCell(previous);
    await registry.removeCell(cellId);
  }
  await registry.ensureDir();
  const dir = await mkdtemp(join(registry.dir, 'c-'));
  await registry.setCell({
    cellId,
    clusterId: cellId,
    dir,
    servers: [],
    jobs: [],
    createdAt: new Date().toISOString(),
  });
  return dir;
}

/** Starts a cell's servers. On failure, what did start is stopped and the cell leaves the registry. */
export async function startOrDestroy<T>(registry: RunRegistry, cellId: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (e) {
    const record = (await registry.read())?.cells[cellId];
    if (record) await destroyCell(record, 5_000);
    await registry.removeCell(cellId);
    throw e;
  }
}

/** The last lines of a log for an error message, or '' when it cannot be read. */
export function tail(file: string, lines = 10): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
