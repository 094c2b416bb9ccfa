/**
 * Finds the programs the local backend runs and their versions.
 * A missing one raises a MissingDependencyError that says how to install it, before anything starts.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statfsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { MissingDependencyError, UnsupportedOnBackendError } from '../../backend';
import type { PlanNote } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import { localDataRefusals } from '../../plan/data-bounds';
import { localShape } from './instance-classes';

const execFileAsync = promisify(execFile);

const INSTALL_HINT =
  'install them with `sudo apt-get install -y mariadb-server mariadb-client sysbench` (Debian/Ubuntu) or run ' +
  '`bash scripts/setup.sh`';

export interface LocalTools {
  readonly mariadbd: string;
  readonly installDb: string;
  /** The command-line client: mariadb, or a MariaDB build's mysql. */
  readonly client: string;
  readonly sysbench: string;
  /** The util-linux taskset, for CPU affinity. When it is absent, affinity is skipped with a note. */
  readonly taskset: string | undefined;
}

export interface LocalVersions {
  /**
   * As `mariadbd --version` says, e.g. "10.11.19-MariaDB-0+deb12u1".
   * SELECT VERSION() adds "-log" when the binlog is on.
   */
  readonly serverVersion: string;
  /** e.g. "1.0.20". */
  readonly sysbenchVersion: string;
  readonly tools: LocalTools;
}

/** Server binaries live in sbin, which is often not on a normal user's PATH. */
const EXTRA_DIRS = [
  '/usr/sbin',
  '/usr/local/sbin',
  '/sbin',
  '/usr/local/mysql/bin',
  '/usr/local/mariadb/bin',
  '/opt/homebrew/bin',
  '/usr/local/bin',
];

function searchDirs(): string[] {
  const path = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  return [...new Set([...path, ...EXTRA_DIRS])];
}

/** The first executable named one of `names` on PATH or the sbin dirs, or undefined. */
function findExecutable(names: readonly string[], dirs: readonly string[] = searchDirs()): string | undefined {
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
  }
  return undefined;
}

async function versionOutput(binary: string): Promise<string> {
  const { stdout, stderr } = await execFileAsync(binary, ['--version'], { timeout: 15_000 });
  return (stdout + stderr).trim();
}

/**
 * "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu ..." -> "10.11.19-MariaDB-0+deb12u1".
 * @internal exported for its tests
 */
export function parseServerVersion(text: string): string | undefined {
  return /\bVer\s+(\S+)/.exec(text)?.[1];
}

/**
 * "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)" -> "1.0.20".
 * @internal exported for its tests
 */
export function parseSysbenchVersion(text: string): string | undefined {
  return /sysbench\s+([0-9][0-9A-Za-z.+-]*)/.exec(text)?.[1];
}

/**
 * Finds every program in `dirs`. Throws one MissingDependencyError naming all that are missing.
 * @internal exported for its tests
 */
export function findLocalTools(dirs: readonly string[] = searchDirs()): LocalTools {
  const mariadbd = findExecutable(['mariadbd', 'mysqld'], dirs);
  const installDb = findExecutable(['mariadb-install-db', 'mysql_install_db'], dirs);
  const client = findExecutable(['mariadb', 'mysql'], dirs);
  const sysbench = findExecutable(['sysbench'], dirs);
  const missing = [
    ...(mariadbd ? [] : ['mariadbd (MariaDB server)']),
    ...(installDb ? [] : ['mariadb-install-db']),
    ...(client ? [] : ['mariadb (MariaDB client)']),
    ...(sysbench ? [] : ['sysbench']),
  ];
  if (missing.length > 0 || !mariadbd || !installDb || !client || !sysbench) {
    throw new MissingDependencyError(
      `the local backend needs ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not ` +
        `installed: ${INSTALL_HINT}`,
    );
  }
  return { mariadbd, installDb, client, sysbench, taskset: findExecutable(['taskset'], dirs) };
}

let cached: Promise<LocalVersions> | undefined;

/**
 * Every program found and its version read. MySQL's mysqld is refused, since replication here uses MariaDB's GTIDs.
 * Cached for the process, since the answer does not change during a run.
 */
export function checkLocalDependencies(): Promise<LocalVersions> {
  cached ??= (async () => {
    const tools = findLocalTools();
    const [serverText, sysbenchText] = await Promise.all([
      versionOutput(tools.mariadbd),
      versionOutput(tools.sysbench),
    ]);
    if (!/mariadb/i.test(serverText)) {
      throw new MissingDependencyError(
        `${tools.mariadbd} is not MariaDB ("${serverText}"); the local backend needs MariaDB's server: ${INSTALL_HINT}`,
      );
    }
    const serverVersion = parseServerVersion(serverText);
    if (!serverVersion)
      throw new MissingDependencyError(
        `cannot read the server version from \`${tools.mariadbd} --version\`: "${serverText}"`,
      );
    const sysbenchVersion = parseSysbenchVersion(sysbenchText);
    if (!sysbenchVersion)
      throw new MissingDependencyError(
        `cannot read the version from \`${tools.sysbench} --version\`: "${sysbenchText}"`,
      );
    return { serverVersion, sysbenchVersion, tools };
  })();
  cached.catch(() => {
    cached = undefined; // A later call retries, since the user may have installed it meanwhile.
  });
  return cached;
}

/**
 * The instance classes the local backend has no local shape for, refused before anything starts.
 * Otherwise the run would fail at ProvisionCell, once per cell.
 */
export function localSpecRefusals(spec: Spec): PlanNote[] {
  const notes: PlanNote[] = [];
  spec.variants.forEach((v, i) => {
    try {
      localShape(v.instanceClass, undefined, v.maxAcu);
    } catch (e) {
      if (!(e instanceof UnsupportedOnBackendError)) throw e;
      notes.push({ level: 'refused', path: `variants[${i}].instanceClass`, message: e.message });
    }
  });
  return notes;
}

/** Bytes free to this user under `dir`, or under its nearest existing parent. A run root comes later. */
function freeBytesUnder(dir: string): number | undefined {
  for (let at = dir; ; at = dirname(at)) {
    try {
      const fs = statfsSync(at);
      return fs.bavail * fs.bsize;
    } catch {
      if (dirname(at) === at) return undefined;
    }
  }
}

/**
 * The local backend's refusals, plus a data set larger than the space free under the run root.
 * Every server's datadir lives there.
 */
export function localSpecRefusalsUnder(runRoot: string): (spec: Spec) => PlanNote[] {
  return (spec) => {
    const free = freeBytesUnder(runRoot);
    const room =
      free === undefined
        ? []
        : localDataRefusals(spec, { bytes: free, what: `the space free under the run root ${runRoot}` });
    return [...localSpecRefusals(spec), ...room];
  };
}
