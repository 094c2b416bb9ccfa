/**
 * `results --sql` through the built CLI, as a hostile user would try it: a query that writes into
 * the lake (EXPLAIN ANALYZE runs the COPY it explains), DuckDB's temp directory (./.tmp for an
 * in-memory database, which DuckDB adds to the folders a query may open), and --export aimed into
 * the lake, directly, through `..` or through a link. Each must leave the lake as it was and read
 * nothing outside it. No server is started.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, FaultWorld } from '../helpers/fault-cli';
import { DT, runRow, stepRow, writeRun, writeStepTable } from '../helpers/lake-fixtures';

let world: FaultWorld;
let partition: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
});
beforeEach(() => {
  world = new FaultWorld('ab-sql-escapes-');
  writeRun(world.lake, runRow({ run_id: 'victim' }));
  writeStepTable(world.lake, 'steps', [stepRow({ run_id: 'victim', variant: 'a', step_id: 'ro-t1', tps: 100 })]);
  partition = join(world.lake, 'tables', 'steps', `dt=${DT}`);
});
afterEach(() => {
  world.tearDown();
  rmSync(world.work, { recursive: true, force: true });
});

/** Every file under the lake with its content: what a refused command must leave as it was. */
function lakeFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(world.lake, { recursive: true, encoding: 'utf8' })) {
    const path = join(world.lake, f);
    if (statSync(path).isFile()) out[f] = readFileSync(path, 'utf8');
  }
  return out;
}

/** The refusal is one line of stderr, no stack trace, nothing on stdout, exit 1. */
function expectRefused(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('results --sql writes nothing into the lake', () => {
  it.each([
    ['plants a Parquet file', () => `${partition}/planted.parquet`, ''],
    ['overwrites a run’s step file', () => `${partition}/${readdirSync(partition)[0]!}`, ' (FORMAT json)'],
  ])('EXPLAIN ANALYZE COPY that %s is refused; the lake is as it was', (_what, target, format) => {
    // Arrange
    const before = lakeFiles();
    const sql =
      `EXPLAIN ANALYZE COPY (SELECT 'victim' AS run_id, 'a' AS variant, 'forged' AS step_id, 99999 AS tps) ` +
      `TO '${target()}'${format}`;
    // Act
    const r = world.cli(['results', '--sql', sql]);
    // Assert
    expectRefused(r, /results --sql runs read-only queries.*: an EXPLAIN statement is refused/);
    expect(lakeFiles()).toEqual(before);
    expect(world.lakeQuery('select step_id, tps from steps')).toEqual([{ step_id: 'ro-t1', tps: 100 }]);
  });
});

describe('DuckDB’s temp directory is its own', () => {
  it('a file in ./.tmp can be neither read nor written; the temp directory given is gone afterwards', () => {
    // Arrange
    mkdirSync(join(world.work, '.tmp'));
    writeFileSync(join(world.work, '.tmp', 'secret.txt'), 'tmp secret\n');
    // Act
    const reads = ['.tmp/secret.txt', join(world.work, '.tmp', 'secret.txt')].map((path) =>
      world.cli(['results', '--json', '--sql', `SELECT content FROM read_text('${path}')`]),
    );
    const write = world.cli(['results', '--sql', `EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '.tmp/written.csv'`]);
    const [setting] = world.lakeQuery<{ dirs: string[] }>("SELECT current_setting('allowed_directories') AS dirs");
    // Assert
    for (const r of reads) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Permission Error: Cannot access file/);
      expect(r.stdout + r.stderr).not.toContain('tmp secret');
    }
    expect(write.code).toBe(1);
    expect(readdirSync(join(world.work, '.tmp'))).toEqual(['secret.txt']);
    const tables = join(world.lake, 'tables') + '/';
    expect(setting!.dirs).toContain(tables);
    expect(setting!.dirs).not.toContain(join(world.work, '.tmp') + '/');
    // Every other folder DuckDB was allowed is its private temp directory, removed when the lake closed.
    expect(setting!.dirs.filter((d) => d !== tables && existsSync(d))).toEqual([]);
  });
});

describe('results --sql --export never writes into the lake', () => {
  it.each([
    ['a path inside the lake', () => join(partition, 'forged.jsonl')],
    ['a path that climbs back into the lake', () => join(world.work, 'elsewhere', '..', 'lake', 'tables', 'f.jsonl')],
    [
      'a file in a folder that links into the lake',
      () => {
        symlinkSync(partition, join(world.work, 'into-lake'));
        return join(world.work, 'into-lake', 'forged.jsonl');
      },
    ],
    [
      'a path through a link to the lake itself',
      () => {
        symlinkSync(world.lake, join(world.work, 'lake-link'));
        return join(world.work, 'lake-link', 'forged.jsonl');
      },
    ],
  ])('refuses %s; nothing is written', (_what, target) => {
    // Arrange
    mkdirSync(join(world.work, 'elsewhere'));
    const file = target();
    const before = lakeFiles();
    const sql = "SELECT 'victim' AS run_id, 'a' AS variant, 'forged' AS step_id, 99999 AS tps";
    // Act
    const r = world.cli(['results', '--sql', sql, '--export', file]);
    // Assert
    expectRefused(r, /--export .*: it is inside the results lake .*: choose a file outside it/);
    expect(lakeFiles()).toEqual(before);
    expect(world.lakeQuery('select step_id, tps from steps')).toEqual([{ step_id: 'ro-t1', tps: 100 }]);
  });

  it('writes an export outside the lake', () => {
    // Act
    const file = join(world.work, 'tps.csv');
    const r = world.cli(['results', '--sql', 'SELECT step_id, tps FROM steps', '--export', file]);
    // Assert
    expect(r.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('step_id,tps\nro-t1,100\n');
  });
});

describe("DuckDB's private temp folder", () => {
  it('a query killed with SIGKILL leaves its folder, and the next query removes it', async () => {
    const tmp = join(world.work, 'tmp');
    mkdirSync(tmp);
    const folders = () => readdirSync(tmp).filter((n) => n.startsWith('ab-duckdb-'));
    const query = world.background(['results', '--sql', 'select sum(range) from range(100000000000)'], {
      TMPDIR: tmp,
    });
    for (let i = 0; i < 600 && folders().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(folders()).toHaveLength(1);
    query.child.kill('SIGKILL');
    await query.exited;
    expect(folders()).toHaveLength(1);
    const next = spawnSync(process.execPath, [CLI, 'results', '--sql', 'select 1 as one'], {
      cwd: world.work,
      env: world.env({ TMPDIR: tmp }),
      encoding: 'utf8',
    });
    expect(next.status).toBe(0);
    expect(folders()).toEqual([]);
  });
});
