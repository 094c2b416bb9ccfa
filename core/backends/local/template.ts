/**
 * One initialised datadir per MariaDB version, built once and copied for every server, since an install takes seconds.
 * Builds race safely. Each builds in its own temp directory and renames it into place.
 * A loser discards its copy and uses the winner's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { launchServer, queryServer, stopServer, writeClientDefaults } from './mariadb-server';
import type { VariableCatalog, VariableInfo } from './parameters';
import type { LocalTools } from './preflight';
import { sqlString } from './sql-client';
import { BENCHMARK_DATABASE } from '../../plan/sysbench-args';

const execFileAsync = promisify(execFile);

/** Bump when the template's content changes, so older templates are rebuilt. */
const TEMPLATE_FORMAT = 1;

/**
 * Local-only logins. The servers listen on 127.0.0.1 only and live for one cell.
 * The passwords are fixed so a template can carry the accounts. CellResources carries only the secretRef.
 */
export const LOCAL_LOGINS = {
  admin: { user: 'root', password: 'aurora-bench-admin' },
  sbtest: { user: 'sbtest', password: 'aurora-bench-sbtest', secretRef: 'local:sbtest' },
  replication: { user: 'repl', password: 'aurora-bench-repl' },
} as const;

export const HEARTBEAT_TABLE = 'aurora_bench.heartbeat';

/**
 * 'local' holds the sbtest database and users. An anonymous ''@localhost would shadow sbtest@'%', so it is dropped.
 * 'rds' holds only the admin, replication and heartbeat plumbing.
 * Its servers start as empty as a new Aurora cluster, for the AWS rehearsal.
 */
export type TemplateKind = 'local' | 'rds';

export interface ServerTemplate {
  readonly kind?: TemplateKind;
  readonly serverVersion: string;
  readonly dir: string;
  readonly datadir: string;
  readonly catalog: VariableCatalog;
}

/** The local backend's cache: server templates, definitions already validated. */
export function defaultCacheRoot(): string {
  const override = process.env['AURORA_BENCH_CACHE_DIR'];
  return override ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'aurora-bench');
}

export function defaultTemplateRoot(): string {
  return join(defaultCacheRoot(), 'templates');
}

/** A version string as a directory name. */
function dirName(serverVersion: string): string {
  return serverVersion.replace(/[^A-Za-z0-9._+-]/g, '_');
}

async function readTemplate(
  dir: string,
  serverVersion: string,
  kind: TemplateKind,
): Promise<ServerTemplate | undefined> {
  try {
    const meta = JSON.parse(await readFile(join(dir, 'template.json'), 'utf8')) as {
      format?: number;
      serverVersion?: string;
      kind?: TemplateKind;
    };
    if (meta.format !== TEMPLATE_FORMAT || meta.serverVersion !== serverVersion || (meta.kind ?? 'local') !== kind)
      return undefined;
    const vars = JSON.parse(await readFile(join(dir, 'system-variables.json'), 'utf8')) as VariableInfo[];
    if (!existsSync(join(dir, 'datadir', 'mysql'))) return undefined;
    return { kind, serverVersion, dir, datadir: join(dir, 'datadir'), catalog: new Map(vars.map((v) => [v.name, v])) };
  } catch {
    return undefined;
  }
}

const inFlight = new Map<string, Promise<ServerTemplate>>();

/** The template for this server version, built on first use. That takes a few seconds, once per machine and version. */
export function ensureTemplate(
  tools: LocalTools,
  serverVersion: string,
  root: string = defaultTemplateRoot(),
  kind: TemplateKind = 'local',
): Promise<ServerTemplate> {
  const dir = join(root, dirName(serverVersion) + (kind === 'local' ? '' : `-${kind}`));
  let pending = inFlight.get(dir);
  if (!pending) {
    pending = (async () =>
      (await readTemplate(dir, serverVersion, kind)) ?? (await buildTemplate(tools, serverVersion, root, dir, kind)))();
    inFlight.set(dir, pending);
    pending.catch(() => inFlight.delete(dir));
  }
  return pending;
}

