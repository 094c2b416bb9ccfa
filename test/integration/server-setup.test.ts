/**
 * A self-managed variant's servers as the AWS backend sets them up over SSM, run with bash on this
 * machine: client/server-install.sh (finds this machine's mariadbd and writes its marker) and
 * client/server-setup.sh with the option lines core/aurora/server-config.ts renders, for a writer
 * and one replica on free 127.0.0.1 ports, each under its own AURORA_BENCH_HOME. `aws` is a shim on
 * PATH that answers get-secret-value with the secret's JSON (and fails on anything else), so the
 * script's secret handling runs without moto; everything else is the real MariaDB.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { optionFileValue, renderServerOptions, serverOptionsBase64 } from '../../core/aurora/server-config';
import { findFreePort, isAlive, waitForExit } from '../../core/backends/local/processes';
import { query, type SqlTarget } from '../../core/backends/local/sql-client';
import { serverProcessesUnder } from '../helpers/server-processes';

const ROOT = join(__dirname, '..', '..');
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:ab-sm-test-AbCdEf';
// A password with the characters SQL and option files quote.
const SECRET = { username: 'bench', password: `p@ss w0rd'"\\x` };

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function bash(script: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn('bash', [join(ROOT, 'client', script), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lastLine = (text: string) => JSON.parse(text.trim().split('\n').pop()!) as Record<string, unknown>;

describe('self-managed servers: server-install.sh and server-setup.sh on real MariaDB (writer + replica)', () => {
  let work: string;
  const homes = { writer: '', replica: '', bad: '' };
  const ports = { writer: 0, replica: 0, bad: 0 };
  let optionsB64: string;

  const env = (home: string, port: number): Record<string, string> => ({
    PATH: `${join(work, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    HOME: home,
    AURORA_BENCH_HOME: home,
    AURORA_BENCH_SERVER_HOST: '127.0.0.1',
    AURORA_BENCH_SERVER_PORT: String(port),
    SHIM_SECRET_FILE: join(work, 'secret.json'),
    SHIM_SECRET_ARN: SECRET_ARN,
  });
  const setup = (role: 'writer' | 'replica', extra: string[] = [], b64 = optionsB64) =>
    bash(
      'server-setup.sh',
      [
        ...[
          '--role',
          role,
          '--server-id',
          role === 'writer' ? '1' : '2',
          '--port',
          '3306',
          '--options-b64',
          b64,
          '--secret-arn',
          SECRET_ARN,
        ],
        ...(role === 'replica' ? ['--writer-host', '127.0.0.1', '--writer-port', String(ports.writer)] : []),
        ...extra,
      ],
      env(homes[role], ports[role]),
    );
  // The secret's user over TCP, as sysbench on a client logs in.
  const tcp = (port: number): SqlTarget => {
    const file = join(work, `client-${port}.cnf`);
    writeFileSync(
      file,
      `[client]\nuser=` +
        optionFileValue(SECRET.username) +
        `\npassword=` +
        optionFileValue(SECRET.password) +
        `\nhost=127.0.0.1\nport=${port}\nprotocol=tcp\n`,
      {
        mode: 0o600,
      },
    );
    return { client: 'mariadb', clientDefaultsFile: file };
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ab-sm-'));
    mkdirSync(join(work, 'bin'));
    writeFileSync(join(work, 'secret.json'), JSON.stringify(SECRET));
    // The shim answers exactly the call the script makes (aws secretsmanager get-secret-value
    // --secret-id ARN --query SecretString --output text), like the CLI: the SecretString as text.
    writeFileSync(
      join(work, 'bin', 'aws'),
      [
        '#!/bin/bash',
        '[ "$*" = "secretsmanager get-secret-value --secret-id $SHIM_SECRET_ARN --query SecretString --output ' +
          'text" ] || { echo "aws shim: unexpected call: $*" >&2; exit 254; }',
        'cat "$SHIM_SECRET_FILE"',
      ].join('\n') + '\n',
      { mode: 0o755 },
    );
    for (const role of ['writer', 'replica', 'bad'] as const) {
      homes[role] = join(work, role);
      mkdirSync(homes[role]);
      ports[role] = await findFreePort();
    }
    // What the backend sends: the variant's parameters rendered for a small instance.
    const rendered = renderServerOptions(
      {
        name: 'sm',
        clusterParameters: {},
        instanceParameters: {
          thread_handling: 'pool-of-threads',
          innodb_buffer_pool_size: '64M',
          innodb_log_file_size: '48M',
        },
      },
      { memoryBytes: 2 * 1024 ** 3, vcpu: 2, maxConnections: 300 },
    );
    expect(rendered.problems).toEqual([]);
    optionsB64 = serverOptionsBase64(rendered.lines);
  });

  afterAll(async () => {
    for (const role of ['writer', 'replica', 'bad'] as const) {
      let pid: number;
      try {
        pid = Number(readFileSync(join(homes[role], 'server', 'mariadbd.pid'), 'utf8').trim());
      } catch {
        continue; // never started
      }
      if (Number.isInteger(pid) && isAlive(pid)) {
        process.kill(pid, 'SIGTERM');
        await waitForExit(pid, 30_000);
      }
    }
    const left = serverProcessesUnder('mariadbd', work);
    rmSync(work, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it('installs nothing where mariadbd is present and writes the marker setup waits for', async () => {
    // Act
    const results = await Promise.all(
      [homes.writer, homes.replica, homes.bad].map((h) => bash('server-install.sh', [], env(h, 0))),
    );

    // Assert
    for (const [i, r] of results.entries()) {
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(readFileSync(join([homes.writer, homes.replica, homes.bad][i]!, 'server-installed'), 'utf8')).toMatch(
        /^mariadbd=\/.*\nversion=.* 10\.11\./,
      );
    }
  });

  it('starts the writer: JSON line last, thread pool and options in effect, secret user over TCP', async () => {
    // Act
    const r = await setup('writer');

    // Assert
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toEqual({
      ready: true,
      role: 'writer',
      host: '127.0.0.1',
      port: ports.writer,
      version: expect.stringMatching(/^10\.11\./),
      serverId: 1,
    });
    const [row] = await query(
      tcp(ports.writer),
      'SELECT @@thread_handling, @@max_connections, @@innodb_buffer_pool_size, @@read_only, @@log_bin, @@server_id',
    );
    expect(row).toEqual(['pool-of-threads', '300', String(64 * 1024 ** 2), '0', '1', '1']);
  });

  it('starts a replica replicating a write made on the writer (GTID), read-only, with the thread pool', async () => {
    // Act
    const r = await setup('replica');
    await query(
      tcp(ports.writer),
      'CREATE TABLE sbtest.probe (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO sbtest.probe VALUES (1, ' +
        '"from the writer")',
    );
    const [[gtid]] = (await query(tcp(ports.writer), 'SELECT @@gtid_binlog_pos')) as [[string]];
    // MASTER_GTID_WAIT returns 0 once the replica has applied that position (-1 on its timeout).
    const [[waited]] = (await query(tcp(ports.replica), `SELECT MASTER_GTID_WAIT('${gtid}', 60)`)) as [[string]];

    // Assert
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(lastLine(r.stdout)).toEqual({
      ready: true,
      role: 'replica',
      host: '127.0.0.1',
      port: ports.replica,
      version: expect.stringMatching(/^10\.11\./),
      serverId: 2,
    });
    expect(waited).toBe('0');
    expect(
      await query(tcp(ports.replica), 'SELECT v FROM sbtest.probe; SELECT @@read_only, @@thread_handling, @@server_id'),
    ).toEqual([['from the writer'], ['1', 'pool-of-threads', '2']]);
  });

  it('verifies and answers the same on a repeat, without restarting either server', async () => {
    // Arrange
    const pidOf = (role: 'writer' | 'replica') =>
      readFileSync(join(homes[role], 'server', 'mariadbd.pid'), 'utf8').trim();
    const before = [pidOf('writer'), pidOf('replica')];

    // Act
    const again = [await setup('writer'), await setup('replica')];

    // Assert
    for (const [i, r] of again.entries()) {
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/already runs with these settings/);
      expect(lastLine(r.stdout)).toMatchObject({ ready: true, port: i === 0 ? ports.writer : ports.replica });
    }
    expect([pidOf('writer'), pidOf('replica')]).toEqual(before);
  });

  it(
    "fails with MariaDB's own reason for an option it does not take, and with the script's for one it sets " +
      'itself; nothing left running',
    async () => {
      // Arrange
      const unknown = serverOptionsBase64(['thread_handling=pool-of-threads', 'innodb_no_such_option=1']);
      const managed = serverOptionsBase64(['port=1']);
      const badEnv = env(homes.bad, ports.bad);

      // Act
      const r1 = await bash(
        'server-setup.sh',
        [
          '--role',
          'writer',
          '--server-id',
          '1',
          '--port',
          '3306',
          '--options-b64',
          unknown,
          '--secret-arn',
          SECRET_ARN,
        ],
        badEnv,
      );
      const r2 = await bash(
        'server-setup.sh',
        [
          '--role',
          'writer',
          '--server-id',
          '1',
          '--port',
          '3306',
          '--options-b64',
          managed,
          '--secret-arn',
          SECRET_ARN,
        ],
        badEnv,
      );

      // Assert
      expect(r1.code).toBe(1);
      expect(r1.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^server-setup\.sh: mariadbd did not start: .*unknown variable 'innodb_no_such_option=1'/,
        ),
      ]);
      expect(r2.code).toBe(1);
      expect(r2.stderr.trim()).toMatch(/^server-setup\.sh: option line 1 sets port, which this script sets itself/);
      expect(serverProcessesUnder('mariadbd', homes.bad)).toEqual([]);
    },
  );
});
