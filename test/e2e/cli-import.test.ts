/**
 * `aurora-bench import` as a user runs it (the built CLI): the recorded sysbench logs of
 * test/fixtures/sysbench/versions (1.0.20 and 1.1.0, mysql and pgsql drivers, one with the
 * engineer's own text around it) brought into a lake as two runs, then `results` and `compare` on
 * them; a log that does not parse, a run id the lake has and a bad mapping file change nothing.
 * No server: the logs are the recorded outputs.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lakeCli } from '../helpers/lake-cli';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
const VERSIONS = join(REPO, 'test', 'fixtures', 'sysbench', 'versions');

let work: string;
let lake: string;

const cli = (args: string[]) => lakeCli(work, lake, args);

/** Copies fixtures into a folder under new names (the names the mapping reads). */
function logsDir(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [to, from] of Object.entries(files)) copyFileSync(join(VERSIONS, `${from}.log`), join(dir, to));
  return dir;
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-cli-import-'));
  lake = join(work, 'lake');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('aurora-bench import', () => {
  it('refuses logs of which one does not parse, printing every status, and creates nothing', () => {
    // Arrange
    const dir = logsDir('mixed', {
      'r5_2024-03-01.log': 'v1_0_pgsql_read_write',
      'r5_2019-01-01.log': 'v0_5_constructed',
    });
    // Act
    const r = cli(['import', dir, '--experiment', 'imported', '--variant', 'r5', '--workload', 'rw']);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^failed {2}.*r5_2019-01-01\.log → r5-r1 rw-t8 \(sysbench 0\.5\): sysbench 0\.5 output is not supported/m,
    );
    expect(r.stdout).toMatch(/^ok {6}.*r5_2024-03-01\.log → r5-r1 rw-t2 \(sysbench 1\.0\.20, 682\.32 tps/m);
    expect(r.stderr).toMatch(
      new RegExp(
        /1 of 2 logs did not parse \(.*r5_2019-01-01\.log\): nothing was imported; remove it from the/.source +
          / paths, or pass --allow-failed/.source,
      ),
    );
    expect(existsSync(lake)).toBe(false);
  });

  it('keeps a log that does not parse as a failed step with --allow-failed, with the parser’s reason', () => {
    // Arrange
    const dir = logsDir('allow-failed', { 'r5_ok.log': 'v1_0_pgsql_read_write', 'r5_old.log': 'v0_4_constructed' });
    const ownLake = join(work, 'allow-failed-lake');
    // Act
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'import',
        dir,
        '--experiment',
        'imported',
        '--variant',
        'r5',
        '--workload',
        'rw',
        '--date',
        '2024-01-01',
        '--run-id',
        'with-failed',
        '--allow-failed',
        '--lake',
        ownLake,
      ],
      {
        cwd: work,
        encoding: 'utf8',
      },
    );
    const results = spawnSync(process.execPath, [CLI, 'results', '--run', 'with-failed', '--json', '--lake', ownLake], {
      cwd: work,
      encoding: 'utf8',
    });
    // Assert
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^failed {2}.*r5_old\.log → r5-r1 rw-t8 \(sysbench 0\.4\.12\): sysbench 0\.4\.12 output is not supported/m,
    );
    expect(r.stdout).toMatch(/imported 2 logs as run with-failed/);
    const rows = JSON.parse(results.stdout) as { step_id: string; status: string; error: string | null }[];
    expect(rows.map((s) => [s.step_id, s.status])).toEqual([
      ['rw-t2', 'ok'],
      ['rw-t8', 'failed'],
    ]);
    expect(rows[1]!.error).toMatch(/sysbench 0\.4\.12 output is not supported/);
  });

  it('names the mapping file and the JSON path of a bad mapping, and creates nothing', () => {
    // Arrange
    const dir = logsDir('bad-mapping', { 'r5.log': 'v1_0_pgsql_read_write' });
    const mapping = join(work, 'bad.json');
    writeFileSync(
      mapping,
      JSON.stringify({ experiment: 'imported', files: [{ match: 'r5*', variant: 'R5!', threads: 'two' }] }),
    );
    // Act
    const r = cli(['import', dir, '--mapping', mapping]);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${mapping}: invalid import mapping`);
    expect(r.stderr).toMatch(/- files\[0\]\.variant: lowercase letters/);
    expect(r.stderr).toMatch(/- files\[0\]\.threads: expected number, got "two"/);
    expect(existsSync(lake)).toBe(false);
  });

  it('imports 1.0 and 1.1 logs of both drivers as runs results and compare read; a re-import is refused', () => {
    // Arrange: run A from a mapping file's pattern, run B from flags.
    const a = logsDir('a', {
      'r5_rw_2024-03-01.log': 'v1_0_pgsql_read_write',
      'r6g_rw_2024-03-01.log': 'v1_1_mysql_read_write',
    });
    const b = logsDir('b', { 'r5_rw.log': 'v1_1_pgsql_read_write', 'r6g_rw.log': 'v1_0_text_around' });
    const mapping = join(work, 'mapping.yaml');
    writeFileSync(
      mapping,
      [
        'experiment: imported',
        'defaults: { workload: rw, instanceClass: db.r5.large }',
        'files:',
        '  - match: "{variant}_rw_{date}.log"',
        '  - match: "r6g_*"',
        '    instanceClass: db.r6g.large',
        '',
      ].join('\n'),
    );
    // Act
    const importA = cli(['import', a, '--mapping', mapping, '--run-id', 'imported-a']);
    const again = cli(['import', a, '--mapping', mapping, '--run-id', 'imported-a']);
    const importB = cli([
      'import',
      join(b, 'r5_rw.log'),
      join(b, 'r6g_rw.log'),
      '--experiment',
      'imported',
      '--workload',
      'rw',
      '--variant-pattern',
      'r5=r5_*',
      '--variant-pattern',
      'r6g=r6g_*',
      '--date',
      '2024-03-08',
      '--run-id',
      'imported-b',
    ]);
    const results = cli(['results', '--run', 'imported-a', '--json']);
    const compare = cli(['compare', 'imported-a', 'imported-b']);
    // Assert
    expect(importA.stderr).toBe('');
    expect(importA.code).toBe(0);
    expect(importA.stdout).toMatch(/^ok .*r5_rw_2024-03-01\.log → r5-r1 rw-t2 \(sysbench 1\.0\.20, 682\.32 tps/m);
    expect(importA.stdout).toMatch(/^ok .*r6g_rw_2024-03-01\.log → r6g-r1 rw-t2 \(sysbench 1\.1\.0, 1079\.54 tps/m);
    expect(importA.stdout).toMatch(
      /imported 2 logs as run imported-a \(experiment imported, 2 cells, backend import\)/,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/run imported-a is already in the lake .*pick another --run-id; nothing was imported/);
    expect(importB.code).toBe(0);
    expect(importB.stdout).toMatch(/r6g_rw\.log → r6g-r1 rw-t2 \(sysbench 1\.0\.20, 2234\.85 tps/);
    const rows = JSON.parse(results.stdout) as {
      variant: string;
      tps: number;
      lat_pct: number;
      lat_p99_ms: number | null;
      instance_class: string;
      started_at: string;
      interval_count: number;
    }[];
    expect(rows.map((s) => [s.variant, s.instance_class, s.tps, s.started_at, s.interval_count])).toEqual([
      ['r5', 'db.r5.large', 682.32, '2024-03-01T00:00:00.000Z', 3],
      ['r6g', 'db.r6g.large', 1079.54, '2024-03-01T00:00:00.000Z', 3],
    ]);
    expect(rows[1]!.lat_p99_ms).toBeCloseTo(8.895, 3);
    expect(compare.code).toBe(0);
    expect(compare.stdout).toMatch(/A: imported-a \(imported, import, started 2024-03-01/);
    expect(compare.stdout).toMatch(/B: imported-b \(imported, import, started 2024-03-08/);
    // B/A of the two r6g logs: 2234.85 / 1079.54 = 207.0%.
    expect(compare.stdout).toMatch(/rw t2 \[r6g\] +│ +1\/1 │ 207\.0%/);
    expect(readdirSync(lake).sort()).toEqual(['raw', 'tables']);
  });

  it('imports a run per day with --run-per-date, repeats numbered within each day; history shows each day', () => {
    // Arrange: two logs of 2024-02-01 and one of 2024-02-02, the date in the file name.
    const dir = logsDir('daily', {
      'r5-2024-02-01-a.log': 'v1_0_pgsql_read_write',
      'r5-2024-02-01-b.log': 'v1_1_mysql_read_write',
      'r5-2024-02-02-a.log': 'v1_1_mysql_read_write',
    });
    const mapping = join(work, 'daily.json');
    writeFileSync(
      mapping,
      JSON.stringify({
        experiment: 'daily',
        defaults: { workload: 'rw' },
        files: [{ match: '{variant}-{date}-*.log' }],
      }),
    );
    // Act
    const r = cli(['import', dir, '--mapping', mapping, '--run-per-date', '--run-id', 'daily']);
    const history = cli(['history', 'daily']);
    // Assert
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/r5-2024-02-01-a\.log → r5-r1 rw-t2/);
    expect(r.stdout).toMatch(/r5-2024-02-01-b\.log → r5-r2 rw-t2/);
    expect(r.stdout).toMatch(/r5-2024-02-02-a\.log → r5-r1 rw-t2/);
    expect(r.stdout).toMatch(/imported 2 logs as run daily-2024-02-01 .*\nimported 1 log as run daily-2024-02-02 /);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/runs: 2 on import, 2024-02-01T00:00:00\.000Z … 2024-02-02T00:00:00\.000Z/);
  });

  it('removes the staging folders of killed imports, at the next import and at cleanup, never a live one', () => {
    // Arrange: a killed import's folder (its pid ended), one whose pid a later process reuses (this
    // process's pid with another start time) and a live import's (this process, its own start time)
    const staging = join(lake, '.staging');
    const ownStart = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]!;
    const folder = (name: string) => {
      mkdirSync(join(staging, name, 'tables'), { recursive: true });
      writeFileSync(join(staging, name, 'tables', 'x.jsonl'), '{}\n');
      return name;
    };
    folder(`import-${spawnSync('true').pid}-0123abcd`);
    folder(`import-${process.pid}-1-4567abcd`);
    const live = folder(`import-${process.pid}-${ownStart}-89abcdef`);
    const dir = logsDir('staged', { 'r5_2024-03-01.log': 'v1_0_pgsql_read_write' });
    // Act
    const imported = cli(['import', dir, '--experiment', 'staged', '--variant', 'r5', '--workload', 'rw']);
    const afterImport = readdirSync(staging).sort();
    const killedLater = folder(`import-${spawnSync('true').pid}-1-fedcba98`);
    const cleanup = spawnSync(process.execPath, [CLI, 'cleanup', '--lake', lake], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, AURORA_BENCH_RUN_ROOT: join(work, 'runs') },
    });
    // Assert
    expect(imported.code).toBe(0);
    expect(afterImport).toEqual([live]);
    expect(cleanup.status).toBe(0);
    expect(cleanup.stdout).toContain(join(staging, killedLater));
    expect(readdirSync(staging)).toEqual([live]);
  });
});
