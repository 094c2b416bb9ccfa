/**
 * One mariadbd on 127.0.0.1, with everything of its own under one directory. It never reads /etc/mysql.
 * Ready means a MariaDB handshake arrived on the server's own unix socket, so it cannot be another server answering.
 * Another process may take the TCP port before mariadbd binds it, and then the start is retried on a new port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { copyDatadir } from './copy-datadir';
import type { LocalTools } from './preflight';
import { findFreePort, isOurProcess, terminate } from './processes';
import { query, type Row, type SqlTarget } from './sql-client';
import { AuroraBenchError } from '../../errors';
import { optionFileLines, optionFileValue } from '../../aurora/server-config';

/** Everything needed to find, query and stop a server again, also from another process, as plain JSON. */
export interface ServerInfo {
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly serverId: number;
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly pid: number;
  readonly dir: string;
  readonly datadir: string;
  readonly socket: string;
  readonly defaultsFile: string;
  readonly clientDefaultsFile: string;
  readonly errorLog: string;
  /** The taskset CPU list it is pinned to, when pinned. */
  readonly cpuList?: string;
  /** The client binary for SQL: mariadb, or psql for a PostgreSQL server. */
  readonly client: string;
  /** Set for a PostgreSQL server recorded in the same shape. Absent for mariadbd. */
  readonly engine?: 'postgresql';
}

export interface LocalServer {
  readonly info: ServerInfo;
  /** Present when this process started it. */
  readonly child?: ChildProcess;
}

/** @internal exported for its tests */
export class ServerStartError extends AuroraBenchError {
  override readonly name = 'ServerStartError';
}

export type ServerOptions = Readonly<Record<string, string | number | boolean | null>>;

export interface LaunchOptions {
  readonly tools: LocalTools;
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly serverId: number;
  /** The server's own directory, created if missing. The datadir must be in place. */
  readonly dir: string;
  /** Server options on top of the base set. Null is a flag without value. */
  readonly options?: ServerOptions;
  readonly cpuList?: string;
  /** Admin login for client.cnf. */
  readonly admin: { readonly user: string; readonly password: string };
  /** No TCP at all, as the template build wants. */
  readonly skipNetworking?: boolean;
  readonly readyTimeoutMs?: number;
  readonly portAttempts?: number;
  /** Where ports come from. By default the kernel gives one, via a listen on port 0. */
  readonly findPort?: () => Promise<number>;
}

/** `sun_path` is 108 bytes including the NUL. */
const MAX_SOCKET_PATH = 107;

function serverPaths(dir: string) {
  return {
    datadir: join(dir, 'data'),
    socket: join(dir, 's.sock'),
    pidFile: join(dir, 'mariadbd.pid'),
    errorLog: join(dir, 'error.log'),
    defaultsFile: join(dir, 'my.cnf'),
    clientDefaultsFile: join(dir, 'client.cnf'),
    tmpdir: join(dir, 'tmp'),
  };
}

export async function writeClientDefaults(
  file: string,
  socket: string,
  admin: { user: string; password: string },
): Promise<void> {
  await writeFile(
    file,
    `[client]\nuser=${optionFileValue(admin.user)}\npassword=` +
      optionFileValue(admin.password) +
      `\nsocket=${optionFileValue(socket)}\nprotocol=socket\n`,
    {
      mode: 0o600,
    },
  );
}

function baseOptions(o: LaunchOptions, port: number): ServerOptions {
  const p = serverPaths(o.dir);
  return {
    datadir: p.datadir,
    socket: p.socket,
    'pid-file': p.pidFile,
    'log-error': p.errorLog,
    tmpdir: p.tmpdir,
    ...(o.skipNetworking ? { 'skip-networking': null } : { port, 'bind-address': '127.0.0.1' }),
    // mariadbd refuses to run as root without it. As another user it is not needed.
    ...(process.getuid?.() === 0 ? { user: 'root' } : {}),
    'server-id': o.serverId,
    'skip-name-resolve': null,
    // Probes and killed sysbench connections must never get 127.0.0.1 blocked.
    'max-connect-errors': 1_000_000_000,
    // There is nothing to warm from, and the data dies with the server. So skip the dump and load.
    'innodb-buffer-pool-dump-at-shutdown': 'OFF',
    'innodb-buffer-pool-load-at-startup': 'OFF',
    'report-host': '127.0.0.1',
    ...(o.skipNetworking ? {} : { 'report-port': port }),
  };
}

/** Resolves when a MariaDB handshake arrives on the unix socket. Rejects on any failure. */
function handshake(socket: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = connect({ path: socket });
    let buf = Buffer.alloc(0);
    const done = (err?: Error, version?: string) => {
      clearTimeout(timer);
      conn.destroy();
      if (err) reject(err);
      else resolve(version ?? '');
    };
    const timer = setTimeout(() => done(new Error('no handshake in time')), timeoutMs);
    conn.on('error', (e) => done(e));
    conn.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 5) return;
      const payload = buf.subarray(4);
      if (payload[0] === 10) {
        const end = payload.indexOf(0, 1);
        done(undefined, payload.subarray(1, end > 0 ? end : undefined).toString('latin1'));
      } else if (payload[0] === 0xff) {
        done(new Error(`server refused: ${payload.subarray(3).toString('utf8')}`));
      } else {
        done(new Error(`unexpected protocol byte ${payload[0]}`));
      }
    });
    conn.on('end', () => done(new Error('closed before the handshake')));
  });
}

