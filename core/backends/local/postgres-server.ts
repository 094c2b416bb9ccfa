/**
 * PostgreSQL on 127.0.0.1 for the PostgreSQL engines: one `postgres` per instance, all of it under one directory.
 * PostgreSQL refuses to run as root, so as root every server program runs as the `postgres` user.
 * The spec's parameters go to aurora_bench.conf after the local defaults, so the spec's values win.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { MissingDependencyError } from '../../backend';
import { AuroraBenchError } from '../../errors';
import { copyDatadir } from './copy-datadir';
import { findFreePort, isAlive, isOurProcess, terminate, waitForExit } from './processes';
import { defaultTemplateRoot, LOCAL_LOGINS } from './template';
import type { Row } from './sql-client';

export interface PostgresTools {
  readonly bindir: string;
  /** "15.18" */
  readonly version: string;
  readonly major: number;
  /** Uid and gid of the postgres user, when this process is root. */
  readonly runAs?: { readonly uid: number; readonly gid: number };
}

class PostgresError extends AuroraBenchError {
  override readonly name = 'PostgresError';
}

/** `sun_path` is 108 bytes including the NUL. */
const MAX_SOCKET_PATH = 107;

const INSTALL_HINT = 'sudo apt-get install -y postgresql (Debian/Ubuntu), or bash scripts/setup.sh';

function binDirCandidates(): string[] {
  const out: string[] = [];
  // `pg_ctl` on PATH may be a link, as Debian makes in /usr/local/bin. Use its real directory.
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = join(dir, 'pg_ctl');
    if (dir !== '' && existsSync(p)) out.push(dirname(realpathSync(p)));
  }
  // Debian's layout, newest first.
  if (existsSync('/usr/lib/postgresql')) {
    const majors = readdirSync('/usr/lib/postgresql')
      .filter((d) => /^\d+$/.test(d))
      .sort((a, b) => Number(b) - Number(a));
    out.push(...majors.map((m) => `/usr/lib/postgresql/${m}/bin`));
  }
  return out;
}

function postgresUser(): { uid: number; gid: number } | undefined {
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const u = id('-u');
  const g = id('-g');
  if (u.status !== 0 || g.status !== 0) return undefined;
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** The installed PostgreSQL server programs. Else a MissingDependencyError saying how to install them. */
export function findPostgresTools(): PostgresTools {
  const bindir = binDirCandidates().find((d) =>
    ['postgres', 'initdb', 'pg_basebackup', 'psql'].every((p) => existsSync(join(d, p))),
  );
  if (bindir === undefined)
    throw new MissingDependencyError(
      `PostgreSQL server programs (postgres, initdb, pg_basebackup, psql) not found: ${INSTALL_HINT}`,
    );
  const out = spawnSync(join(bindir, 'postgres'), ['--version'], { encoding: 'utf8' });
  const m = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(out.stdout);
  if (!m)
    throw new MissingDependencyError(
      `${bindir}/postgres --version printed no version (${out.stdout.trim() || out.stderr.trim()}): ${INSTALL_HINT}`,
    );
  const version = m[2] !== undefined ? `${m[1]!}.${m[2]}` : m[1]!;
  let runAs: PostgresTools['runAs'];
  if (process.getuid?.() === 0) {
    runAs = postgresUser();
    if (runAs === undefined)
      throw new MissingDependencyError(
        `PostgreSQL does not run as root and there is no "postgres" user to run it as: ${INSTALL_HINT}`,
      );
  }
  return { bindir, version, major: Number(m[1]), ...(runAs ? { runAs } : {}) };
}

function chownTree(dir: string, tools: PostgresTools): void {
  if (!tools.runAs) return;
  const r = spawnSync('chown', ['-R', `${tools.runAs.uid}:${tools.runAs.gid}`, dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new PostgresError(`chown ${dir} for the postgres user failed: ${r.stderr.trim()}`);
}

/** Run a server program, as the postgres user when root. It rejects with its stderr. */
function runProgram(
  tools: PostgresTools,
  program: string,
  args: readonly string[],
  timeoutMs = 120_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      join(tools.bindir, program),
      args,
      {
        timeout: timeoutMs,
        encoding: 'utf8',
        ...(tools.runAs ? { uid: tools.runAs.uid, gid: tools.runAs.gid } : {}),
        cwd: '/',
      },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new PostgresError(`${program} ${args.join(' ')} failed: ${stderr.trim() || err.message}`, { cause: err }),
          );
        else resolve(stdout);
      },
    );
  });
}

/** A superuser SQL connection over the server's own unix socket. */
export interface PgTarget {
  readonly bindir: string;
  readonly socketDir: string;
  readonly port: number;
  readonly database?: string;
}

