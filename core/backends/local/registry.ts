/**
 * What a local run has started, on disk, so that nothing outlives it: <runRoot>/<runId>/resources.json
 * lists each cell's directory, servers (pid, port, dirs) and runner jobs (process group ids), and
 * the owner process (pid + start time, so a reused pid is not mistaken for it).
 *
 * Cell directories live inside the run directory (<runRoot>/<runId>/c-XXXXXX/{w,r1,...}), so
 * removing the run directory removes every datadir, socket and temp file of the run. Cleanup also
 * scans /proc for any process whose command line names the run directory (a server that was
 * starting when the owner crashed is not in the registry yet).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerInfo } from './mariadb-server';
import { stopServer } from './mariadb-server';
import { stopPostgres } from './postgres-server';
import { isAlive, isOurProcess, processCmdline, terminate } from './processes';

export interface JobRecord {
  readonly jobId: string;
  /** pid of the runner, which leads its own process group. */
  readonly pid: number;
  /** Text unique to this job's command line (its --out directory): a reused pid is never signalled. */
  readonly marker: string;
  readonly startedAt: string;
}

export interface CellRecord {
  readonly cellId: string;
  readonly clusterId: string;
  readonly dir: string;
  readonly servers: readonly ServerInfo[];
  readonly jobs: readonly JobRecord[];
  readonly createdAt: string;
}

export interface RunRecord {
  readonly runId: string;
  readonly ownerPid: number;
  /** /proc/<pid>/stat starttime of the owner: with the pid, identifies it across pid reuse. */
  readonly ownerStartTime: string | null;
  readonly cells: Readonly<Record<string, CellRecord>>;
  readonly updatedAt: string;
}

