/**
 * Every call the local backend makes to a server has a deadline (real mariadbd and mariadb client):
 * a statement of a long-lived session that gets no answer ends the session with an error saying so;
 * the metrics sampler's stop does not wait on a tick blocked on a stopped server; a one-shot query
 * to a stopped server fails at its deadline; and a stopped server is killed, not waited for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopServer, type ServerInfo } from '../../core/backends/local/mariadb-server';
import { ServerMetricsSampler } from '../../core/backends/local/metrics';
import { isAlive } from '../../core/backends/local/processes';
import { query, SqlSession } from '../../core/backends/local/sql-client';
import { startTemplateWriter } from '../helpers/template-server';

let root: string;
let server: ServerInfo;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'ab-sql-deadlines-'));
  server = await startTemplateWriter(root, 'deadline-w');
}, 300_000);

afterEach(async () => {
  if (isAlive(server.pid)) process.kill(server.pid, 'SIGCONT');
  await stopServer(server, { graceMs: 5_000 });
  rmSync(root, { recursive: true, force: true });
});

describe('deadlines on calls to a server', () => {
  it('a session statement not answered within its deadline fails saying so, and ends the session', async () => {
    // Arrange
    const session = new SqlSession(server, { queryTimeoutMs: 1_000 });
    expect(await session.query('SELECT 1')).toEqual([['1']]);
    // Act
    const slow = session.query('SELECT SLEEP(5)');
    // Assert
    await expect(slow).rejects.toThrow(/^the server did not answer within 1 s \(running: SELECT SLEEP\(5\)\)$/);
    expect([session.closed, session.timedOut]).toEqual([true, true]);
    await expect(session.query('SELECT 1')).rejects.toThrow(/did not answer within 1 s/);
    await session.close();
  });

  it('the sampler stops while its tick waits on a stopped server; closing does not wait on the client', async () => {
    // Arrange
    const sampler = new ServerMetricsSampler({ writer: server, readers: [], intervalMs: 200 });
    await sampler.start();
    process.kill(server.pid, 'SIGSTOP');
    // Let a tick start and block on the stopped server.
    await new Promise((r) => setTimeout(r, 600));
    // Act
    const started = Date.now();
    const samples = await sampler.stop();
    // Assert: it returned (the tick was abandoned after stop's short wait, not the statement's 15 s deadline)
    expect(Date.now() - started).toBeLessThan(SqlSession.DEFAULT_QUERY_TIMEOUT_MS);
    expect(Array.isArray(samples)).toBe(true);
  });

  it('a one-shot query to a stopped server fails at its deadline; stopping a stopped server kills it', async () => {
    // Arrange
    process.kill(server.pid, 'SIGSTOP');
    // Act / Assert
    await expect(query(server, 'SELECT 1', { timeoutMs: 1_000 })).rejects.toThrow(
      /^the server did not answer within 1 s \(running: SELECT 1\)$/,
    );
    expect(await stopServer(server, { graceMs: 30_000, keepDir: true })).toBe('killed');
    expect(isAlive(server.pid)).toBe(false);
  });
});