/** SQL through psql. Rows of strings, with null for SQL NULL. */
export function pgQuery(target: PgTarget, sql: string, options: { timeoutMs?: number } = {}): Promise<Row[]> {
  const NULL = '\\N';
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(target.bindir, 'psql'),
      [
        '-X',
        '-q',
        '-A',
        '-t',
        '-F',
        '\t',
        '-P',
        `null=${NULL}`,
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        target.socketDir,
        '-p',
        String(target.port),
        '-U',
        'postgres',
        '-d',
        target.database ?? 'sbtest',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new PostgresError(`psql on port ${target.port}: ${err.trim() || `exit code ${code}`}`));
        return;
      }
      const lines = out.split('\n').filter((l) => l !== '');
      resolve(lines.map((l) => l.split('\t').map((v) => (v === NULL ? null : v))));
    });
    // psql may exit before it reads its input, when the server is not up yet. The write then fails with EPIPE.
    // That must not become an uncaught error. The close handler reports psql's own message.
    child.stdin.on('error', () => undefined);
    child.stdin.end(sql.endsWith(';') ? sql : sql + ';');
  });
}

/** One row of pg_settings: what the server has and accepts. */
interface PgSetting {
  readonly name: string;
  readonly vartype: 'bool' | 'enum' | 'integer' | 'real' | 'string';
  /** `postmaster` means a restart, then sighup, superuser, user, ... */
  readonly context: string;
  readonly unit: string | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly enumvals: readonly string[] | null;
}

export type PgSettingsCatalog = Readonly<Record<string, PgSetting>>;

export interface PostgresTemplate {
  readonly version: string;
  readonly datadir: string;
  readonly settings: PgSettingsCatalog;
}

/** Bump when what the template holds changes, so a cached template of another format is rebuilt. */
const PG_TEMPLATE_FORMAT = 1;
export const PG_CONF_INCLUDE = 'aurora_bench.conf';

const SETTINGS_SQL =
  "SELECT name, vartype, context, coalesce(unit, ''), coalesce(min_val, ''), coalesce(max_val, ''), " +
  "coalesce(array_to_string(enumvals, '|'), '') FROM pg_settings ORDER BY name";

function settingsFromRows(rows: readonly Row[]): PgSettingsCatalog {
  const out: Record<string, PgSetting> = {};
  for (const [name, vartype, context, unit, min, max, enumvals] of rows) {
    if (!name) continue;
    out[name] = {
      name,
      vartype: vartype as PgSetting['vartype'],
      context: context ?? '',
      unit: unit ? unit : null,
      min: min ? Number(min) : null,
      max: max ? Number(max) : null,
      enumvals: enumvals ? enumvals.split('|') : null,
    };
  }
  return out;
}

/**
 * The version's template: initdb, the sbtest role and database, the heartbeat table, and pg_settings.
 * The superuser logs in over the server's own socket only, and `sbtest` over TCP with a password, as the runner does.
 * Built once per machine and version, in about 3 s, under the template cache.
 */
