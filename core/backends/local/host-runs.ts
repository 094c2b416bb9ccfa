/**
 * Local runs on one machine share its CPUs, memory and disk, so each leaves its start and end in a host-wide file.
 * At its end a run names the others that overlapped it, since nothing in their figures shows it.
 * The files are information only, and nothing but this user's own is ever removed.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readUserText } from '../../user-file';
import { ownerAlive, processStartTime } from './registry';

/** Sticky and writable by all, as /tmp is, so every user's runs see each other. TMPDIR differs per user. */
const HOST_RUNS_DIR = '/tmp/aurora-bench-host-runs';

/** A run as long as this that overlapped an ended run still finds its file. */
const KEEP_ENDED_MS = 7 * 24 * 3600 * 1000;

interface HostRunFile {
  readonly runId: string;
  readonly pid: number;
  readonly ownerStartTime: string | null;
  readonly startedAt: string;
  readonly endedAt?: string;
}

/** Another run whose time on this host overlapped this one's. */
export interface HostRunOverlap {
  readonly runId: string;
  readonly pid: number;
  readonly startedAt: string;
  /** Null while it still runs. */
  readonly endedAt: string | null;
  /** Seconds of this run's own time that the other run shared, of `ofS` seconds in all. */
  readonly sharedS: number;
  readonly ofS: number;
}

const fileName = (pid: number, runId: string) => `${pid}-${runId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;

/**
 * Whether the directory may hold this run's file. It must be a real directory owned by this user or root.
 * Others may write into it only if it is sticky, so nobody removes or replaces another's file.
 * Another user could empty a directory they own or fill it with links at any time.
 */
function trustworthyDir(dir: string): boolean {
  const info = lstatSync(dir);
  const uid = process.getuid?.();
  if (!info.isDirectory()) return false;
  if (uid !== undefined && info.uid !== uid && info.uid !== 0) return false;
  return (info.mode & 0o022) === 0 || (info.mode & 0o1000) !== 0;
}

function ensureDir(dir: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o1777 });
  if (!lstatSync(dir).isDirectory()) return false;
  // The umask masks the mode given to mkdir. Only the one who made the directory can set it as meant.
  try {
    if ((statSync(dir).mode & 0o1777) !== 0o1777) chmodSync(dir, 0o1777);
  } catch {
    // Another user's directory. trustworthyDir decides.
  }
  return trustworthyDir(dir);
}

/**
 * Writes a run's file by exclusive creation of a temporary file, then a rename over the name.
 * So a link planted at either name is never written through. O_EXCL does not follow a link.
 */
function writeRunFile(file: string, run: HostRunFile): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(run) + '\n', { mode: 0o644, flag: 'wx' });
    renameSync(temporary, file);
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  }
}

function readRuns(dir: string): { file: string; run: HostRunFile }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const runs: { file: string; run: HostRunFile }[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const run = JSON.parse(readUserText(join(dir, name), 64 * 1024)) as HostRunFile;
      if (typeof run.runId === 'string' && typeof run.startedAt === 'string' && Number.isInteger(run.pid))
        runs.push({ file: join(dir, name), run });
    } catch {
      // A file being written, or not one of ours.
    }
  }
  return runs;
}

/** The runs of this host. One registers when it starts and learns at its end which others overlapped it. */
export class HostRuns {
  private readonly started = new Map<string, HostRunFile>();

  constructor(private readonly dir: string = HOST_RUNS_DIR) {}

  /** Records that `runId` runs from now. Never fails a run: without the directory, overlaps stay unknown. */
  register(runId: string, now: Date = new Date()): void {
    const run: HostRunFile = {
      runId,
      pid: process.pid,
      ownerStartTime: processStartTime(process.pid),
      startedAt: now.toISOString(),
    };
    this.started.set(runId, run);
    try {
      if (ensureDir(this.dir)) writeRunFile(join(this.dir, fileName(run.pid, runId)), run);
    } catch {
      // Not writable, as another user's directory without the sticky mode. Overlaps stay unknown.
    }
  }

  /**
   * Records that `runId` ended and returns the other runs whose time overlapped it.
   * A run whose owner is gone without an end is left out, since its end is not known.
   */
  end(runId: string, now: Date = new Date()): HostRunOverlap[] {
    const mine = this.started.get(runId);
    if (mine === undefined) return [];
    this.started.delete(runId);
    const ended: HostRunFile = { ...mine, endedAt: now.toISOString() };
    const myFile = join(this.dir, fileName(mine.pid, runId));
    try {
      if (!trustworthyDir(this.dir)) return [];
      writeRunFile(myFile, ended);
    } catch {
      // As in register.
    }
    const overlaps: HostRunOverlap[] = [];
    for (const { file, run } of readRuns(this.dir)) {
      if (file === myFile) continue;
      const live = run.endedAt === undefined && ownerAlive({ ownerPid: run.pid, ownerStartTime: run.ownerStartTime });
      if (run.endedAt === undefined && !live) {
        this.prune(file, now);
        continue;
      }
      if (run.endedAt !== undefined && now.getTime() - Date.parse(run.endedAt) > KEEP_ENDED_MS) {
        this.prune(file, now);
        continue;
      }
      const startedBeforeMyEnd = Date.parse(run.startedAt) < now.getTime();
      const endedAfterMyStart = run.endedAt === undefined || Date.parse(run.endedAt) > Date.parse(mine.startedAt);
      if (startedBeforeMyEnd && endedAfterMyStart) {
        const from = Math.max(Date.parse(run.startedAt), Date.parse(mine.startedAt));
        const to = Math.min(run.endedAt === undefined ? now.getTime() : Date.parse(run.endedAt), now.getTime());
        overlaps.push({
          runId: run.runId,
          pid: run.pid,
          startedAt: run.startedAt,
          endedAt: run.endedAt ?? null,
          sharedS: Math.max(0, Math.round((to - from) / 1000)),
          ofS: Math.round((now.getTime() - Date.parse(mine.startedAt)) / 1000),
        });
      }
    }
    return overlaps.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /** Removes a leftover file a day old. The sticky directory refuses other users' files. */
  private prune(file: string, now: Date): void {
    try {
      if (now.getTime() - statSync(file).mtimeMs > 24 * 3600 * 1000) rmSync(file, { force: true });
    } catch {
      // Someone else's, or gone.
    }
  }
}

/** The manifest note and the line a run prints when others overlapped it. */
export function overlapNote(runId: string, overlaps: readonly HostRunOverlap[]): string {
  const shared = (o: HostRunOverlap) =>
    o.sharedS >= o.ofS ? `all of this run's ${o.ofS} s` : `${o.sharedS} s of this run's ${o.ofS} s`;
  const others = overlaps
    .map((o) => `${o.runId} (pid ${o.pid}, ${o.startedAt} to ${o.endedAt ?? 'still running'}: ${shared(o)})`)
    .join(', ');
  return (
    `run ${runId} shared ${hostname()} ` +
    `with ${overlaps.length === 1 ? 'another run' : `${overlaps.length} other runs`}: ${others}; ` +
    `its figures include their load`
  );
}
