/**
 * The results lake on local disk: keys are paths under one directory, the same keys as in S3.
 * Writes are atomic (temp file in the same directory, then rename), so a reader never sees half a
 * file and a crash never leaves one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LakeStore } from '../../backend';

export class LocalLakeStore implements LakeStore {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file of a key; keys may not climb out of the lake. */
  pathOf(key: string): string {
    if (key === '' || key.startsWith('/') || key.split('/').some((part) => part === '..')) {
      throw new Error(`invalid lake key "${key}": keys are relative paths without ".."`);
    }
    const path = resolve(this.root, key);
    if (path !== this.root && !path.startsWith(this.root + sep)) throw new Error(`invalid lake key "${key}"`);
    return path;
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, body);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return await readFile(this.pathOf(key), 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
      throw e;
    }
  }

  /** Every key starting with `prefix` (string prefix, as S3 lists), sorted; temp files excluded. */
  async list(prefix: string): Promise<string[]> {
    // Walk only the deepest directory the prefix names, not the whole lake.
    const slash = prefix.lastIndexOf('/');
    const base = slash >= 0 ? prefix.slice(0, slash + 1) : '';
    const start = base === '' ? this.root : this.pathOf(base.replace(/\/$/, ''));
    const keys: string[] = [];
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return;
        throw e;
      }
      for (const entry of entries) {
        const key = keyPrefix + entry.name;
        if (entry.isDirectory()) {
          if ((key + '/').startsWith(prefix) || prefix.startsWith(key + '/')) await walk(join(dir, entry.name), key + '/');
        } else if (entry.isFile() && key.startsWith(prefix) && !(entry.name.startsWith('.') && entry.name.endsWith('.tmp'))) {
          keys.push(key);
        }
      }
    };
    await walk(start, base);
    return keys.sort();
  }

  describe(): string {
    return pathToFileURL(this.root).href;
  }
}
