/**
 * A run root too small for a server's datadir: the copy from the server template fails as one line
 * saying so, with what it needs and what is free, where cp writes a line per file it could not
 * write (thousands of characters, kept in the run row); and nothing half-copied stays. Mounts a
 * tmpfs, so it runs as root as the rest of this layer does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyDatadir } from '../../core/backends/local/copy-datadir';

let work: string;
let mounted: string | undefined;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'abr-copy-full-'));
});
afterEach(() => {
  if (mounted !== undefined) execFileSync('umount', ['-l', mounted]);
  mounted = undefined;
  rmSync(work, { recursive: true, force: true });
});

it('fails a copy to a full run root in one line: what it needs, what is free; nothing half-copied stays', async () => {
  // Arrange: a template of 200 files of 20 KB of random bytes (no holes: 4 MB on disk), a 1 MiB run root.
  const template = join(work, 'template');
  mkdirSync(join(template, 'sbtest'), { recursive: true });
  for (let i = 0; i < 200; i++) writeFileSync(join(template, 'sbtest', `t${i}.ibd`), randomBytes(20_000));
  const root = join(work, 'root');
  mkdirSync(root);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', root], { stdio: 'pipe' });
  mounted = root;
  const target = join(root, 'server', 'data');
  mkdirSync(join(root, 'server'));

  // Act
  const error = await copyDatadir(template, target).then(
    () => undefined,
    (e: unknown) => e as Error,
  );

  // Assert
  expect(error?.message).toMatch(
    new RegExp(`^no space left on device copying the server template to ${target}: [0-9]+ MB needed, [0-9]+ MB free$`),
  );
  expect(error?.name).toBe('DatadirCopyError');
  expect(existsSync(target)).toBe(false);
});
