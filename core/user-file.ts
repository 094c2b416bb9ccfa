/**
 * The one way to read a file the user names, only a regular file and only up to a stated bound.
 * A special file could be read without end, a FIFO would block forever, and a directory fails with bare EISDIR.
 * The checks run on the open descriptor, so what is checked is what is read.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AuroraBenchError } from './errors';

/** A user-named file that cannot be read. `reason` omits the file's name, for callers that add a path. */
export class UserFileError extends AuroraBenchError {
  override readonly name = 'UserFileError';
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly kind: 'missing' | 'special' | 'too-large' | 'unreadable',
    /** The size found, for 'too-large'. */
    readonly size?: number,
  ) {
    super(`${file}: ${reason}`, { source: file });
  }
}

export const MIB = 1024 * 1024;

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

const sizeText = (bytes: number) => (bytes >= MIB ? `${bytes / MIB} MiB` : `${bytes} bytes`);

/** The bytes of `file`, a regular file of at most `maxBytes`. Otherwise a UserFileError says why. */
export function readUserFile(file: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    // Opening a FIFO for reading blocks until a writer comes, so open without blocking. The check below refuses it.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserFileError(
      file,
      code === 'ENOENT' ? 'file not found' : `cannot read it (${code ?? String(e)})`,
      code === 'ENOENT' ? 'missing' : 'unreadable',
    );
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new UserFileError(file, `is ${kindOf(info)}, not a regular file`, 'special');
    if (info.size > maxBytes) {
      throw new UserFileError(
        file,
        `is ${info.size} bytes; at most ${sizeText(maxBytes)} is read`,
        'too-large',
        info.size,
      );
    }
    // Read at most one byte past the bound, so a file that grows while read is refused.
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, info.size + 1));
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes)
        throw new UserFileError(file, `grew past ${sizeText(maxBytes)} while read`, 'too-large', length);
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length);
  } catch (e) {
    if (e instanceof UserFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserFileError(file, `cannot read it (${code ?? String(e)})`, 'unreadable');
  } finally {
    closeSync(fd);
  }
}

/** readUserFile as UTF-8 text. */
export function readUserText(file: string, maxBytes: number): string {
  return readUserFile(file, maxBytes).toString('utf8');
}

const WRITE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'its folder is not a directory',
  ENOSPC: 'no space left on device',
  EDQUOT: 'over the disk quota',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
};

/**
 * Writes a file the user named through a temporary file beside it, renamed over it.
 * A full disk leaves no half file, and a planted link is replaced, not followed.
 * A failure is one UserFileError line saying why, never a stack.
 */
export function writeUserFile(file: string, data: string): void {
  let info: Stats | undefined;
  try {
    info = statSync(file);
  } catch {
    info = undefined;
  }
  if (info !== undefined && !info.isFile())
    throw new UserFileError(file, `is ${kindOf(info)}: give a file name`, 'special');
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, data, { flag: 'wx' });
    renameSync(temporary, file);
  } catch (e) {
    rmSync(temporary, { force: true });
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new UserFileError(
      file,
      `cannot write it: ${WRITE_ERRORS[code] ?? code} (${code || String(e)})`,
      'unreadable',
    );
  }
}
