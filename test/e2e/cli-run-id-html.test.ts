/**
 * What the built CLI refuses up front about its own arguments: a --run-id that cannot be one (".",
 * "..", 250 characters) is refused before anything starts, saying what an id may be; `report --html`
 * to a directory or into a folder that does not exist fails in one line, without a stack. No server:
 * the run reported is imported from a recorded sysbench output of test/fixtures.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lakeCli } from '../helpers/lake-cli';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
const LOG = join(REPO, 'test', 'fixtures', 'sysbench', 'versions', 'v1_1_mysql_read_write.log');

let work: string;
let lake: string;

const cli = (args: string[]) => lakeCli(work, lake, args);

const importFlags = ['--experiment', 'ids', '--variant', 'a', '--workload', 'rw', '--instance-class', 'db.r5.large'];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-cli-run-id-'));
  lake = join(work, 'lake');
  mkdirSync(join(work, 'logs'));
  copyFileSync(LOG, join(work, 'logs', 'a.log'));
  writeFileSync(
    join(work, 'exp.json'),
    JSON.stringify({
      name: 'ids',
      engine: { version: '3.04.0' },
      variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
      data: { tables: 1, tableSize: 100 },
      defaults: { durationS: 1 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
    }),
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('arguments refused up front', () => {
  it.each(['.', '..', 'x'.repeat(250), 'a/b'])(
    'refuses --run-id %s for run and import, saying what an id may be',
    (id) => {
      // Act
      const run = cli(['run', 'exp.json', '--run-id', id]);
      const imported = cli(['import', join(work, 'logs'), ...importFlags, '--run-id', id]);

      // Assert
      for (const r of [run, imported]) {
        expect(r.code).not.toBe(0);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(/is not a run id: a run id is 1 to 80 letters, digits/);
      }
      expect(existsSync(lake)).toBe(false);
    },
  );

  it('fails report --html to a directory or into a missing folder in one line, without a stack', () => {
    // Arrange
    const imported = cli(['import', join(work, 'logs'), ...importFlags, '--run-id', 'ids-1']);

    // Act
    const toDirectory = cli(['report', 'ids-1', '--html', work]);
    const toMissing = cli(['report', 'ids-1', '--html', join(work, 'missing', 'r.html')]);

    // Assert
    expect(imported.code).toBe(0);
    expect([toDirectory.code, toMissing.code]).toEqual([1, 1]);
    expect(toDirectory.stderr).toMatch(/is a directory: give a file name/);
    expect(toMissing.stderr).toMatch(/r\.html: cannot write it: its folder does not exist \(ENOENT\)/);
    for (const r of [toDirectory, toMissing]) expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
