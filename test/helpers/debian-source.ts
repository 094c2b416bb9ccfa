/**
 * Debian source packages for tests that build third-party code the way a client does: a private
 * apt configuration (its own deb-src list, package lists and cache under a temp dir) made from
 * this machine's own apt sources, so nothing of the system's apt state changes and no mirror is
 * named here. deb822 files (/etc/apt/sources.list.d/*.sources: "Types: deb" becomes
 * "Types: deb-src") and one-line lists (sources.list, *.list: "deb " becomes "deb-src ") are both
 * read. `apt-get source --download-only` then fetches the .dsc, the upstream .orig tarball and
 * the Debian changes without unpacking or patching anything.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const APT_DIR = '/etc/apt';

/** deb-src entries for every deb entry of this machine's apt sources. */
function debSrcSources(): { deb822: string[]; oneLine: string[] } {
  const deb822: string[] = [];
  const oneLine: string[] = [];
  const partsDir = join(APT_DIR, 'sources.list.d');
  const files = [join(APT_DIR, 'sources.list'), ...(existsSync(partsDir) ? readdirSync(partsDir).map((f) => join(partsDir, f)) : [])];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      // Stanzas are separated by blank lines; only those offering binary packages are turned.
      for (const stanza of text.split(/\n\s*\n/)) {
        if (/^Types:.*\bdeb\b/m.test(stanza) && !/^Enabled:\s*no/im.test(stanza)) deb822.push(stanza.replace(/^Types:.*$/m, 'Types: deb-src').trim());
      }
    } else if (file.endsWith('.list') || file === join(APT_DIR, 'sources.list')) {
      for (const line of text.split('\n')) if (/^\s*deb\s/.test(line)) oneLine.push(line.replace(/^\s*deb\s/, 'deb-src '));
    }
  }
  return { deb822, oneLine };
}

export interface DebianSourceDownload {
  /** Where the files are. */
  readonly dir: string;
  /** The upstream tarball (<package>_<version>.orig.tar.*). */
  readonly origTarball: string;
  /** The Debian version that was downloaded. */
  readonly version: string;
}

/**
 * Downloads a source package with `apt-get source --download-only` through a private apt
 * configuration under `workDir`. Throws with apt's message when the machine has no deb entries or
 * the download fails (no skipping).
 */
export function downloadDebianSource(pkg: string, workDir = mkdtempSync(join(tmpdir(), 'debian-source-'))): DebianSourceDownload {
  const { deb822, oneLine } = debSrcSources();
  if (deb822.length === 0 && oneLine.length === 0)
    throw new Error(`no "deb" entry in ${APT_DIR}/sources.list or ${APT_DIR}/sources.list.d/: cannot make a deb-src list for ${pkg}`);
  const apt = join(workDir, 'apt');
  for (const d of ['parts', 'lists/partial', 'archives/partial', 'download']) mkdirSync(join(apt, d), { recursive: true });
  if (deb822.length > 0) writeFileSync(join(apt, 'parts', 'deb-src.sources'), deb822.join('\n\n') + '\n');
  if (oneLine.length > 0) writeFileSync(join(apt, 'parts', 'deb-src.list'), oneLine.join('\n') + '\n');
  const options = [
    '-o',
    'Dir::Etc::sourcelist=/dev/null',
    '-o',
    `Dir::Etc::sourceparts=${join(apt, 'parts')}`,
    '-o',
    `Dir::State::Lists=${join(apt, 'lists')}`,
    '-o',
    `Dir::Cache::archives=${join(apt, 'archives')}`,
    '-o',
    'Dir::Cache::pkgcache=',
    '-o',
    'Dir::Cache::srcpkgcache=',
    // apt drops privileges to _apt for downloads; the private dirs belong to whoever runs the test.
    '-o',
    'APT::Sandbox::User=root',
  ];
  const dir = join(apt, 'download');
  try {
    execFileSync('apt-get', [...options, '-q', 'update'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    execFileSync('apt-get', [...options, '-q', 'source', '--download-only', pkg], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`apt-get source --download-only ${pkg} failed: ${err.stderr?.toString().trim() || err.message}`, { cause: e });
  }
  const files = readdirSync(dir);
  const orig = files.find((f) => f.startsWith(`${pkg}_`) && /\.orig\.tar\.(gz|xz|bz2)$/.test(f));
  const dsc = files.find((f) => f.endsWith('.dsc'));
  if (!orig || !dsc) throw new Error(`apt-get source ${pkg} left no .orig tarball and .dsc in ${dir} (got ${files.join(', ') || 'nothing'})`);
  const version = /^Version:\s*(\S+)/m.exec(readFileSync(join(dir, dsc), 'utf8'))?.[1] ?? 'unknown';
  return { dir, origTarball: join(dir, orig), version };
}
