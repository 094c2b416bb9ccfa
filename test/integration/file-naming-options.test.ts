/**
 * The options a spec may not set because they name a file, a directory, a library or a command
 * (core/aurora/server-config.ts SERVER_MANAGED_OPTIONS for MariaDB, MANAGED_PG_SETTINGS of
 * core/backends/local/postgres-cluster.ts for PostgreSQL), checked complete against the installed
 * servers' own lists: `mariadbd --help --verbose` (each option's description) and `postgres
 * --describe-config` (each setting's group and type).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { SERVER_MANAGED_OPTIONS } from '../../core/aurora/server-config';
import { MANAGED_PG_SETTINGS } from '../../core/backends/local/postgres-cluster';

/** Options whose description says file, directory or path but whose value names none. */
const NOT_A_FILE: Record<string, string> = {
  aria_sync_log_dir: 'when to sync: NEVER, NEWFILE, ALWAYS',
  ignore_db_dirs: 'names of folders in the datadir not to take for databases',
  innodb_checksum_algorithm: 'an algorithm',
  innodb_data_file_path: 'fixed when the datadir is created (FIXED_AT_INIT)',
  innodb_instant_alter_column_allowed: 'an ALTER TABLE constraint',
  log_output: 'FILE, TABLE or NONE',
  proxy_protocol_networks: 'networks',
};

/** PostgreSQL string settings named like a file's whose value names none. */
const PG_NOT_A_FILE: Record<string, string> = { search_path: 'schemas, not folders' };

/** mariadbd's options with a string argument and their description, names with '_'. */
function mariadbOptions(): Map<string, string> {
  const help = execFileSync('mariadbd', ['--no-defaults', '--help', '--verbose'], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `/usr/sbin:/usr/local/sbin:${process.env['PATH'] ?? ''}` },
  });
  const options = new Map<string, string>();
  let current: string | undefined;
  for (const line of help.split('\n Variables (--variable-name=value)')[0]!.split('\n')) {
    const m = /^ {2}(?:-\w, )?--([a-z0-9-]+)(\[?=name\]?)?\s*(.*)$/.exec(line);
    if (m) {
      current = m[2] !== undefined ? m[1]!.replace(/-/g, '_') : undefined;
      if (current !== undefined) options.set(current, m[3]!);
    } else if (current !== undefined && line.startsWith('    ')) {
      options.set(current, `${options.get(current)!} ${line.trim()}`);
    }
  }
  return options;
}

function postgresBinary(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort() : [];
  return versions.map((v) => `${root}/${v}/bin/postgres`).find(existsSync);
}

describe('server options that name a file', () => {
  it('covers every MariaDB option whose description names a file, directory or path, under each of its names', () => {
    // Arrange
    const options = mariadbOptions();

    // Act
    const naming = [...options].filter(([, d]) => /\b(file|files|filename|directory|dir|path|socket)\b/i.test(d));
    const uncovered = naming.map(([n]) => n).filter((n) => !SERVER_MANAGED_OPTIONS.has(n) && !(n in NOT_A_FILE));

    // Assert
    expect(naming.length).toBeGreaterThan(30);
    expect(options.has('log_slow_query_file')).toBe(true);
    expect(uncovered).toEqual([]);
  });

  it('covers every PostgreSQL string setting of File Locations or named for a file, library or command', () => {
    // Arrange: postgres refuses to run as root, so it is asked as the postgres user then.
    const postgres = postgresBinary();
    if (postgres === undefined) throw new Error('PostgreSQL is not installed: bash scripts/setup.sh installs it');
    const asUser = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', postgres]] : [postgres, []];
    const described = execFileSync(asUser[0] as string, [...(asUser[1] as string[]), '--describe-config'], {
      encoding: 'utf8',
    });

    // Act
    const naming = described
      .split('\n')
      .map((l) => l.split('\t'))
      .filter(([, , , type]) => type === 'STRING')
      .filter(
        ([name, , group]) =>
          group === 'File Locations' ||
          /(_file|_dir|_directory|_directories|_path|_library|_libraries|_command|keyfile|_provider|_source)$/.test(
            name!,
          ),
      )
      .map(([name]) => name!);
    const uncovered = naming.filter((n) => !MANAGED_PG_SETTINGS.has(n) && !(n in PG_NOT_A_FILE));

    // Assert
    expect(naming).toContain('log_directory');
    expect(uncovered).toEqual([]);
  });
});
