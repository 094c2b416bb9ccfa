/**
 * Server processes a test left behind: the `program` processes (mariadbd, postgres) whose command
 * line names a path under `dir` (a run root or cell directory of that test), one line each; and
 * whether a port of theirs still accepts connections.
 */
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';

export function serverProcessesUnder(program: 'mariadbd' | 'postgres', dir: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', program], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dir));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** TCP connect to 127.0.0.1:port: true when something accepts. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
