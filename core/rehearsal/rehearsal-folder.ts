/**
 * Where a rehearsal keeps its files.
 * Run as root, it starts processes as nobody and postgres, who must enter every folder down to their own.
 * A private TMPDIR lets nobody through, and opening it would undo the user's choice.
 * So the folder then goes under /tmp, which is sticky.
 * Either way mkdtemp makes it fresh, then it gets 0711 so others pass through and list nothing.
 */
import { statSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AuroraBenchError } from '../errors';

class RehearsalFolderError extends AuroraBenchError {
  override readonly name = 'RehearsalFolderError';
}

/** The first folder from `dir` up to / without o+x, or undefined when all let others in. */
function closedFolderAbove(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const mode = statSync(d, { throwIfNoEntry: false })?.mode;
    if (mode === undefined || (mode & 0o001) === 0) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** Makes the rehearsal's folder under TMPDIR, or under /tmp when run as root and TMPDIR is closed. */
export async function makeRehearsalFolder(): Promise<string> {
  const base = tmpdir();
  const asRoot = process.getuid?.() === 0;
  const closed = asRoot ? closedFolderAbove(base) : undefined;
  const parent = closed === undefined ? base : '/tmp';
  if (closed !== undefined) {
    const tmpClosed = closedFolderAbove(parent);
    if (tmpClosed !== undefined)
      throw new RehearsalFolderError(
        `the AWS rehearsal runs its Lambda functions as nobody and needs a folder everyone may enter: neither ` +
          `TMPDIR (${closed} is closed to others) nor /tmp (${tmpClosed} is) is one; set TMPDIR to such a folder`,
      );
  }
  const dir = await mkdtemp(join(parent, 'abr-'));
  await chmod(dir, 0o711);
  return dir;
}
