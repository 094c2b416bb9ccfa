/**
 * The marker that proves aurora-bench made a directory of the run root. `cleanup` checks it before it removes anything.
 * The run root is any folder the user names, which may also hold the lake or the user's own folders.
 * So a directory's age or the absence of a registry proves nothing.
 */
import { constants } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { currentUid } from './processes';

const MARKER_FILE = '.aurora-bench-run';
const MADE_BY = 'aurora-bench';
/** A marker is a line of JSON. Anything larger is not one. */
const MAX_MARKER_BYTES = 4096;

/**
 * Makes `dir` with mode 0700 and writes its marker. With `exclusive`, an existing directory fails with EEXIST.
 * That is a run's claim. Otherwise an existing directory is left as it is, and false is returned.
 */
export async function makeRunDir(dir: string, runId: string, options: { exclusive: boolean }): Promise<boolean> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' && !options.exclusive) return false;
    throw e;
  }
  const marker = { madeBy: MADE_BY, runId, createdAt: new Date().toISOString() };
  await writeFile(join(dir, MARKER_FILE), JSON.stringify(marker) + '\n', { mode: 0o600, flag: 'wx' });
  return true;
}

/**
 * Whether `dir` carries a marker cleanup can trust. It must be a small regular file of this user that says so.
 * It is opened with O_NOFOLLOW, so a symbolic link does not count.
 */
export async function isMarkedRunDir(dir: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(join(dir, MARKER_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false; // None, a link, or unreadable.
  }
  try {
    const info = await handle.stat();
    const uid = currentUid();
    if (!info.isFile() || (uid !== undefined && info.uid !== uid) || info.size > MAX_MARKER_BYTES) return false;
    const marker = JSON.parse(await handle.readFile('utf8')) as { madeBy?: unknown };
    return marker.madeBy === MADE_BY;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
