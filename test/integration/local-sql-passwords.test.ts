/**
 * The local backend's SQL never puts a password on a command line, nor into an error message:
 * the template's CREATE USER / ALTER USER and the readers' CHANGE MASTER TO ... MASTER_PASSWORD run
 * against real mariadbd servers through the real `mariadb` client. The client is started through a
 * small wrapper script that appends the argv it was given to a file and then execs the real client,
 * so every command line the code produced is on record (a process-list sample could miss a
 * client that lives for milliseconds).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachReader, replicationOptions, replicationStatus } from '../../core/backends/local/cluster';
import { startServerFromTemplate, stopServer, type ServerInfo } from '../../core/backends/local/mariadb-server';
import { checkLocalDependencies, type LocalTools } from '../../core/backends/local/preflight';
import { query, SqlError } from '../../core/backends/local/sql-client';
import { ensureTemplate, LOCAL_LOGINS, type ServerTemplate } from '../../core/backends/local/template';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('local SQL with passwords: stdin, not argv; redacted errors (real mariadbd and mariadb client)', () => {
  let root: string;
  let argvLog: string;
  let tools: LocalTools;
  let template: ServerTemplate;
  const servers: ServerInfo[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ab-sqlpw-'));
    const versions = await checkLocalDependencies();
    argvLog = join(root, 'client-argv.log');
    const wrapper = join(root, 'mariadb-recording');
    writeFileSync(
      wrapper,
      `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${versions.tools.client}' "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    tools = { ...versions.tools, client: wrapper };
    // A template of its own, built through the recording client: its CREATE USER and ALTER USER
    // statements carry the local logins' passwords.
    template = await ensureTemplate(tools, versions.serverVersion, join(root, 'templates'));
  }, 300_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => stopServer(s, { graceMs: 5_000 })));
    rmSync(root, { recursive: true, force: true });
  });

  const argvRecorded = () => readFileSync(argvLog, 'utf8');

  it('builds the template (CREATE USER ... IDENTIFIED BY) without a password on the client command line', () => {
    // Assert: the client ran, and no password of the local logins was ever in its argv.
    expect(argvRecorded()).toContain('--defaults-file=');
    for (const login of Object.values(LOCAL_LOGINS)) expect(argvRecorded()).not.toContain(login.password);
  });

  it(
    'attaches a reader (CHANGE MASTER TO ... MASTER_PASSWORD) without the replication password on a command ' +
      'line, and it replicates',
    async () => {
      // Arrange: a writer and a reader from the template, as startCluster makes them.
      const start = async (role: 'writer' | 'reader', serverId: number) => {
        const server = await startServerFromTemplate(template.datadir, {
          tools,
          instanceId: `pw-${role}`,
          role,
          serverId,
          dir: join(root, role),
          options: replicationOptions(role),
          admin: LOCAL_LOGINS.admin,
        });
        servers.push(server.info);
        return server.info;
      };
      const writer = await start('writer', 1);
      const reader = await start('reader', 2);
      writeFileSync(argvLog, '');

      // Act
      await attachReader(reader, writer);
      await query(writer, 'CREATE TABLE sbtest.pw_probe (id INT PRIMARY KEY); INSERT INTO sbtest.pw_probe VALUES (7)');
      let caughtUp = false;
      for (let i = 0; i < 200 && !caughtUp; i++) {
        caughtUp = (await replicationStatus({ writer, readers: [reader] })).replicas[0]!.caughtUp;
        if (!caughtUp) await sleep(50);
      }

      // Assert
      expect(argvRecorded()).toContain('--defaults-file=');
      expect(argvRecorded()).not.toContain(LOCAL_LOGINS.replication.password);
      expect(caughtUp).toBe(true);
      expect(await query(reader, 'SELECT id FROM sbtest.pw_probe')).toEqual([['7']]);
    },
  );

  it('an SQL error on a statement carrying a password names the error, not the password', async () => {
    // Arrange
    const writer = servers.find((s) => s.role === 'writer')!;
    const secret = "Sec'ret-pw,42";
    const sql = `CREATE USER 'pw_probe'@'localhost' IDENTIFIED BY 'Sec\\'ret-pw,42' BOGUS_CLAUSE`;

    // Act
    const error = await query(writer, sql).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assert
    expect(error).toBeInstanceOf(SqlError);
    const message = (error as SqlError).message;
    expect((error as SqlError).errno).toBe(1064);
    expect(message).toContain("IDENTIFIED BY '***' BOGUS_CLAUSE");
    expect(message).not.toContain('ret-pw,42');
    expect(message).not.toContain(secret);
  });
});
