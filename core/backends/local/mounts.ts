/**
 * Mounts and chroots under a folder, as the AWS rehearsal's instance roots are.
 * It lives below the rehearsal because `cleanup` settles a killed rehearsal's folder with it too.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** Every mount point at or under dir, deepest first. */
export function mountsUnder(dir: string): string[] {
  const info = spawnSync('cat', ['/proc/self/mountinfo'], { encoding: 'utf8' }).stdout;
  return info
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .map((p) => p.replace(/\\040/g, ' '))
    .filter((p) => p === dir || p.startsWith(dir + '/'))
    .sort((a, b) => b.length - a.length);
}

/** Kills every process whose root is at or under dir, then unmounts everything there, lazily when busy. */
export function unmountUnder(dir: string): void {
  for (const pid of processesInRoot(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone in between.
    }
  }
  for (const m of mountsUnder(dir)) {
    if (spawnSync('umount', [m]).status !== 0) spawnSync('umount', ['-l', m]);
  }
}

/** The processes whose root directory is root or a directory under it. */
export function processesInRoot(root: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const r = readlinkSync(`/proc/${name}/root`);
      if (r === root || r.startsWith(root + '/')) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}
