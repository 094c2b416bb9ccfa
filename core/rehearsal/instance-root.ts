/**
 * The machine an emulated EC2 instance boots: a Debian 12 root made by debootstrap from Debian's archive.
 * Each instance mounts it as an overlay, so the cached root stays clean.
 * The user data and SSM commands run in it with chroot, so sysbench, the AWS CLI and MariaDB are Debian's.
 *
 * Layers are cached and rebuilt when absent, so a clean machine works.
 * A build goes to a temporary name and is renamed into place, so no build leaves half a root.
 * - base-<key> is `debootstrap --variant=minbase` plus what the boot needs before its own apt-get.
 * - packages-<key> adds the user data's package list, so runs do not spend minutes per instance in dpkg.
 *   test/integration/client-boot.test.ts boots from the clean base instead.
 * Keys hash what each layer is made of.
 *
 * Mounting needs root, so the rehearsal refuses to start without it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreateBucketCommand,
  PutObjectCommand,
  type BucketLocationConstraint,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mountsUnder, processesInRoot, unmountUnder } from '../backends/local/mounts';

// `cleanup` uses these from the local backend.
export { processesInRoot, unmountUnder };

const run = promisify(execFile);

/** Debian 12, the release of the AMI. */
const DEBIAN_SUITE = 'bookworm';
/** deb.debian.org redirects to a mirror near the caller. */
const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
/**
 * What Debian's EC2 AMIs carry that the boot uses before its apt-get.
 * debootstrap's minbase has neither curl nor the CA certificates.
 */
const AMI_PACKAGES = ['ca-certificates', 'curl'] as const;
/** The AMI's apt sources in deb822, as bookworm writes them. */
const SOURCES = [
  `Types: deb\nURIs: ${DEBIAN_MIRROR}\nSuites: ${DEBIAN_SUITE} ${DEBIAN_SUITE}-updates\nComponents: ` +
    `main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`,
  `Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: ${DEBIAN_SUITE}-security\nComponents: ` +
    `main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`,
].join('\n');
/**
 * A policy-rc.d that denies every service start, so no postinst starts anything while a layer is built.
 * Exit status 101 means "action forbidden". See invoke-rc.d(8), "POLICY LAYER".
 */
const DENY_STARTS = '#!/bin/sh\nexit 101\n';
/** Where the rehearsal's stand-ins record what they were asked, inside the root.
 * @internal exported for its tests (a test seam)
 */
export const STAND_IN_RECORD_DIR = '/run/aurora-bench-rehearsal';
/** The file the rehearsal's SSM agent package writes when its service starts. */
export const AGENT_STARTED_FILE = '/var/lib/amazon/ssm/aurora-bench-rehearsal-agent-started';
/** Where the emulated cloud-init puts the user data it runs. */
export const USER_DATA_SCRIPT = '/var/lib/cloud/instance/scripts/part-001';

export type DebianArch = 'amd64' | 'arm64';

/** This machine's architecture as Debian names it. */
function debianArch(): DebianArch {
  if (process.arch === 'x64') return 'amd64';
  if (process.arch === 'arm64') return 'arm64';
  throw new Error(`the rehearsal's instance roots need an amd64 or arm64 machine, not ${process.arch}`);
}

function defaultRootCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CACHE_HOME'];
  return join(base !== undefined && base !== '' ? base : join(homedir(), '.cache'), 'aurora-bench', 'debian-root');
}

function key(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
}

/** Why this machine cannot mount instance roots, or undefined when it can. */
export function rootsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0)
    return 'the instance roots are mounted with overlayfs and chroot, which needs root (run the rehearsal as root)';
  for (const tool of ['debootstrap', 'chroot', 'mount', 'umount', 'dpkg-deb']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return `${tool} is not installed (scripts/setup.sh --test installs debootstrap)`;
  }
  return undefined;
}

export interface RootCacheOptions {
  readonly cacheDir?: string;
  /** The root's architecture. Another one than this machine's runs under qemu-user. */
  readonly arch?: DebianArch;
  readonly log?: (line: string) => void;
}

/** The binfmt_misc entry Debian's qemu-user-static registers for each architecture. */
const QEMU_BINFMT: Readonly<Record<DebianArch, string>> = { amd64: 'qemu-x86_64', arm64: 'qemu-aarch64' };

