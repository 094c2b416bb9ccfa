import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyDatadir } from '../../core/backends/local/copy-datadir';

describe('copyDatadir', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'abr-copy-datadir-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /** A datadir-like tree: a 4 MiB log of zeros around a few bytes of records, a nested table file, modes. */
  function template(): string {
    const src = join(work, 'template');
    mkdirSync(join(src, 'mysql'), { recursive: true });
    const log = Buffer.alloc(4 * 1024 * 1024);
    log.write('redo records', 8192);
    writeFileSync(join(src, 'ib_logfile0'), log);
    writeFileSync(join(src, 'mysql', 'user.MAI'), 'table');
    chmodSync(join(src, 'ib_logfile0'), 0o660);
    chmodSync(join(src, 'mysql'), 0o700);
    return src;
  }

  it('copies every file with its bytes and mode, and writes the runs of zeros as holes', async () => {
    const src = template();
    const dst = join(work, 'server', 'data');
    mkdirSync(join(work, 'server'));

    await copyDatadir(src, dst);

    expect(readFileSync(join(dst, 'ib_logfile0')).equals(readFileSync(join(src, 'ib_logfile0')))).toBe(true);
    expect(readFileSync(join(dst, 'mysql', 'user.MAI'), 'utf8')).toBe('table');
    expect(statSync(join(dst, 'ib_logfile0')).mode & 0o777).toBe(0o660);
    expect(statSync(join(dst, 'mysql')).mode & 0o777).toBe(0o700);
    // st_blocks counts 512-byte units actually allocated: a few blocks, not the 8,192 of 4 MiB written out.
    expect(statSync(join(dst, 'ib_logfile0')).blocks).toBeLessThan(1024);
  });

  it('refuses a target that exists, naming it, and leaves it as it was', async () => {
    const src = template();
    const dst = join(work, 'data');
    mkdirSync(dst);
    writeFileSync(join(dst, 'keep'), 'x');

    await expect(copyDatadir(src, dst)).rejects.toThrow(`${dst} already exists`);
    expect(readFileSync(join(dst, 'keep'), 'utf8')).toBe('x');
    expect(() => statSync(join(dst, 'ib_logfile0'))).toThrow();
  });

  it('says what failed when cp does (a source that is missing)', async () => {
    await expect(copyDatadir(join(work, 'missing'), join(work, 'data'))).rejects.toThrow(
      /cannot copy .*missing to .*data: cp: cannot stat/,
    );
  });
});