export async function ensurePostgresTemplate(
  tools: PostgresTools,
  root: string = defaultTemplateRoot(),
): Promise<PostgresTemplate> {
  const dir = join(root, `postgresql-${tools.version}-f${PG_TEMPLATE_FORMAT}`);
  const settingsFile = join(dir, 'settings.json');
  if (existsSync(settingsFile) && existsSync(join(dir, 'data', 'PG_VERSION'))) {
    return {
      version: tools.version,
      datadir: join(dir, 'data'),
      settings: JSON.parse(await readFile(settingsFile, 'utf8')) as PgSettingsCatalog,
    };
  }
  // The cache may be under root's home. So build where the postgres user can write, then copy it in.
  const build = await mkdtemp(join(tmpdir(), 'aurora-bench-pg-template-'));
  await chmod(build, 0o755);
  chownTree(build, tools);
  const datadir = join(build, 'data');
  let server: PostgresServer | undefined;
  try {
    await runProgram(tools, 'initdb', [
      '-D',
      datadir,
      '-U',
      'postgres',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '-N',
    ]);
    await appendFile(
      join(datadir, 'postgresql.conf'),
      `\n# aurora-bench: local defaults and the spec's parameters\ninclude_if_exists = '${PG_CONF_INCLUDE}'\n`,
    );
    server = await startPostgres({ tools, instanceId: 'template', role: 'writer', dir: build, datadir, listen: false });
    const admin = { bindir: tools.bindir, socketDir: build, port: server.port, database: 'postgres' };
    const sbtest = LOCAL_LOGINS.sbtest;
    await pgQuery(
      admin,
      `CREATE ROLE ${sbtest.user} LOGIN PASSWORD '${sbtest.password}'; CREATE DATABASE sbtest OWNER ${sbtest.user}`,
    );
    await pgQuery(
      { ...admin, database: 'sbtest' },
      'CREATE SCHEMA aurora_bench; CREATE TABLE aurora_bench.heartbeat (id int PRIMARY KEY, seq bigint NOT ' +
        'NULL, at timestamptz NOT NULL DEFAULT now()); INSERT INTO aurora_bench.heartbeat VALUES (1, 0)',
    );
    const settings = settingsFromRows(await pgQuery(admin, SETTINGS_SQL));
    await stopPostgres(server, { keepDir: true });
    server = undefined;
    await rm(join(datadir, 'postmaster.pid'), { force: true });
    const staging = `${dir}.tmp-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    await copyDatadir(datadir, join(staging, 'data'));
    await writeFile(join(staging, 'settings.json'), JSON.stringify(settings));
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
    return { version: tools.version, datadir: join(dir, 'data'), settings };
  } finally {
    if (server) await stopPostgres(server, { keepDir: true });
    await rm(build, { recursive: true, force: true });
  }
}

/** A running postgres, as plain JSON. Another process can query and stop it too. */
export interface PostgresServer {
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly pid: number;
  readonly dir: string;
  readonly datadir: string;
  readonly socketDir: string;
  readonly log: string;
  readonly bindir: string;
  readonly cpuList?: string;
}

export interface StartPostgresOptions {
  readonly tools: PostgresTools;
  readonly instanceId: string;
  readonly role: 'writer' | 'reader';
  /** The server's own directory. The datadir must be in place. */
  readonly dir: string;
  readonly datadir: string;
  /** False for unix socket only, as the template build uses. */
  readonly listen?: boolean;
  /** -c settings aurora-bench manages, such as a replica's primary_conninfo. They outrank postgresql.conf. */
  readonly managed?: Readonly<Record<string, string>>;
  readonly cpuList?: string;
  readonly readyTimeoutMs?: number;
  readonly portAttempts?: number;
}

function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Start postgres and wait until it answers SQL on its socket.
 * A replica answers once it accepts read-only connections.
 */
export async function startPostgres(o: StartPostgresOptions): Promise<PostgresServer> {
  let socketDir = o.dir;
  // A unix socket path holds at most 107 bytes. A deep run directory's socket path can be longer.
  // Postgres then refuses to start. So such a server gets a short socket directory under /tmp, removed with it.
  if (Buffer.byteLength(join(o.dir, '.s.PGSQL.65535.lock')) > MAX_SOCKET_PATH) {
    socketDir = await mkdtemp(join('/tmp', 'abpg-'));
    chownTree(socketDir, o.tools);
    await chmod(socketDir, 0o700);
  }
  try {
    return await startPostgresOn(o, socketDir);
  } catch (e) {
    if (socketDir !== o.dir) await rm(socketDir, { recursive: true, force: true });
    throw e;
  }
}

async function startPostgresOn(o: StartPostgresOptions, socketDir: string): Promise<PostgresServer> {
  const attempts = o.portAttempts ?? 3;
  let last: Error | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = await findFreePort();
    const log = join(o.dir, 'postgres.log');
    const settings: Record<string, string> = {
      port: String(port),
      listen_addresses: o.listen === false ? '' : '127.0.0.1',
      unix_socket_directories: socketDir,
      // Every server can then be a primary with replicas or a hot standby.
      wal_level: 'replica',
      max_wal_senders: '16',
      hot_standby: 'on',
      logging_collector: 'off',
      ...(o.managed ?? {}),
    };
    const args = ['-D', o.datadir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const program = join(o.tools.bindir, 'postgres');
    const [cmd, argv] = o.cpuList !== undefined ? ['taskset', ['-c', o.cpuList, program, ...args]] : [program, args];
    const { openSync, closeSync } = await import('node:fs');
    const fd = openSync(log, 'a');
    let child;
    try {
      // Own process group, so stopping the server reaches the postmaster and its backends together.
      child = spawn(cmd, argv, {
        detached: true,
        stdio: ['ignore', fd, fd],
        cwd: o.dir,
        ...(o.tools.runAs ? { uid: o.tools.runAs.uid, gid: o.tools.runAs.gid } : {}),
      });
    } finally {
      closeSync(fd);
    }
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new PostgresError(`could not start ${program}`);
    const server: PostgresServer = {
      instanceId: o.instanceId,
      role: o.role,
      host: '127.0.0.1',
      port,
      pid,
      dir: o.dir,
      datadir: o.datadir,
      socketDir,
      log,
      bindir: o.tools.bindir,
      ...(o.cpuList ? { cpuList: o.cpuList } : {}),
    };
    const deadline = Date.now() + (o.readyTimeoutMs ?? 60_000);
    // The exit event sets it while the loop below awaits. An object, so the check reads it afresh.
    const status = { exited: false };
    child.on('exit', () => (status.exited = true));
    while (Date.now() < deadline && !status.exited) {
      try {
        await pgQuery({ bindir: o.tools.bindir, socketDir, port, database: 'postgres' }, 'SELECT 1', {
          timeoutMs: 5_000,
        });
        return server;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const tail = logTail(log);
    if (!status.exited) {
      await terminate(pid, { graceMs: 5_000, group: true });
      throw new PostgresError(
        `${o.instanceId}: postgres did not accept connections within ${(o.readyTimeoutMs ?? 60_000) / 1000} ` +
          `s; ${log}:\n${tail}`,
      );
    }
    last = new PostgresError(`${o.instanceId}: postgres exited while starting; ${log}:\n${tail}`);
    if (!/could not bind|Address already in use/.test(tail)) throw last;
  }
  throw last ?? new PostgresError(`${o.instanceId}: postgres did not start`);
}

export function isPostgresRunning(s: Pick<PostgresServer, 'pid' | 'datadir'>): boolean {
  return isOurProcess(s.pid, s.datadir, postgresOwnerUid());
}

let ownerUid: { value: number | undefined } | undefined;
/** The uid PostgreSQL servers run as. That is the postgres user when this process is root, else ours. */
export function postgresOwnerUid(): number | undefined {
  ownerUid ??= { value: process.getuid?.() === 0 ? postgresUser()?.uid : process.getuid?.() };
  return ownerUid.value;
}

/**
 * Fast shutdown, then SIGKILL to the whole process group after `graceMs`. The directory is removed unless kept.
 * On SIGINT, the postmaster rolls back open transactions and disconnects clients.
 * A pid that no longer names this datadir is never signalled.
 */
export async function stopPostgres(
  s: Pick<PostgresServer, 'pid' | 'datadir' | 'dir'> & { readonly socketDir?: string },
  options: { graceMs?: number; keepDir?: boolean } = {},
): Promise<'already-gone' | 'terminated' | 'killed'> {
  let outcome: 'already-gone' | 'terminated' | 'killed' = 'already-gone';
  if (isPostgresRunning(s)) {
    try {
      process.kill(s.pid, 'SIGINT');
    } catch {
      // Gone meanwhile.
    }
    if (await waitForExit(s.pid, options.graceMs ?? 15_000)) {
      outcome = 'terminated';
    } else {
      try {
        process.kill(-s.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
      outcome = 'killed';
    }
  }
  // Backends of a killed postmaster exit once it is gone. Their group is killed all the same.
  if (!isAlive(s.pid)) {
    try {
      process.kill(-s.pid, 'SIGKILL');
    } catch {
      // No group left.
    }
  }
  if (!options.keepDir) await rm(s.dir, { recursive: true, force: true });
  // A short socket directory of its own goes with it.
  if (s.socketDir !== undefined && s.socketDir !== s.dir && s.socketDir.startsWith('/tmp/abpg-'))
    await rm(s.socketDir, { recursive: true, force: true });
  return outcome;
}

/** A new server directory for the postgres user, with the datadir copied from `source`. */
export async function preparePostgresDir(tools: PostgresTools, dir: string, sourceDatadir?: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const datadir = join(dir, 'data');
  if (sourceDatadir !== undefined) await copyDatadir(sourceDatadir, datadir);
  chownTree(dir, tools);
  await chmod(dir, 0o700);
  if (existsSync(datadir)) await chmod(datadir, 0o700);
  return datadir;
}

/** A streaming replica's datadir from the primary, with pg_basebackup over its socket. */
export async function baseBackup(tools: PostgresTools, primary: PostgresServer, datadir: string): Promise<void> {
  await runProgram(tools, 'pg_basebackup', [
    '-D',
    datadir,
    '-h',
    primary.socketDir,
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-X',
    'stream',
    '-c',
    'fast',
    '-R',
    '-w',
  ]);
}

/**
 * The postgres user must be able to enter every directory down to its server's.
 * From `dir` up to `ownedRoot`, the directories get o+x. mkdtemp makes them 0700.
 * Above it they must already allow it, or the start is refused naming the directory.
 */
export async function openPathFor(tools: PostgresTools, dir: string, ownedRoot: string): Promise<void> {
  if (!tools.runAs) return;
  const root = resolve(ownedRoot);
  let cur = resolve(dir);
  for (;;) {
    const mode = statSync(cur).mode & 0o777;
    const inside = cur === root || cur.startsWith(root + sep);
    if ((mode & 0o001) === 0) {
      if (!inside) {
        throw new PostgresError(
          `the postgres user cannot enter ${cur} (mode ${mode.toString(8)}), above the run root ${root}: ` +
            `PostgreSQL does not run as root, so choose a run root (TMPDIR) under directories others may ` +
            `enter, e.g. /tmp`,
        );
      }
      await chmod(cur, mode | 0o711);
    }
    const parent = dirname(cur);
    if (parent === cur) return;
    cur = parent;
  }
}
