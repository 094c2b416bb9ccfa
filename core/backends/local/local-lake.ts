/**
 * The results lake on local disk, with the same keys as in S3.
 * Writes go to a temp file and are renamed, so a reader never sees half a file and a crash never leaves one.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LakeStore } from '../../backend';
import { AuroraBenchError } from '../../errors';
import {
  LAKE_SCHEMA_VERSION,
  LAKE_VERSION_KEY,
  LakeVersionError,
  lakeVersionOf,
  type LakeVersionRecord,
} from '../../lake/schema';

/** What each write failure means for the lake, in words a user acts on. */
const WRITE_FAILURES: Readonly<Record<string, string>> = {
  EROFS: 'is read-only (EROFS: a read-only file system)',
  EACCES: 'is not writable by you (EACCES: permission denied)',
  EPERM: 'is not writable by you (EPERM: operation not permitted)',
  ENOSPC: 'has no room (ENOSPC)',
  EDQUOT: 'has no room (EDQUOT: the disk quota is used up)',
  EFBIG: 'has no room (EFBIG: the file-size limit is reached)',
  EIO: 'cannot be written (EIO: an input/output error of the disk)',
};

/**
 * A lake write that failed, saying why in the lake's terms. `code` keeps the errno for callers that act on it.
 */
export class LakeWriteError extends AuroraBenchError {
  override readonly name = 'LakeWriteError';
  readonly code: string;

  constructor(lake: string, key: string, cause: NodeJS.ErrnoException) {
    const code = cause.code ?? 'EUNKNOWN';
    super(`the results lake ${lake} ${WRITE_FAILURES[code] ?? `cannot be written (${code})`} writing ${key}`, {
      cause,
      source: lake,
    });
    this.code = code;
  }
}

/**
 * Why `dir` cannot be written, when it cannot. Else undefined.
 * A recursive mkdir on a read-only file system reports ENOENT rather than EROFS, since it tries the deepest first.
 * So that ENOENT is asked again this way.
 */
function whyNotWritable(dir: string): NodeJS.ErrnoException | undefined {
  try {
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'EROFS' || code === 'EACCES' || code === 'EPERM' ? (e as NodeJS.ErrnoException) : undefined;
  }
}

/**
 * `e` as a LakeWriteError when it is a file-system error met writing under `lakeDir` by other means than put.
 * Else `e` itself.
 */
export function asLakeWriteError(lakeDir: string, e: unknown): unknown {
  const errno = e as NodeJS.ErrnoException;
  if (e instanceof AuroraBenchError || typeof errno.code !== 'string' || !/^E[A-Z]+$/.test(errno.code)) return e;
  const root = resolve(lakeDir);
  const key = typeof errno.path === 'string' ? relative(root, errno.path) || '.' : '(a file)';
  return new LakeWriteError(pathToFileURL(root).href, key, errno);
}

/** Whether `e` is a failure to write the lake's disk. The run then cannot record anything more. */
export function isLakeWriteFailure(e: unknown): e is LakeWriteError {
  return e instanceof LakeWriteError;
}

export class LocalLakeStore implements LakeStore {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file of a key. Keys may not climb out of the lake. */
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
    const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(tmp, body);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw this.writeError(key, e);
    }
  }

  /** Exclusive creation is atomic on a local file system, whoever else creates the same name. */
  async createOnce(key: string, body: string): Promise<boolean> {
    const path = this.pathOf(key);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, body, { flag: 'wx' });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw this.writeError(key, e);
    }
  }

  private writeError(key: string, e: unknown): unknown {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === undefined || !/^E[A-Z]+$/.test(code)) return e;
    return new LakeWriteError(
      this.describe(),
      key,
      code === 'ENOENT' ? (whyNotWritable(this.root) ?? (e as NodeJS.ErrnoException)) : (e as NodeJS.ErrnoException),
    );
  }

  /**
   * Before a run starts: the lake directory exists and a file can be written in it.
   * So a read-only or foreign lake is said as such before anything of the run exists.
   */
  async assertWritable(): Promise<void> {
    const probe = `.write-check-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(this.root, { recursive: true });
      await writeFile(join(this.root, probe), '');
    } catch (e) {
      throw this.writeError(probe, e);
    }
    await rm(join(this.root, probe), { force: true });
    await this.upgradeSchema();
  }

  /** The lake's schema version: its record, else 1 for a lake written before versions were recorded. */
  async schemaVersion(): Promise<number> {
    const text = await this.get(LAKE_VERSION_KEY);
    if (text === undefined) return 1;
    return lakeVersionOf(text, join(this.root, LAKE_VERSION_KEY));
  }

  /**
   * Brings the lake up to the version this code writes and records it.
   * It refuses a lake a newer aurora-bench wrote, whose files this code may not write right.
   */
  private async upgradeSchema(): Promise<void> {
    const version = await this.schemaVersion();
    if (version > LAKE_SCHEMA_VERSION) {
      throw new LakeVersionError(
        `the results lake ${this.describe()} is of schema version ${version}, written by a newer aurora-bench; ` +
          `this one writes version ${LAKE_SCHEMA_VERSION}: upgrade aurora-bench, or give --lake another directory`,
      );
    }
    if (version === LAKE_SCHEMA_VERSION) return;
    // From version 1 to 2 no file changes, so only the version is recorded.
    const record: LakeVersionRecord = { schemaVersion: LAKE_SCHEMA_VERSION };
    await this.put(LAKE_VERSION_KEY, JSON.stringify(record) + '\n');
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

  /** Every key starting with `prefix`, as S3 lists them, sorted. Temp files are left out. */
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
          if ((key + '/').startsWith(prefix) || prefix.startsWith(key + '/'))
            await walk(join(dir, entry.name), key + '/');
        } else if (
          entry.isFile() &&
          key.startsWith(prefix) &&
          !(entry.name.startsWith('.') && entry.name.endsWith('.tmp'))
        ) {
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
