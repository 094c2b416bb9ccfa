/**
 * experiments/workloads/rw_consistency.lua (S3's consistency levels) under the real sysbench 1.0.20
 * against a real MariaDB: it prepares and runs like oltp_read_write, issues the per-session SET
 * when asked (which MariaDB, having no Aurora variable, rejects: the level is AWS only), refuses
 * an unknown level, and reads each transaction's own write back: on a single server (the writer) no
 * read is stale, and the parser sums the threads' counts.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseSysbenchOutput } from '../../core/sysbench/parser';
import { startMariadb, type ThrowawayMariadb } from '../helpers/sysbench-mariadb';

const script = resolve(__dirname, '../../experiments/workloads/rw_consistency.lua');
// The runner's hook puts client/lua (the shared read-back marker) on the Lua path; run directly, LUA_PATH does.
const luaPath = `${resolve(__dirname, '../../client/lua')}/?.lua;;`;
const password = 'consistency-pw';

describe('rw_consistency.lua', () => {
  let db: ThrowawayMariadb;
  const sysbench = (args: string[]) => {
    const r = spawnSync(
      'sysbench',
      [
        script,
        '--db-driver=mysql',
        '--mysql-host=127.0.0.1',
        `--mysql-port=${db.port}`,
        '--mysql-user=sbtest',
        `--mysql-password=${password}`,
        '--mysql-db=sbtest',
        '--tables=1',
        '--table-size=200',
        ...args,
      ],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LUA_PATH: luaPath } },
    );
    return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
  };

  beforeAll(async () => {
    db = await startMariadb({ password });
    const prepared = sysbench(['prepare']);
    if (prepared.code !== 0) throw new Error(`prepare failed: ${prepared.out}`);
  });
  afterAll(async () => {
    await db.stop();
  });

  it('runs the oltp_read_write transaction with the server default level', () => {
    // Act
    const r = sysbench(['--threads=2', '--time=2', '--range_selects=off', '--point_selects=4', 'run']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/transactions:\s+[1-9]\d*/);
    expect(Number(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1 WHERE id <= 200').trim())).toBe(200);
  });

  it("reads every transaction's write back in the same session and counts no stale read on the writer", () => {
    // Arrange: no marker rows left by the runs above.
    db.sql('DELETE FROM sbtest.sbtest1 WHERE id > 200');

    // Act
    const r = sysbench(['--threads=3', '--time=2', '--range_selects=off', '--point_selects=2', 'run']);
    const parsed = parseSysbenchOutput(r.out, { exitCode: r.code ?? -1 });

    // Assert: one check per transaction, summed over the three threads, none stale.
    expect(r.code).toBe(0);
    expect(r.out.match(/^\{"aurora_bench_read_back":/gm)).toHaveLength(3);
    expect(parsed.status).toBe('ok');
    expect(parsed.summary!.transactions).toBeGreaterThan(0);
    expect(parsed.readBack).toEqual({ checks: parsed.summary!.transactions, stale: 0, foreign: 0 });
    // Assert: one marker row per thread, above the stock ids, holding that thread's last token.
    const markers = db.sql('SELECT c FROM sbtest.sbtest1 WHERE id > 200').trim().split('\n');
    expect(markers).toHaveLength(3);
    for (const c of markers) expect(c).toMatch(/^rb\d+-\d+:[1-9]\d*$/);
  });

  it('sets aurora_replica_read_consistency per session (rejected by MariaDB: AWS only)', () => {
    // Act
    const r = sysbench(['--threads=1', '--time=1', '--consistency=SESSION', 'run']);
    // Assert
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/aurora_replica_read_consistency/);
  });

  it('refuses an unknown level', () => {
    // Act
    const r = sysbench(['--threads=1', '--time=1', '--consistency=STRONG', 'run']);
    // Assert
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/--consistency must be EVENTUAL, SESSION or GLOBAL, got 'STRONG'/);
  });
});
