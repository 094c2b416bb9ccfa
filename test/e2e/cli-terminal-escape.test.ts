/**
 * Text that came from outside reaches the terminal escaped (the built CLI, core/cli/terminal.ts):
 * an experiment `description` with ESC ] 0 ; title BEL (sets the window title), ESC [ 2 J and
 * ESC [ H (clear the screen, cursor home) and a one-character CSI (U+009B), and log files whose
 * names hold ESC and a line break, brought in by `import` and printed by `report`, `results` and
 * `import` itself. No server: the logs are the recorded sysbench outputs of test/fixtures.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lakeCli } from '../helpers/lake-cli';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
const VERSIONS = join(REPO, 'test', 'fixtures', 'sysbench', 'versions');

const TITLE = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J\u001b[H';
const CSI = '\u009b31m';
/** Every control character a terminal acts on, but the line feed and the tab. */
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let work: string;
let lake: string;

const cli = (args: string[]) => lakeCli(work, lake, args);

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  work = mkdtempSync(join(tmpdir(), 'ab-cli-escape-'));
  lake = join(work, 'lake');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('terminal output escapes control sequences from outside', () => {
  it('import, results and report print hostile file names and description escaped, a name per line', () => {
    // Arrange: two logs, one named with a title sequence, one with a line break that would forge an "ok" line
    const logs = join(work, 'logs');
    mkdirSync(logs);
    const titled = `r5${TITLE}.log`;
    const broken = 'r6g\nok      forged.log';
    copyFileSync(join(VERSIONS, 'v1_1_mysql_read_write.log'), join(logs, titled));
    copyFileSync(join(VERSIONS, 'v1_0_text_around.log'), join(logs, broken));
    const mapping = join(work, 'mapping.yaml');
    writeFileSync(
      mapping,
      JSON.stringify({
        experiment: 'escapes',
        description: `before${TITLE}${CLEAR}${CSI}after`,
        defaults: { workload: 'rw', instanceClass: 'db.r5.large' },
        files: [
          { match: 'r5*', variant: 'r5' },
          { match: 'r6g*', variant: 'r6g' },
        ],
      }),
    );
    // Act
    const imported = cli(['import', logs, '--mapping', mapping, '--run-id', 'escapes-1']);
    const report = cli(['report', 'escapes-1']);
    const sql = cli(['results', '--sql', "select json_extract_string(spec, '$.description') as d from runs"]);
    // Assert: nothing raw reached the terminal, and what was there is shown
    for (const r of [imported, report, sql]) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(RAW_CONTROL);
    }
    expect(imported.stdout).toContain('r5\\x1b]0;pwned\\x07.log');
    expect(imported.stdout).toContain('r6g\\nok      forged.log');
    // the forged line is not a line of its own
    expect(imported.stdout.split('\n').filter((l) => l.startsWith('ok      forged.log'))).toEqual([]);
    expect(imported.stdout.split('\n').filter((l) => l.startsWith('ok '))).toHaveLength(2);
    expect(report.stdout).toContain('before\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x9b31mafter');
    expect(sql.stdout).toMatch(/before\\x1b\]0;pwned/);
  });

  it('an error naming a hostile path is escaped too', () => {
    // Act
    const r = cli(['import', join(work, `missing${CLEAR}\nline.log`), '--experiment', 'x']);
    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toContain('missing\\x1b[2J\\x1b[H\\nline.log: no such file or directory');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
