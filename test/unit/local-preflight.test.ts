import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingDependencyError } from '../../core/backend';
import { findLocalTools, parseServerVersion, parseSysbenchVersion } from '../../core/backends/local/preflight';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ab-preflight-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function fakeExecutable(name: string): void {
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, name), 0o755);
}

describe('findLocalTools', () => {
  it('names every missing program and says how to install them', () => {
    // Act
    const act = () => findLocalTools([dir]);

    // Assert
    expect(act).toThrow(MissingDependencyError);
    expect(act).toThrow(/mariadbd \(MariaDB server\), mariadb-install-db, mariadb \(MariaDB client\), sysbench/);
    expect(act).toThrow(/sudo apt-get install -y mariadb-server mariadb-client sysbench/);
    expect(act).toThrow(/bash scripts\/setup\.sh/);
  });

  it('names only what is missing', () => {
    // Arrange
    fakeExecutable('mariadbd');
    fakeExecutable('mariadb-install-db');
    fakeExecutable('mariadb');

    // Act / Assert
    expect(() => findLocalTools([dir])).toThrow(/needs sysbench, which is not installed/);
  });

  it('accepts the older mysql_install_db and mysql names and finds them in the given dirs', () => {
    // Arrange
    for (const name of ['mysqld', 'mysql_install_db', 'mysql', 'sysbench']) fakeExecutable(name);

    // Act
    const tools = findLocalTools([dir]);

    // Assert
    expect(tools).toMatchObject({
      mariadbd: join(dir, 'mysqld'),
      installDb: join(dir, 'mysql_install_db'),
      client: join(dir, 'mysql'),
      sysbench: join(dir, 'sysbench'),
      taskset: undefined,
    });
  });
});

describe('version parsing', () => {
  it('reads the server and sysbench versions from their --version output', () => {
    // Act / Assert
    expect(
      parseServerVersion('mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)'),
    ).toBe('10.11.19-MariaDB-0+deb12u1');
    expect(parseSysbenchVersion('sysbench 1.0.20')).toBe('1.0.20');
    expect(parseSysbenchVersion('sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)')).toBe('1.0.20');
    expect(parseServerVersion('nonsense')).toBeUndefined();
  });
});