/**
 * Why this machine cannot run a root of `arch`, or undefined when it can.
 * A foreign architecture needs a qemu-user-static binfmt_misc entry with the F flag.
 * So the chroot needs no copy of qemu inside it. See binfmt-misc.rst, "fix binary".
 */
export function foreignArchUnavailable(arch: DebianArch): string | undefined {
  if (arch === debianArch()) return undefined;
  const entry = join('/proc/sys/fs/binfmt_misc', QEMU_BINFMT[arch]);
  let text: string;
  try {
    text = readFileSync(entry, 'utf8');
  } catch {
    return (
      `${entry} does not exist: ${arch} binaries cannot run on this ${debianArch()} machine (install ` +
      'qemu-user-static and binfmt-support; binfmt_misc must be mounted on /proc/sys/fs/binfmt_misc)'
    );
  }
  if (!/^enabled$/m.test(text)) return `${entry} is disabled`;
  if (!/^flags: .*F/m.test(text)) return `${entry} lacks the F flag: a chroot could not find its interpreter`;
  return undefined;
}

/** Runs a script in the root and fails with its output's tail. */
async function inRoot(root: string, script: string, timeoutMs = 1_800_000): Promise<void> {
  try {
    await run(
      'chroot',
      [
        root,
        '/usr/bin/env',
        '-i',
        'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
        'HOME=/root',
        'LANG=C.UTF-8',
        'DEBIAN_FRONTEND=noninteractive',
        '/bin/sh',
        '-ec',
        script,
      ],
      {
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    const tail = `${err.stdout ?? ''}\n${err.stderr ?? ''}`.trim().split('\n').slice(-8).join(' | ');
    throw new Error(`in the Debian root ${root}: ${script.split('\n')[0]} failed: ${tail || err.message}`, {
      cause: e,
    });
  }
}

function baseRootDir(cacheDir: string, arch: DebianArch): string {
  return join(cacheDir, `base-${key([DEBIAN_SUITE, arch, DEBIAN_MIRROR, 'minbase', ...AMI_PACKAGES, SOURCES])}`);
}

function packageLayerDir(cacheDir: string, base: string, packages: readonly string[]): string {
  return join(cacheDir, `packages-${key([base, ...[...packages].sort()])}`);
}

/**
 * The cached layers of a root, uppermost first, or undefined while either is not built.
 * This is for roots too slow to build on demand, such as a foreign architecture.
 * scripts/build-rehearsal-roots.ts builds those.
 * @internal exported for its tests (a test seam)
 */
export function cachedLayers(
  arch: DebianArch,
  packages: readonly string[],
  cacheDir = defaultRootCacheDir(),
): string[] | undefined {
  const base = baseRootDir(cacheDir, arch);
  const layer = packageLayerDir(cacheDir, base, packages);
  if (!existsSync(join(base, 'etc', 'debian_version')) || !existsSync(join(layer, '.aurora-bench-packages')))
    return undefined;
  return [layer, base];
}

/** The clean Debian root, built with debootstrap when not cached. Returns its directory. */
export async function ensureBaseRoot(o: RootCacheOptions = {}): Promise<string> {
  const cacheDir = o.cacheDir ?? defaultRootCacheDir();
  const arch = o.arch ?? debianArch();
  const dir = baseRootDir(cacheDir, arch);
  if (existsSync(join(dir, 'etc', 'debian_version'))) return dir;
  await mkdir(cacheDir, { recursive: true });
  const building = `${dir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  o.log?.(`building the clean Debian ${DEBIAN_SUITE} root (debootstrap, once per machine) in ${dir}`);
  const started = Date.now();
  try {
    await run(
      'debootstrap',
      [
        '--variant=minbase',
        `--arch=${arch}`,
        `--include=${AMI_PACKAGES.join(',')}`,
        DEBIAN_SUITE,
        building,
        DEBIAN_MIRROR,
      ],
      {
        timeout: 1_800_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    // The AMI's deb822 sources replace debootstrap's one-line sources.list.
    await rm(join(building, 'etc', 'apt', 'sources.list'), { force: true });
    await writeFile(join(building, 'etc', 'apt', 'sources.list.d', 'debian.sources'), SOURCES);
    await withMounts(building, () => inRoot(building, 'apt-get -q update'));
  } catch (e) {
    unmountUnder(building);
    await rm(building, { recursive: true, force: true });
    throw new Error(
      `debootstrap of Debian ${DEBIAN_SUITE} (${arch}) from ${DEBIAN_MIRROR} failed: ${(e as Error).message}`,
      { cause: e },
    );
  }
  if (existsSync(dir)) await rm(building, { recursive: true, force: true });
  else await rename(building, dir);
  o.log?.(`clean Debian root ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return dir;
}

/**
 * The layer with `packages` installed over the base, built when not cached.
 * Services stay stopped while it is built.
 */
export async function ensurePackageLayer(
  base: string,
  packages: readonly string[],
  o: RootCacheOptions = {},
): Promise<string> {
  const cacheDir = o.cacheDir ?? defaultRootCacheDir();
  const sorted = [...packages].sort();
  const dir = packageLayerDir(cacheDir, base, sorted);
  if (existsSync(join(dir, '.aurora-bench-packages'))) return dir;
  const building = `${dir}.building-${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await mkdir(join(building, 'upper'), { recursive: true });
  await mkdir(join(building, 'work'), { recursive: true });
  await mkdir(join(building, 'merged'), { recursive: true });
  const merged = join(building, 'merged');
  o.log?.(`installing ${sorted.join(' ')} into a cached layer of the Debian root (once per package list)`);
  try {
    mountOverlay([base], join(building, 'upper'), join(building, 'work'), merged);
    try {
      await writeFile(join(merged, 'usr', 'sbin', 'policy-rc.d'), DENY_STARTS, { mode: 0o755 });
      await withMounts(merged, () =>
        inRoot(
          merged,
          `apt-get -q update\napt-get -q install -y --no-install-recommends ${sorted.join(' ')}\napt-get -q ` +
            `clean\nrm -f /usr/sbin/policy-rc.d`,
        ),
      );
    } finally {
      unmountUnder(merged);
    }
    await writeFile(join(building, 'upper', '.aurora-bench-packages'), sorted.join('\n') + '\n');
  } catch (e) {
    unmountUnder(merged);
    await rm(building, { recursive: true, force: true });
    throw e;
  }
  if (existsSync(dir)) await rm(building, { recursive: true, force: true });
  else await rename(join(building, 'upper'), dir);
  await rm(building, { recursive: true, force: true });
  return dir;
}

function mount(args: readonly string[]): void {
  const r = spawnSync('mount', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount ${args.join(' ')} failed: ${(r.stderr || r.error?.message || '').trim()}`);
}

/** Mounts the layers, uppermost first, with the instance's upper and work directories. */
function mountOverlay(lowers: readonly string[], upper: string, work: string, merged: string): void {
  mount(['-t', 'overlay', 'overlay', '-o', `lowerdir=${lowers.join(':')},upperdir=${upper},workdir=${work}`, merged]);
}

/** The device files a root needs, bound from this machine's. */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];