/** Default root of local runs: under the OS temp dir (cleared on reboot, when the processes are gone too). */
export function defaultRunRoot(): string {
  return join(tmpdir(), 'aurora-bench-runs');
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

function runDirOf(runRoot: string, runId: string): string {
  return join(runRoot, safe(runId));
}

function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Is the process that owns this run still running (same pid and same start time)? */
function ownerAlive(record: Pick<RunRecord, 'ownerPid' | 'ownerStartTime'>): boolean {
  if (!isAlive(record.ownerPid)) return false;
  return record.ownerStartTime === null || processStartTime(record.ownerPid) === record.ownerStartTime;
}

/** Serialises updates of one registry file within this process. */
const locks = new Map<string, Promise<unknown>>();

export class RunRegistry {
  readonly dir: string;
  readonly file: string;

  constructor(
    readonly runRoot: string,
    readonly runId: string,
  ) {
    this.dir = runDirOf(runRoot, runId);
    this.file = join(this.dir, 'resources.json');
  }

  async read(): Promise<RunRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as RunRecord;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(`unreadable run registry ${this.file}: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Read-modify-write under a per-file lock; atomic on disk (temp + rename). */
  /** `change` returns the cells to record from the recorded ones. */
  update(change: (cells: Readonly<Record<string, CellRecord>>) => Record<string, CellRecord>): Promise<RunRecord> {
    const previous = locks.get(this.file) ?? Promise.resolve();
    const next = previous.then(async () => {
      const current = await this.read();
      const cells = change(current?.cells ?? {});
      const record: RunRecord = {
        runId: this.runId,
        ownerPid: process.pid,
        ownerStartTime: processStartTime(process.pid),
        cells,
        updatedAt: new Date().toISOString(),
      };
      await mkdir(this.dir, { recursive: true });
      const tmp = join(this.dir, `.resources-${randomBytes(4).toString('hex')}.tmp`);
      await writeFile(tmp, JSON.stringify(record, null, 1) + '\n');
      await rename(tmp, this.file);
      return record;
    });
    locks.set(
      this.file,
      next.catch(() => undefined),
    );
    return next;
  }

  setCell(cell: CellRecord): Promise<RunRecord> {
    return this.update((cells) => ({ ...cells, [cell.cellId]: cell }));
  }

  /** Changes one recorded cell; nothing if it is not recorded. */
  private editCell(cellId: string, edit: (cell: CellRecord) => CellRecord): Promise<RunRecord> {
    return this.update((cells) => {
      const cell = cells[cellId];
      return cell ? { ...cells, [cellId]: edit(cell) } : { ...cells };
    });
  }

  /** Records a server as soon as it runs. */
  addServer(cellId: string, server: ServerInfo): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({ ...cell, servers: [...cell.servers.filter((s) => s.instanceId !== server.instanceId), server] }));
  }

  addJobs(cellId: string, jobs: readonly JobRecord[]): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({ ...cell, jobs: [...cell.jobs.filter((j) => !jobs.some((n) => n.jobId === j.jobId)), ...jobs] }));
  }

  removeJobs(cellId: string, jobIds: readonly string[]): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({ ...cell, jobs: cell.jobs.filter((j) => !jobIds.includes(j.jobId)) }));
  }

  /** Forgets a cell; when none is left the run directory (registry included) is removed. */
  async removeCell(cellId: string): Promise<void> {
    const record = await this.update(({ [cellId]: _removed, ...others }) => others);
    if (Object.keys(record.cells).length === 0) {
      const chained = (locks.get(this.file) ?? Promise.resolve()).then(async () => {
        const again = await this.read();
        if (again && Object.keys(again.cells).length === 0) await rm(this.dir, { recursive: true, force: true });
      });
      locks.set(
        this.file,
        chained.catch(() => undefined),
      );
      await chained;
    }
  }
}

/** Pids of live processes whose command line mentions `marker` (a run or cell directory). */
export function processesMentioning(marker: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const cmdline = processCmdline(pid);
    if (cmdline?.some((a) => a.includes(marker)) && isAlive(pid)) pids.push(pid);
  }
  return pids;
}

/** Stops a cell's jobs (whole process groups) and servers and removes its directory. What it did, by name. */
export async function destroyCell(cell: CellRecord, graceMs = 10_000): Promise<{ deleted: string[]; alreadyGone: string[] }> {
  const deleted: string[] = [];
  const alreadyGone: string[] = [];
  const jobOutcomes = await Promise.all(
    cell.jobs.map(async (j) => [j.jobId, isOurProcess(j.pid, j.marker) ? await terminate(j.pid, { graceMs, group: true }) : ('already-gone' as const)] as const),
  );
  for (const [jobId, outcome] of jobOutcomes) (outcome === 'already-gone' ? alreadyGone : deleted).push(`job ${jobId}`);
  const serverOutcomes = await Promise.all(
    cell.servers.map((s) =>
      (s.engine === 'postgresql' ? stopPostgres({ ...s, socketDir: s.socket }, { graceMs }) : stopServer(s, { graceMs })).then((o) => [s.instanceId, o] as const),
    ),
  );
  for (const [id, outcome] of serverOutcomes)
    (outcome === 'already-gone' ? alreadyGone : deleted).push(`${cell.servers.find((s) => s.instanceId === id)?.engine === 'postgresql' ? 'postgres' : 'mariadbd'} ${id}`);
  // Anything still naming the cell dir (a server that was mid-start) goes too.
  for (const pid of processesMentioning(cell.dir + '/')) {
    await terminate(pid, { graceMs: 2_000 });
    deleted.push(`process ${pid}`);
  }
  await rm(cell.dir, { recursive: true, force: true });
  return { deleted, alreadyGone };
}

/** Removes everything of one run: jobs, servers, directories, the registry. Safe to call twice. */
export async function cleanupRunDir(runRoot: string, runId: string): Promise<string[]> {
  const registry = new RunRegistry(runRoot, runId);
  const removed: string[] = [];
  let record: RunRecord | undefined;
  try {
    record = await registry.read();
  } catch {
    record = undefined; // unreadable: the /proc scan and rm below still clean up
  }
  for (const cell of Object.values(record?.cells ?? {})) {
    const { deleted } = await destroyCell(cell, 5_000);
    removed.push(...deleted.map((d) => `${runId}/${cell.cellId}: ${d}`));
  }
  for (const pid of processesMentioning(registry.dir + '/')) {
    await terminate(pid, { graceMs: 2_000 });
    removed.push(`${runId}: process ${pid}`);
  }
  try {
    await readdir(registry.dir);
    await rm(registry.dir, { recursive: true, force: true });
    removed.push(`${runId}: ${registry.dir}`);
  } catch {
    // no directory: nothing left
  }
  return removed;
}

/**
 * Cleans every run under `runRoot` whose owner process is gone (crashed, killed, Ctrl-C'd twice).
 * Runs of live processes are left alone unless `includeLive` (they belong to someone running now).
 */
export async function cleanupAllRuns(runRoot: string = defaultRunRoot(), options: { includeLive?: boolean } = {}): Promise<{ removed: string[]; skippedLive: string[] }> {
  let entries: string[];
  try {
    entries = await readdir(runRoot);
  } catch {
    return { removed: [], skippedLive: [] };
  }
  const removed: string[] = [];
  const skippedLive: string[] = [];
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    const registry = new RunRegistry(runRoot, entry);
    let record: RunRecord | undefined;
    try {
      record = await registry.read();
    } catch {
      record = undefined;
    }
    if (record && ownerAlive(record) && !options.includeLive) {
      skippedLive.push(record.runId);
      continue;
    }
    if (!record) {
      // No registry: a directory being created right now (keep it) or a leftover (remove it).
      const info = await stat(join(runRoot, entry)).catch(() => undefined);
      if (!info?.isDirectory() || Date.now() - info.mtimeMs < 60_000) continue;
    }
    removed.push(...(await cleanupRunDir(runRoot, record?.runId ?? entry)));
  }
  return { removed, skippedLive };
}
