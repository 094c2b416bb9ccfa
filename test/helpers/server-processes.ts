/**
 * Server processes a test left behind: the `program` processes (mariadbd, postgres) whose command
 * line names a path under `dir` (a run root or cell directory of that test), one line each.
 */
import { execFileSync } from 'node:child_process';

export function serverProcessesUnder(program: 'mariadbd' | 'postgres', dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', program], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dir));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
