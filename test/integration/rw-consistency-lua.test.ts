/**
 * experiments/workloads/rw_consistency.lua (S3's consistency levels) under the real sysbench 1.0.20
 * against a real MariaDB: it prepares and runs like oltp_read_write, issues the per-session SET
 * when asked (which MariaDB, having no Aurora variable, rejects: the level is AWS only), and
 * refuses an unknown level.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { startMariadb, type ThrowawayMariadb } from '../helpers/sysbench-mariadb';

const script = resolve(__dirname, '../../experiments/workloads/rw_consistency.lua');
const password = 'consistency-pw';

describe('rw_consistency.lua', () => {
  let db: ThrowawayMariadb;
  const sysbench = (args: string[]) => {
    const r = spawnSync(
      'sysbench',
      [script, '--db-driver=mysql', '--mysql-host=127.0.0.1', `--mysql-port=${db.port}`, '--mysql-user=sbtest', `--mysql-password=${password}`, '--mysql-db=sbtest', '--tables=1', '--table-size=200', ...args],
      { encoding: 'utf8', timeout: 60_000 },
    );
    return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
  };

  beforeAll(async () => {
    db = await startMariadb({ password });
    const prepared = sysbench(['prepare']);
    if (prepared.code !== 0) throw new Error(`prepare failed: ${prepared.out}`);
  });
  afterAll(async () => {
    await db?.stop();
  });

  it('runs the oltp_read_write transaction with the server default level', () => {
    // Act
    const r = sysbench(['--threads=2', '--time=2', '--range_selects=off', '--point_selects=4', 'run']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/transactions:\s+[1-9]\d*/);
    expect(Number(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1').trim())).toBe(200);
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