/** /proc, a /dev of the few devices and /dev/shm inside root. */
function mountSystem(root: string): void {
  mount(['-t', 'proc', 'proc', join(root, 'proc')]);
  mount(['-t', 'tmpfs', '-o', 'mode=755,size=1m', 'tmpfs', join(root, 'dev')]);
  for (const d of DEVICES) {
    spawnSync('touch', [join(root, 'dev', d)]);
    mount(['--bind', `/dev/${d}`, join(root, 'dev', d)]);
  }
  spawnSync('mkdir', ['-p', join(root, 'dev', 'shm'), join(root, 'dev', 'pts')]);
  mount(['-t', 'tmpfs', '-o', 'mode=1777', 'tmpfs', join(root, 'dev', 'shm')]);
  // The links udev makes. Bash's process substitution in the user data opens /dev/fd/N.
  for (const [name, target] of [
    ['fd', '/proc/self/fd'],
    ['stdin', '/proc/self/fd/0'],
    ['stdout', '/proc/self/fd/1'],
    ['stderr', '/proc/self/fd/2'],
  ] as const) {
    spawnSync('ln', ['-s', target, join(root, 'dev', name)]);
  }
}

async function withMounts<T>(root: string, f: () => Promise<T>): Promise<T> {
  mountSystem(root);
  try {
    return await f();
  } finally {
    for (const m of mountsUnder(root).filter((p) => p !== root))
      if (spawnSync('umount', [m]).status !== 0) spawnSync('umount', ['-l', m]);
  }
}

/** An instance's root: the merged view and the directory holding its layer. */
export interface InstanceRoot {
  readonly dir: string;
  readonly root: string;
}

