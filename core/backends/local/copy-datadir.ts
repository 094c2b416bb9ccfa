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
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Copies the folder `source` to `target`, which must not exist yet (as fs.cp with errorOnExist). */
export async function copyDatadir(source: string, target: string): Promise<void> {
  if (existsSync(target)) throw new Error(`cannot copy ${source} to ${target}: ${target} already exists`);
  try {
    await execFileAsync('cp', ['-R', '--preserve=mode', '--sparse=always', '--no-target-directory', source, target]);
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr?.trim();
    throw new Error(`cannot copy ${source} to ${target}: ${stderr || (e as Error).message}`, { cause: e });
  }
}
