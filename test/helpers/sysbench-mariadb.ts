/**
 * A throwaway mariadbd for the sysbench runner tests: own datadir under a fresh temp dir, a free
 * port on 127.0.0.1, --user=root, and the sbtest user at '%', localhost and 127.0.0.1.
 * Always call stop() (afterAll): it kills the server and deletes its files.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ThrowawayMariadb {
  readonly port: number;
  readonly socket: string;
  readonly dir: string;
  readonly process: ChildProcess;
  /** Runs SQL as root over the socket; throws with the client's stderr on failure. */
  sql(statements: string): string;
  /** kill -9, as a crash would (the files stay until stop()). */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

/** Quotes a string for a SQL literal (the server runs with default sql_mode: escape backslashes). */
export const sqlString = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

export async function startMariadb(opts: {
  user?: string;
  password: string;
  extraArgs?: string[];
}): Promise<ThrowawayMariadb> {
  const dir = mkdtempSync(join(tmpdir(), 'sysbench-mariadb-'));
  const socket = join(dir, 'mysqld.sock');
  const install = spawnSync(
    'mariadb-install-db',
    // Its own tmpdir, as the product's servers have (core/backends/local/mariadb-server.ts): the shared TMPDIR holds
    // every other test's files, and its temporary tables must not be cleaned away under it.
    [
      '--no-defaults',
      `--datadir=${join(dir, 'data')}`,
      `--tmpdir=${dir}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
    ],
    {
      encoding: 'utf8',
    },
  );
  if (install.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mariadb-install-db failed: ${install.stderr}`);
  }
  const port = await freePort();
  const child = spawn(
    'mariadbd',
    [
      '--no-defaults',
      `--datadir=${join(dir, 'data')}`,
      `--tmpdir=${dir}`,
      '--user=root',
      '--bind-address=127.0.0.1',
      `--port=${port}`,
      `--socket=${socket}`,
      `--pid-file=${join(dir, 'mysqld.pid')}`,
      `--log-error=${join(dir, 'error.log')}`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=16M',
      ...(opts.extraArgs ?? []),
    ],
    { stdio: 'ignore' },
  );
  // Statements go in on stdin, not with -e: they can carry a password (CREATE USER ... IDENTIFIED BY),
  // and a command line is readable by every process on the machine (/proc/<pid>/cmdline).
  const sql = (statements: string): string => {
    const r = spawnSync('mariadb', ['--no-defaults', '-uroot', '-S', socket, '-N', '--batch'], {
      input: statements,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`mariadb: ${r.stderr}`);
    return r.stdout;
  };
  // A function, not an expression: the compiler would take the second look (after the wait) as the first's answer.
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (running()) {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited(child), new Promise((r) => (timer = setTimeout(r, 20000)))]);
      clearTimeout(timer);
      if (running()) child.kill('SIGKILL');
      await exited(child);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const crash = async () => {
    child.kill('SIGKILL');
    await exited(child);
  };
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null)
        throw new Error(`mariadbd exited with ${child.exitCode} (see ${join(dir, 'error.log')})`);
      const ping = spawnSync('mariadb', ['--no-defaults', '-uroot', '-S', socket, '-e', 'SELECT 1'], {
        encoding: 'utf8',
      });
      if (ping.status === 0) break;
      if (i > 240) throw new Error('mariadbd did not accept connections within 60 s');
      await sleep(250);
    }
    const user = opts.user ?? 'sbtest';
    const pw = sqlString(opts.password);
    sql(
      ['%', 'localhost', '127.0.0.1']
        .map((h) => `CREATE USER '${user}'@'${h}' IDENTIFIED BY ${pw}; GRANT ALL ON *.* TO '${user}'@'${h}';`)
        .join(' ') + ' CREATE DATABASE sbtest;',
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { port, socket, dir, process: child, sql, crash, stop };
}
