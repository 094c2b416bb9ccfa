/**
 * A server's datadir copied from its template with GNU cp, since Node's fs.cp copies every byte in JavaScript.
 * Most of the bytes are zeros in MariaDB's redo log, which `--sparse=always` writes as holes.
 * So the copy writes about 7 MB instead of 114. See cp(1), "--sparse=WHEN".
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

/** Bytes the files under `dir` take on disk. A sparse copy takes as much. */
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
 * One line for a failed copy. On a full disk, cp prints a line per file it could not write.
 * The run row keeps the error, so it says what the copy needs and what is free.
 */
function copyFailure(source: string, target: string, stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  if (lines.some((l) => l.includes('No space left on device'))) {
    let room = '';
    try {
      const fs = statfsSync(dirname(target));
      room = `: ${mb(allocatedBytes(source))} needed, ${mb(fs.bavail * fs.bsize)} free`;
    } catch {
      // The sizes are a courtesy. The line stands without them.
    }
    return `no space left on device copying the server template to ${target}${room}`;
  }
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more line(s) of cp's)` : '';
  return `cannot copy ${source} to ${target}: ${lines[0] ?? 'cp failed'}${more}`;
}

/** Copies the folder `source` to `target`, which must not exist yet. */
export async function copyDatadir(source: string, target: string): Promise<void> {
  if (existsSync(target)) throw new Error(`cannot copy ${source} to ${target}: ${target} already exists`);
  try {
    await execFileAsync('cp', ['-R', '--preserve=mode', '--sparse=always', '--no-target-directory', source, target]);
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr ?? '';
    // What cp wrote before it failed is no datadir. Removing it frees the space.
    await rm(target, { recursive: true, force: true });
    throw new DatadirCopyError(copyFailure(source, target, stderr || (e as Error).message.split('\n')[0]!));
  }
}