/** Mounts a fresh instance root in dir over the given layers, uppermost first. */
export async function mountInstanceRoot(dir: string, layers: readonly string[]): Promise<InstanceRoot> {
  const root = join(dir, 'root');
  for (const d of ['upper', 'work', 'root']) await mkdir(join(dir, d), { recursive: true });
  mountOverlay(layers, join(dir, 'upper'), join(dir, 'work'), root);
  try {
    mountSystem(root);
    // debootstrap copied the name servers of the day the base was built, so use today's.
    await writeFile(join(root, 'etc', 'resolv.conf'), await readFile('/etc/resolv.conf'));
  } catch (e) {
    unmountUnder(root);
    throw e;
  }
  return { dir, root };
}

/** Stops what runs in the instance root and unmounts it, then removes its directory. */
export async function removeInstanceRoot(r: InstanceRoot): Promise<void> {
  unmountUnder(r.root);
  if (mountsUnder(r.root).length > 0) throw new Error(`${r.root} is still mounted`);
  await rm(r.dir, { recursive: true, force: true });
}

export interface StandIns {
  /** Where the AWS CLI goes instead of AWS. */
  readonly awsEndpoint: string;
  /** The port of the instance's metadata service emulation. */
  readonly imdsPort: number;
}

async function writeExecutable(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, 0o755);
}

/**
 * The rehearsal's stand-ins for what only EC2 gives an instance.
 * They go into the instance's own layer, so into nothing the stack deploys.
 * - /root/.curlrc sends curl's connections to the metadata address to the emulation.
 * - /usr/local/bin/aws adds moto's --endpoint-url, since Debian's AWS CLI 2.9.19 predates AWS_ENDPOINT_URL.
 *   The aws-cli CHANGELOG adds that variable in 2.13.0.
 * - /etc/hosts names localhost and the host, as cloud-init's update_etc_hosts does on EC2.
 *   Without them mariadb-install-db refuses to run.
 * - systemctl and shutdown stand in for systemd, which the root does not run.
 *   Every call is recorded in STAND_IN_RECORD_DIR. The dead-man's switch's shutdown stops nothing here.
 */
export async function writeStandIns(root: string, s: StandIns): Promise<void> {
  const header =
    '# aurora-bench rehearsal stand-in (core/rehearsal/instance-root.ts): not part of the deployed boot.\n';
  await mkdir(join(root, 'root'), { recursive: true });
  if (!existsSync(join(root, 'etc', 'hosts'))) {
    // The chroot shares this machine's UTS namespace, so its host name is this machine's.
    await writeFile(
      join(root, 'etc', 'hosts'),
      `127.0.0.1 localhost\n127.0.1.1 ${hostname()}\n::1 localhost ip6-localhost ip6-loopback\n`,
    );
  }
  await writeFile(join(root, 'root', '.curlrc'), `${header}connect-to = 169.254.169.254:80:127.0.0.1:${s.imdsPort}\n`);
  await writeExecutable(
    join(root, 'usr', 'local', 'bin', 'aws'),
    `#!/bin/sh\n${header}exec /usr/bin/aws --endpoint-url '${s.awsEndpoint}' "$@"\n`,
  );
  await writeExecutable(
    join(root, 'usr', 'local', 'sbin', 'shutdown'),
    `#!/bin/sh\n${header}mkdir -p ${STAND_IN_RECORD_DIR}\necho "$*" >> ${STAND_IN_RECORD_DIR}/shutdown\n`,
  );
  await writeExecutable(
    join(root, 'usr', 'local', 'sbin', 'systemctl'),
    [
      '#!/bin/sh',
      header.trimEnd(),
      `mkdir -p ${STAND_IN_RECORD_DIR}`,
      `echo "$*" >> ${STAND_IN_RECORD_DIR}/systemctl`,
      'verb="" now=0 units=""',
      'for a in "$@"; do',
      '  case "$a" in',
      '    --now) now=1 ;;',
      '    -*) ;;',
      '    *) if [ -z "$verb" ]; then verb=$a; else units="$units ${a%.service}"; fi ;;',
      '  esac',
      'done',
      'case "$verb" in start | restart) start=1 ;; enable) start=$now ;; *) start=0 ;; esac',
      'for u in $units; do',
      '  unit=""',
      '  for d in /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do [ -f "$d/$u.service" ] ' +
        '&& { unit="$d/$u.service"; break; }; done',
      '  case "$verb" in enable | disable | start | restart) [ -n "$unit" ] || { echo "Failed to $verb unit: ' +
        'Unit $u.service does not exist." >&2; exit 1; } ;; esac',
      '  [ "$start" = 1 ] || continue',
      '  cmd=$(sed -n "s/^ExecStart=//p" "$unit" | head -n 1)',
      '  setsid sh -c "$cmd" </dev/null >/dev/null 2>&1 &',
      'done',
      '',
    ].join('\n'),
  );
}

