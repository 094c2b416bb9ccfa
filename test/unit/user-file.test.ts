/**
 * core/user-file.ts and its callers: every file a user names (the spec, a workload's script, the
 * import mapping and logs, the file `parse` reads, a price file) is read only when it is a regular
 * file of bounded size. A special file is refused at once naming the argument or the JSON path:
 * /dev/zero is never read without end, a FIFO never blocks, a directory is no bare EISDIR.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importLogs } from '../../core/cli/import-logs';
import { loadSpecFile, SpecError } from '../../core/experiment/validate';
import { loadPrices } from '../../core/plan/price-file';
import { parseRunnerOutput } from '../../core/sysbench/parse-file';
import { readUserFile, UserFileError } from '../../core/user-file';

const REPO = join(__dirname, '..', '..');
const BUILTIN = join(REPO, 'client', 'workloads');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'user-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function fifo(name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

/** A spec whose one workload runs the custom script `script`. */
function specWithScript(script: string): string {
  const file = join(dir, 'exp.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'custom',
      engine: { version: '3.04.0' },
      variants: [{ name: 'a', instanceClass: 'db.r6g.large' }],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'w', script, threads: [1] }],
    }),
  );
  return file;
}

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe('files a user names', () => {
  it('refuses /dev/zero, a FIFO and a directory at once, and a file over the bound, saying what each is', () => {
    // Arrange
    const pipe = fifo('pipe');
    const big = join(dir, 'big');
    writeFileSync(big, Buffer.alloc(2048));

    // Act
    const reasons = ['/dev/zero', pipe, dir].map((f) => (thrown(() => readUserFile(f, 1024)) as UserFileError).reason);
    const tooBig = thrown(() => readUserFile(big, 1024)) as UserFileError;

    // Assert
    expect(reasons).toEqual([
      'is a character device, not a regular file',
      'is a FIFO (named pipe), not a regular file',
      'is a directory, not a regular file',
    ]);
    expect(tooBig.reason).toBe('is 2048 bytes; at most 1024 bytes is read');
  });

  it('refuses a spec that is a device, naming the file', () => {
    // Act
    const error = thrown(() => loadSpecFile('/dev/zero', BUILTIN));

    // Assert
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems).toEqual([{ path: '', message: 'is a character device, not a regular file' }]);
  });

  it.each([
    ['a directory', (d: string) => (mkdirSync(join(d, 'scan.lua')), 'scan.lua')],
    ['a FIFO', () => (fifo('scan.lua'), 'scan.lua')],
  ])('refuses a workload script that is %s by its JSON path, without a stack', (_what, make) => {
    // Arrange
    const spec = specWithScript(make(dir));

    // Act
    const error = thrown(() => loadSpecFile(spec, BUILTIN));

    // Assert
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems.map((p) => p.path)).toEqual(['workloads[0].script']);
    expect((error as SpecError).message).toMatch(/scan\.lua: is a (directory|FIFO)/);
  });

  it('refuses a device as the file `parse` reads, the import mapping, an imported log and a price file', () => {
    // Act
    const errors = [
      thrown(() => parseRunnerOutput('/dev/zero')),
      thrown(() =>
        importLogs({
          paths: [dir],
          lakeDir: join(dir, 'lake'),
          repoRoot: REPO,
          mappingFile: '/dev/zero',
          flags: {},
          log: () => undefined,
        }),
      ),
      thrown(() =>
        importLogs({
          paths: ['/dev/zero'],
          lakeDir: join(dir, 'lake'),
          repoRoot: REPO,
          flags: { experiment: 'x', variant: 'a', workload: 'w', test: 'oltp_read_only', threads: '1' },
          log: () => undefined,
        }),
      ),
      thrown(() => loadPrices(REPO, '/dev/zero')),
    ];

    // Assert
    expect(errors.map((e) => (e as Error).message)).toEqual([
      expect.stringMatching(/\/dev\/zero: is a character device, not a regular file/),
      expect.stringMatching(/\/dev\/zero.*is a character device, not a regular file/s),
      expect.stringMatching(/\/dev\/zero: is a character device, not a regular file/),
      expect.stringMatching(/\/dev\/zero: is a character device, not a regular file/),
    ]);
  });
});
