/**
 * What an AWS rehearsal has started, on disk beside its run's claim, so `cleanup` can settle one killed with SIGKILL.
 * Nothing is touched on the record's word alone.
 * A process must still be the one started, and the folder must be this user's own, marked for this run.
 */
import { lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { unmountUnder } from './mounts';
import { currentUid, isOurProcess } from './processes';
import { processesMentioning, processStartTime } from './registry';

/** A process the rehearsal started (core/rehearsal/process-tracker.ts). */
interface RecordedProcess {
  readonly pid: number;
  /** Text in its command line, such as a path unique to the rehearsal. */
  readonly marker: string;
  /** It leads a process group, so the whole group is killed. */
  readonly group: boolean;
  /** The uid it runs as when not this user's, as PostgreSQL runs as the postgres user. */
  readonly owner?: number;
  /** Its start time when it was recorded. A reused pid is another process. */
  readonly startTime: string | null;
}

interface RehearsalRecord {
  readonly folder: string;
  readonly processes: readonly RecordedProcess[];
  /** Files outside the folder that die with it, such as the moto server's log. */
  readonly files: readonly string[];
}

const RECORD_FILE = 'rehearsal.json';
/** In the folder: the run directory it belongs to. */
const FOLDER_MARK = '.aurora-bench-rehearsal';
/** The folder's name as core/rehearsal/rehearsal-folder.ts makes it, with mkdtemp's six characters. */
const FOLDER_NAME = /^abr-[A-Za-z0-9]{6}$/;
/** moto's log, as scripts/moto.sh names it. */
const MOTO_LOG_NAME = /^moto-server\.[A-Za-z0-9]{6}\.log$/;

/** The record of one rehearsal, rewritten through a temp file and a rename on every change. */
export class RehearsalRecorder {
  /** The tracker's processes, and those added outside it. */
  private tracked: RecordedProcess[] = [];
  private others: RecordedProcess[] = [];
  private readonly files: string[] = [];

  constructor(
    private readonly runDir: string,
    private readonly folder: string,
  ) {
    writeFileSync(join(folder, FOLDER_MARK), runDir + '\n', { mode: 0o600 });
    this.write();
  }

  /** The processes tracked now. The tracker gives its whole list, leaving out what is gone. */
  setProcesses(processes: readonly Omit<RecordedProcess, 'startTime'>[]): void {
    const known = new Map(this.tracked.map((p) => [p.pid, p.startTime]));
    this.tracked = processes.map((p) => ({ ...p, startTime: known.get(p.pid) ?? processStartTime(p.pid) }));
    this.write();
  }

  /** A process outside the tracker, such as the moto server, and a file of it outside the folder. */
  addProcess(process: Omit<RecordedProcess, 'startTime'>, file?: string): void {
    this.others = [...this.others, { ...process, startTime: processStartTime(process.pid) }];
    if (file !== undefined) this.files.push(file);
    this.write();
  }

  private write(): void {
    const processes = [...this.tracked, ...this.others];
    const record: RehearsalRecord = { folder: this.folder, processes, files: this.files };
    const tmp = join(this.runDir, `.${RECORD_FILE}.tmp`);
    try {
      writeFileSync(tmp, JSON.stringify(record) + '\n', { mode: 0o600 });
      renameSync(tmp, join(this.runDir, RECORD_FILE));
    } catch {
      // The rehearsal ended and removed the run directory, so nothing is left to record.
    }
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone in between.
  }
}

/** The folder is this rehearsal's own: an abr- directory of this user, not a link, whose mark names `runDir`. */
function ownFolder(folder: string, runDir: string): boolean {
  if (!isAbsolute(folder) || !FOLDER_NAME.test(basename(folder))) return false;
  const info = lstatSync(folder, { throwIfNoEntry: false });
  const uid = currentUid();
  if (!info?.isDirectory() || (uid !== undefined && info.uid !== uid)) return false;
  try {
    return readFileSync(join(folder, FOLDER_MARK), 'utf8').trim() === runDir;
  } catch {
    return false;
  }
}

/**
 * Settles what a rehearsal whose owner is gone left. Returns what it did, by name.
 * Nothing when the run directory holds no rehearsal record.
 */
export function settleRehearsal(runDir: string): string[] {
  let record: Partial<RehearsalRecord>;
  try {
    record = JSON.parse(readFileSync(join(runDir, RECORD_FILE), 'utf8')) as Partial<RehearsalRecord>;
  } catch {
    return [];
  }
  const done: string[] = [];
  for (const p of record.processes ?? []) {
    const same = p.startTime === null || processStartTime(p.pid) === p.startTime;
    if (!same || !isOurProcess(p.pid, p.marker, p.owner)) continue;
    kill(p.group ? -p.pid : p.pid);
    done.push(`process ${p.pid}`);
  }
  if (typeof record.folder === 'string' && ownFolder(record.folder, runDir)) {
    // Anything else started under the folder, then what runs in its instance roots.
    for (const pid of processesMentioning(record.folder + '/')) {
      kill(pid);
      done.push(`process ${pid}`);
    }
    unmountUnder(record.folder);
    rmSync(record.folder, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    done.push(record.folder);
  }
  for (const file of record.files ?? []) {
    const info = lstatSync(file, { throwIfNoEntry: false });
    if (!isAbsolute(file) || !MOTO_LOG_NAME.test(basename(file)) || !info?.isFile()) continue;
    if (currentUid() !== undefined && info.uid !== currentUid()) continue;
    rmSync(file, { force: true });
    done.push(file);
  }
  return done;
}