/**
 * The rehearsal's amazon-ssm-agent package, which moto's S3 serves in place of AWS's.
 * Its unit writes AGENT_STARTED_FILE, and from then on the emulated agent answers for the instance.
 * Returns the file built with dpkg-deb.
 */
async function buildAgentPackage(dir: string, arch: DebianArch): Promise<string> {
  const tree = join(dir, 'amazon-ssm-agent');
  await rm(tree, { recursive: true, force: true });
  await mkdir(join(tree, 'DEBIAN'), { recursive: true });
  await writeFile(
    join(tree, 'DEBIAN', 'control'),
    [
      'Package: amazon-ssm-agent',
      'Version: 0.0.0+aurora-bench-rehearsal',
      `Architecture: ${arch}`,
      'Maintainer: aurora-bench <aurora-bench@localhost>',
      "Description: the AWS rehearsal's stand-in for the SSM agent",
      ' Its service registers the instance with the rehearsal (core/rehearsal/ssm-agent.ts), which runs the commands.',
      '',
    ].join('\n'),
  );
  await writeExecutable(
    join(tree, 'usr', 'bin', 'amazon-ssm-agent'),
    `#!/bin/sh\nmkdir -p ${dirname(AGENT_STARTED_FILE)}\ndate -u +%Y-%m-%dT%H:%M:%SZ > ${AGENT_STARTED_FILE}\n`,
  );
  await mkdir(join(tree, 'lib', 'systemd', 'system'), { recursive: true });
  await writeFile(
    join(tree, 'lib', 'systemd', 'system', 'amazon-ssm-agent.service'),
    '[Unit]\nDescription=amazon-ssm-agent (aurora-bench ' +
      'rehearsal)\n\n[Service]\nType=oneshot\nExecStart=/usr/bin/amazon-ssm-agent\n\n[Install]\n' +
      'WantedBy=multi-user.target\n',
  );
  const deb = join(dir, 'amazon-ssm-agent.deb');
  await run('dpkg-deb', ['--root-owner-group', '--build', tree, deb]);
  await rm(tree, { recursive: true, force: true });
  return deb;
}

/** Builds the rehearsal's SSM agent package and puts it in moto's S3 where the user data downloads AWS's. */
export async function serveAgentPackage(
  s3: S3Client,
  region: string,
  dir: string,
  arch: DebianArch = debianArch(),
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const deb = await buildAgentPackage(dir, arch);
  const bucket = `amazon-ssm-${region}`;
  await s3.send(
    new CreateBucketCommand({
      Bucket: bucket,
      ...(region === 'us-east-1'
        ? {}
        : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }),
    }),
  );
  // Public, as AWS's is, since moto refuses unsigned reads of private objects.
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: `latest/debian_${arch}/amazon-ssm-agent.deb`,
      Body: await readFile(deb),
      ACL: 'public-read',
    }),
  );
}

/**
 * A client option file on this machine for a server in an instance root. Returns its path.
 * It includes the server's own file, then switches to TCP on the server's port.
 * The root's socket path seen from here can pass the 108-byte sun_path limit. See unix(7).
 * The server binds 127.0.0.1, which the chroot shares with this machine.
 * See MariaDB Knowledge Base, "Configuring MariaDB with Option Files", for "!include" and override order.
 * With --protocol=TCP the client ignores any socket.
 * See MySQL Reference Manual, "Using Client Programs in a Multiple-Server Environment".
 * It sits next to the root with mode 0600, since it includes the password.
 */
export async function hostClientOptionFile(r: InstanceRoot, clientCnfInRoot: string, port: number): Promise<string> {
  const file = join(r.dir, 'server-client.cnf');
  await writeFile(
    file,
    `!include ${join(r.root, clientCnfInRoot)}\n[client]\nprotocol=TCP\nhost=127.0.0.1\nport=${port}\n`,
    { mode: 0o600 },
  );
  return file;
}