function numberOrUndefined(v: string | null | undefined): number | undefined {
  if (v === null || v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

async function buildTemplate(
  tools: LocalTools,
  serverVersion: string,
  root: string,
  finalDir: string,
  kind: TemplateKind,
): Promise<ServerTemplate> {
  await mkdir(root, { recursive: true });
  const build = await mkdtemp(join(root, '.build-'));
  try {
    const datadir = join(build, 'server', 'data');
    await mkdir(datadir, { recursive: true });
    try {
      await execFileAsync(
        tools.installDb,
        [
          '--no-defaults',
          `--datadir=${datadir}`,
          '--skip-test-db',
          '--auth-root-authentication-method=normal',
          ...(process.getuid?.() === 0 ? ['--user=root'] : []),
        ],
        { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (e) {
      const err = e as { stderr?: string; stdout?: string; message: string };
      throw new Error(
        `${tools.installDb} failed: ` +
          (err.stderr || err.stdout || err.message).trim().split('\n').slice(-10).join('\n'),
        { cause: e },
      );
    }
    // Bootstrap server: socket only, no binlog. The template must carry no GTID history.
    const server = await launchServer({
      tools,
      instanceId: 'template',
      role: 'writer',
      serverId: 1,
      dir: join(build, 'server'),
      skipNetworking: true,
      options: { 'skip-log-bin': null },
      admin: { user: 'root', password: '' },
    });
    try {
      const accounts = await queryServer(
        server.info,
        "SELECT User, Host FROM mysql.user WHERE User = '' OR (User = 'root' AND Host <> 'localhost')",
      );
      const drops = accounts.map(([u, h]) => `DROP USER ${sqlString(u ?? '')}@${sqlString(h ?? '')};`).join('\n');
      const { sbtest, replication, admin } = LOCAL_LOGINS;
      const sbtestHosts = ['%', 'localhost', '127.0.0.1'];
      const replHosts = ['127.0.0.1', 'localhost'];
      await queryServer(
        server.info,
        [
          drops,
          ...(kind === 'local'
            ? [
                `CREATE DATABASE IF NOT EXISTS ${BENCHMARK_DATABASE};`,
                ...sbtestHosts.flatMap((h) => [
                  `CREATE USER ${sqlString(sbtest.user)}@${sqlString(h)} IDENTIFIED BY ${sqlString(sbtest.password)};`,
                  `GRANT ALL PRIVILEGES ON ${BENCHMARK_DATABASE}.* TO ${sqlString(sbtest.user)}@${sqlString(h)};`,
                ]),
              ]
            : []),
          ...replHosts.flatMap((h) => [
            `CREATE USER ${sqlString(replication.user)}@${sqlString(h)} IDENTIFIED BY ` +
              sqlString(replication.password) +
              `;`,
            `GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ${sqlString(replication.user)}@${sqlString(h)};`,
          ]),
          'CREATE DATABASE aurora_bench;',
          `CREATE TABLE ${HEARTBEAT_TABLE} (id TINYINT UNSIGNED NOT NULL PRIMARY KEY, seq BIGINT UNSIGNED NOT ` +
            `NULL) ENGINE=InnoDB;`,
          `INSERT INTO ${HEARTBEAT_TABLE} VALUES (1, 0);`,
          `ALTER USER ${sqlString(admin.user)}@'localhost' IDENTIFIED BY ${sqlString(admin.password)};`,
          'FLUSH PRIVILEGES;',
        ].join('\n'),
      );
      // The root password changed under the open client.cnf, so read the catalog with the new one.
      await writeClientDefaults(server.info.clientDefaultsFile, server.info.socket, admin);
      const rows = await queryServer(
        server.info,
        'SELECT LOWER(VARIABLE_NAME), READ_ONLY, VARIABLE_TYPE, ENUM_VALUE_LIST, NUMERIC_MIN_VALUE, ' +
          'NUMERIC_MAX_VALUE, VARIABLE_SCOPE FROM information_schema.SYSTEM_VARIABLES ORDER BY VARIABLE_NAME',
      );
      const catalog: VariableInfo[] = rows.map((r) => {
        const min = numberOrUndefined(r[4]);
        const max = numberOrUndefined(r[5]);
        return {
          name: r[0]!,
          readOnly: r[1] === 'YES',
          type: r[2] ?? 'VARCHAR',
          ...(r[3] ? { enumValues: r[3].split(',') } : {}),
          ...(min !== undefined ? { min } : {}),
          ...(max !== undefined ? { max } : {}),
          scope: r[6] ?? 'GLOBAL',
        };
      });
      await writeFile(join(build, 'system-variables.json'), JSON.stringify(catalog, null, 1) + '\n');
    } finally {
      await stopServer(server.info, { graceMs: 30_000, keepDir: true });
    }
    // Leave only the datadir. Files of the bootstrap run are not part of the template.
    await rm(join(datadir, 'ib_buffer_pool'), { force: true });
    await rename(datadir, join(build, 'datadir'));
    await rm(join(build, 'server'), { recursive: true, force: true });
    await writeFile(
      join(build, 'template.json'),
      JSON.stringify(
        { format: TEMPLATE_FORMAT, kind, serverVersion, mariadbd: tools.mariadbd, createdAt: new Date().toISOString() },
        null,
        1,
      ) + '\n',
    );

    // Swap into place. Replace a stale template of another format, and lose gracefully to a racing build.
    if (existsSync(finalDir) && !(await readTemplate(finalDir, serverVersion, kind))) {
      const stale = `${finalDir}.stale-${process.pid}-${Date.now()}`;
      await rename(finalDir, stale).catch(() => undefined);
      await rm(stale, { recursive: true, force: true });
    }
    try {
      await rename(build, finalDir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    }
    const ready = await readTemplate(finalDir, serverVersion, kind);
    if (!ready) throw new Error(`template at ${finalDir} is unreadable after it was built`);
    return ready;
  } finally {
    await rm(build, { recursive: true, force: true });
  }
}