async function errorLogTail(file: string, lines = 15): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no error log)';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitReady(
  child: ChildProcess,
  socket: string,
  errorLog: string,
  timeoutMs: number,
  exited: () => number | null | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let pause = 10;
  for (;;) {
    const code = exited();
    if (code !== undefined) {
      throw new ServerStartError(
        `mariadbd exited (${code === null ? 'killed by a signal' : `exit code ${code}`}) before it was ` +
          `ready; ${errorLog}:\n${await errorLogTail(errorLog)}`,
      );
    }
    try {
      await handshake(socket, 1_000);
      return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new ServerStartError(
        `mariadbd (pid ${child.pid}) not ready after ${timeoutMs} ms; ${errorLog}:\n${await errorLogTail(errorLog)}`,
      );
    }
    await sleep(pause);
    pause = Math.min(pause * 2, 100);
  }
}

/**
 * Starts mariadbd on the datadir already at <dir>/data and waits until it accepts connections.
 * The child runs in its own process group. So a Ctrl-C reaches only the CLI, which tears down in order.
 */
export async function launchServer(o: LaunchOptions): Promise<LocalServer> {
  const p = serverPaths(o.dir);
  if (Buffer.byteLength(p.socket) > MAX_SOCKET_PATH) {
    throw new ServerStartError(
      `socket path ${p.socket} is longer than ${MAX_SOCKET_PATH} bytes (a unix socket limit): use a shorter ` +
        `run directory (runRoot / TMPDIR)`,
    );
  }
  await mkdir(p.tmpdir, { recursive: true });
  await writeClientDefaults(p.clientDefaultsFile, p.socket, o.admin);
  const attempts = o.skipNetworking ? 1 : (o.portAttempts ?? 5);
  let lastError: Error | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = o.skipNetworking ? 0 : await (o.findPort ?? findFreePort)();
    const options = { ...baseOptions(o, port), ...(o.options ?? {}) };
    await writeFile(
      p.defaultsFile,
      [
        '# written by aurora-bench (core/backends/local/mariadb-server.ts)',
        '[mariadbd]',
        ...optionFileLines(options),
      ].join('\n') + '\n',
    );
    await rm(p.errorLog, { force: true });
    const argv = [`--defaults-file=${p.defaultsFile}`];
    const [cmd, args] =
      o.cpuList && o.tools.taskset
        ? [o.tools.taskset, ['-c', o.cpuList, o.tools.mariadbd, ...argv]]
        : [o.tools.mariadbd, argv];
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    let exitCode: number | null | undefined;
    child.on('exit', (code) => {
      exitCode = code;
    });
    child.on('error', (e) => {
      lastError = e;
      exitCode = -1;
    });
    child.unref();
    try {
      await waitReady(child, p.socket, p.errorLog, o.readyTimeoutMs ?? 60_000, () => exitCode);
    } catch (e) {
      lastError = e as Error;
      const log = await errorLogTail(p.errorLog, 40);
      if (
        !o.skipNetworking &&
        /Address already in use|Can't start server: Bind on TCP\/IP port/i.test(log) &&
        attempt < attempts
      )
        continue;
      throw e;
    }
    if (child.pid === undefined) throw new ServerStartError('mariadbd started without a pid');
    const info: ServerInfo = {
      instanceId: o.instanceId,
      role: o.role,
      serverId: o.serverId,
      host: '127.0.0.1',
      port,
      pid: child.pid,
      dir: o.dir,
      datadir: p.datadir,
      socket: p.socket,
      defaultsFile: p.defaultsFile,
      clientDefaultsFile: p.clientDefaultsFile,
      errorLog: p.errorLog,
      ...(o.cpuList && o.tools.taskset ? { cpuList: o.cpuList } : {}),
      client: o.tools.client,
    };
    return { info, child };
  }
  throw lastError ?? new ServerStartError('mariadbd did not start');
}

/** Copies the template datadir into <dir>/data and launches the server on it. */
export async function startServerFromTemplate(templateDatadir: string, o: LaunchOptions): Promise<LocalServer> {
  const p = serverPaths(o.dir);
  await mkdir(o.dir, { recursive: true });
  await copyDatadir(templateDatadir, p.datadir);
  return launchServer(o);
}

export function sqlTarget(info: Pick<ServerInfo, 'client' | 'clientDefaultsFile'>): SqlTarget {
  return { client: info.client, clientDefaultsFile: info.clientDefaultsFile };
}

/** Runs SQL on the server as the admin user. Rows come as text, with NULL as null. */
export function queryServer(info: Pick<ServerInfo, 'client' | 'clientDefaultsFile'>, sql: string): Promise<Row[]> {
  return query(sqlTarget(info), sql);
}

/** The server is alive and is the process we started, since its command line names our option file. */
export function isServerRunning(info: Pick<ServerInfo, 'pid' | 'defaultsFile'>): boolean {
  return isOurProcess(info.pid, info.defaultsFile);
}

export type StopOutcome = 'already-gone' | 'terminated' | 'killed';

/**
 * SIGTERM, mariadbd's normal shutdown, then SIGKILL after `graceMs`. The server's directory is always removed.
 * A pid that is no longer our mariadbd is never signalled.
 */
export async function stopServer(
  info: Pick<ServerInfo, 'pid' | 'defaultsFile' | 'dir'>,
  options: { graceMs?: number; keepDir?: boolean } = {},
): Promise<StopOutcome> {
  // A pid that is alive but no longer names our option file was reused by someone else. It is left alone.
  const outcome: StopOutcome = isServerRunning(info)
    ? await terminate(info.pid, { graceMs: options.graceMs ?? 15_000 })
    : 'already-gone';
  if (!options.keepDir) await rm(info.dir, { recursive: true, force: true });
  return outcome;
}
