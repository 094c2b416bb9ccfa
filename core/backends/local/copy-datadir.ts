/**
 * A server's datadir copied from its template: GNU cp (coreutils), not Node's fs.cp.
 * - fs.cp walks the tree in JavaScript (an lstat, a stat, an open and a chmod per file, each a round
 *   trip through libuv's thread pool) and copies every byte: about 0.27 s of CPU per MariaDB
 *   template (209 files, 114 MB), paid by every server start.
 * - Most of those bytes are zeros: MariaDB's redo log (ib_logfile0) is created at
 *   innodb_log_file_size (96 MiB by default in 10.11) and holds a few kilobytes of records.
 *   `--sparse=always` writes runs of zeros as holes (cp(1): "--sparse=WHEN control creation of sparse
 *   files"), so the copy writes about 7 MB instead of 114, and the server reads its zeros back
 *   unchanged.
 * `cp -R --preserve=mode` keeps each file's mode as fs.cp does; `--no-target-directory` copies the
 * folder to `target` itself, never into it.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, statfsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { AuroraBenchError } from '../../errors';

const execFileAsync = promisify(execFile);

class DatadirCopyError extends AuroraBenchError {
  override readonly name = 'DatadirCopyError';
}

/** Bytes the files under `dir` take on disk (their allocated blocks: a sparse copy takes as much). */
function allocatedBytes(dir: string): number {
  let sum = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    sum += entry.isDirectory() ? allocatedBytes(path) : lstatSync(path).blocks * 512;
  }
  return sum;
}

const mb = (bytes: number) => `${Math.ceil(bytes / 1e6)} MB`;

/**
 * One line for a failed copy: cp prints a line per file it could not write, thousands when the
 * disk is full, and the run row keeps the error. A full disk says what the copy needs and what is free.
 */
function copyFailure(source: string, target: string, stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  if (lines.some((l) => l.includes('No space left on device'))) {
    let room = '';
    try {
      const fs = statfsSync(dirname(target));
      room = `: ${mb(allocatedBytes(source))} needed, ${mb(fs.bavail * fs.bsize)} free`;
    } catch {
      // the sizes are a courtesy; the line stands without them
    }
    return `no space left on device copying the server template to ${target}${room}`;
  }
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more line(s) of cp's)` : '';
  return `cannot copy ${source} to ${target}: ${lines[0] ?? 'cp failed'}${more}`;
}

/** Copies the folder `source` to `target`, which must not exist yet (as fs.cp with errorOnExist). */
export async function copyDatadir(source: string, target: string): Promise<void> {
  if (existsSync(target)) throw new Error(`cannot copy ${source} to ${target}: ${target} already exists`);
  try {
    await execFileAsync('cp', ['-R', '--preserve=mode', '--sparse=always', '--no-target-directory', source, target]);
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? '';
    // What cp wrote before it failed is no datadir: removed, so nothing half-copied takes the space.
    await rm(target, { recursive: true, force: true });
    throw new DatadirCopyError(copyFailure(source, target, stderr || (e as Error).message.split('\n')[0]!));
  }
}
