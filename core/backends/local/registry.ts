/**
 * What a local run has started, recorded on disk so that nothing outlives it.
 * Cell directories live inside the run directory, so removing it removes every datadir, socket and temp file.
 * Cleanup removes no directory without the run marker, whatever the run root holds.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { AuroraBenchError } from '../../errors';
import { compactRun } from '../../lake/compact';
import type { RunRow } from '../../lake/rows';
import { toJsonLines } from '../../lake/rows';
import { LocalLakeStore } from './local-lake';
import { isMarkedRunDir, makeRunDir } from './run-dir-marker';
import type { ServerInfo } from './mariadb-server';
import { stopServer } from './mariadb-server';
import { postgresOwnerUid, stopPostgres } from './postgres-server';
import { currentUid, isAlive, isOurProcess, processCmdline, processUid, terminate } from './processes';

export interface JobRecord {
  readonly jobId: string;
  /** The runner leads its own process group. */
  readonly pid: number;
  /** Text unique to this job's command line, so a reused pid is never signalled. */
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
  /** The owner's start time. With the pid, it identifies the owner across pid reuse. */
  readonly ownerStartTime: string | null;
  readonly cells: Readonly<Record<string, CellRecord>>;
  readonly updatedAt: string;
}

/**
 * Default root of local runs: one private directory per user under the OS temp dir.
 * A reboot clears it when the processes are gone too. `cleanup` only ever looks at this user's own runs.
 */
export function defaultRunRoot(): string {
  return join(tmpdir(), `aurora-bench-runs-${currentUid() ?? userInfo().username}`);
}

class RunRootError extends AuroraBenchError {
  override readonly name = 'RunRootError';
}

/** Creates the run root private to this user, or refuses one that another user owns or others may write into. */
async function ensureRunRoot(runRoot: string): Promise<void> {
  await mkdir(runRoot, { recursive: true, mode: 0o700 });
  await checkRunRoot(runRoot);
}

/**
 * The run root must be a real directory of this user that no one else may write into.
 * Servers, their data and pids live there.
 */
async function checkRunRoot(runRoot: string): Promise<void> {
  const info = await lstat(runRoot);
  const uid = currentUid();
  if (!info.isDirectory())
    throw new RunRootError(
      `the local run root ${runRoot} is not a directory (a symbolic link?): set AURORA_BENCH_RUN_ROOT to a ` +
        `directory of your own`,
    );
  if (uid !== undefined && info.uid !== uid) {
    throw new RunRootError(
      `the local run root ${runRoot} belongs to user ${info.uid}, not to you (${uid}): aurora-bench touches ` +
        `only its own runs; set AURORA_BENCH_RUN_ROOT to a directory of your own`,
    );
  }
  if ((info.mode & 0o022) !== 0) {
    throw new RunRootError(
      `the local run root ${runRoot} is writable by other users (mode ${(info.mode & 0o777).toString(8)}): ` +
        `anyone could plant a registry there; chmod 700 it, or set AURORA_BENCH_RUN_ROOT to a private directory`,
    );
  }
}

/** Whether `child` is strictly inside `parent`, after resolving "." and "..". */
function inside(parent: string, child: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

export function runDirOf(runRoot: string, runId: string): string {
  return join(runRoot, safe(runId));
}

/** With the pid, the start time tells a process from a later one given the same pid. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process that owns this run still runs, with the same pid and start time. */
export function ownerAlive(record: Pick<RunRecord, 'ownerPid' | 'ownerStartTime'>): boolean {
  if (!isAlive(record.ownerPid)) return false;
  return record.ownerStartTime === null || processStartTime(record.ownerPid) === record.ownerStartTime;
}

const REGISTRY_FILE = 'resources.json';

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
    this.file = join(this.dir, REGISTRY_FILE);
  }

  /** Creates the run directory, marked as a run's, unless it exists. claimRunDir makes a claimed run's. */
  async ensureDir(): Promise<void> {
    await ensureRunRoot(this.runRoot);
    await makeRunDir(this.dir, this.runId, { exclusive: false });
  }

  async read(): Promise<RunRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as RunRecord;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(`unreadable run registry ${this.file}: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * Read-modify-write under a per-file lock, atomic on disk.
   * `change` returns the cells to record from the recorded ones.
   */
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
      await this.ensureDir();
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

  /** Changes one recorded cell. Nothing happens if it is not recorded. */
  private editCell(cellId: string, edit: (cell: CellRecord) => CellRecord): Promise<RunRecord> {
    return this.update((cells) => {
      const cell = cells[cellId];
      return cell ? { ...cells, [cellId]: edit(cell) } : { ...cells };
    });
  }

  /** Records a server as soon as it runs. */
  addServer(cellId: string, server: ServerInfo): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({
      ...cell,
      servers: [...cell.servers.filter((s) => s.instanceId !== server.instanceId), server],
    }));
  }

  addJobs(cellId: string, jobs: readonly JobRecord[]): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({
      ...cell,
      jobs: [...cell.jobs.filter((j) => !jobs.some((n) => n.jobId === j.jobId)), ...jobs],
    }));
  }

  removeJobs(cellId: string, jobIds: readonly string[]): Promise<RunRecord> {
    return this.editCell(cellId, (cell) => ({ ...cell, jobs: cell.jobs.filter((j) => !jobIds.includes(j.jobId)) }));
  }

  /** Forgets a cell. When none is left, the run directory and its registry are removed. */
  async removeCell(cellId: string): Promise<void> {
    const record = await this.update(({ [cellId]: _removed, ...others }) => others);
    if (Object.keys(record.cells).length === 0) {
      const chained = (locks.get(this.file) ?? Promise.resolve()).then(async () => {
        const again = await this.read();
        if (!again || Object.keys(again.cells).length > 0) return;
        // A claimed run keeps its directory and claim until cleanupRun. A crash between two cells
        // must still leave the run for `cleanup` to find. An unmarked directory is not ours to remove.
        if (existsSync(join(this.dir, CLAIM_FILE)) || !(await isMarkedRunDir(this.dir)))
          await rm(this.file, { force: true });
        else await rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
      });
      locks.set(
        this.file,
        chained.catch(() => undefined),
      );
      await chained;
    }
  }
}

/** Pids of live processes whose command line mentions `marker`, a run or cell directory. */
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
    if (!cmdline?.some((a) => a.includes(marker)) || !isAlive(pid)) continue;
    // Another user's process that happens to name the path is not ours to stop.
    // PostgreSQL servers run as the postgres user when we are root, and those are ours.
    const uid = currentUid();
    const owner = processUid(pid);
    if (uid === undefined || owner === uid || owner === postgresOwnerUid()) pids.push(pid);
  }
  return pids;
}

/**
 * Stops a cell's jobs and servers and removes its directory. Returns what it did, by name.
 * Only what the record can be proven to own is touched: this user's processes whose command line names their file.
 * A registry naming a path outside `runDir` is not followed.
 */
export async function destroyCell(
  cell: CellRecord,
  graceMs = 10_000,
  runDir?: string,
): Promise<{ deleted: string[]; alreadyGone: string[] }> {
  const deleted: string[] = [];
  const alreadyGone: string[] = [];
  const cellDirOk = runDir === undefined || inside(runDir, cell.dir);
  const jobOutcomes = await Promise.all(
    cell.jobs.map(
      async (j) =>
        [
          j.jobId,
          isOurProcess(j.pid, j.marker) ? await terminate(j.pid, { graceMs, group: true }) : ('already-gone' as const),
        ] as const,
    ),
  );
  for (const [jobId, outcome] of jobOutcomes) (outcome === 'already-gone' ? alreadyGone : deleted).push(`job ${jobId}`);
  const serverOutcomes = await Promise.all(
    cell.servers.map((s) => {
      const keepDir = !cellDirOk || !inside(cell.dir, s.dir);
      return (
        s.engine === 'postgresql'
          ? stopPostgres({ ...s, socketDir: s.socket }, { graceMs, keepDir })
          : stopServer(s, { graceMs, keepDir })
      ).then((o) => [s.instanceId, o] as const);
    }),
  );
  for (const [id, outcome] of serverOutcomes)
    (outcome === 'already-gone' ? alreadyGone : deleted).push(
      `${cell.servers.find((s) => s.instanceId === id)?.engine === 'postgresql' ? 'postgres' : 'mariadbd'} ${id}`,
    );
  if (!cellDirOk)
    return { deleted, alreadyGone: [...alreadyGone, `directory ${cell.dir} (outside the run directory: not touched)`] };
  // Anything still naming the cell dir goes too, such as a server that was mid-start.
  for (const pid of processesMentioning(cell.dir + '/')) {
    await terminate(pid, { graceMs: 2_000 });
    deleted.push(`process ${pid}`);
  }
  await rm(cell.dir, { recursive: true, force: true, maxRetries: 3 });
  return { deleted, alreadyGone };
}

/** Removes everything of one run: jobs, servers, directories, the registry. Safe to call twice. */
export async function cleanupRunDir(
  runRoot: string,
  runId: string,
  settle?: (runDir: string) => readonly string[],
): Promise<string[]> {
  const registry = new RunRegistry(runRoot, runId);
  const removed: string[] = [];
  // First, what else the run directory records it started, as an AWS rehearsal does.
  removed.push(...(settle?.(registry.dir) ?? []).map((d) => `${runId}: ${d}`));
  let record: RunRecord | undefined;
  try {
    record = await registry.read();
  } catch {
    record = undefined; // Unreadable. The /proc scan and rm below still clean up.
  }
  for (const cell of Object.values(record?.cells ?? {})) {
    const { deleted } = await destroyCell(cell, 5_000, registry.dir);
    removed.push(...deleted.map((d) => `${runId}/${cell.cellId}: ${d}`));
  }
  for (const pid of processesMentioning(registry.dir + '/')) {
    await terminate(pid, { graceMs: 2_000 });
    removed.push(`${runId}: process ${pid}`);
  }
  // A run id may name a folder the run root holds for another reason, so only a marked directory is removed.
  if (await isMarkedRunDir(registry.dir)) {
    await rm(registry.dir, { recursive: true, force: true, maxRetries: 3 });
    removed.push(`${runId}: ${registry.dir}`);
  }
  return removed;
}

/** What a run claims when it starts: its owner, and where its run row is, so `cleanup` can settle it. */
export interface RunClaim {
  readonly runId: string;
  readonly ownerPid: number;
  readonly ownerStartTime: string | null;
  /** The results lake directory and the key of the run's row in it. */
  readonly lakeRoot: string;
  readonly runKey: string;
  readonly claimedAt: string;
  /** Why the run ended, when its owner could not record it, as with a full lake. `cleanup` records this reason. */
  readonly endReason?: string;
}

const CLAIM_FILE = 'run.json';

class RunIdInUseError extends AuroraBenchError {
  override readonly name = 'RunIdInUseError';
}

export async function readClaim(runRoot: string, runId: string): Promise<RunClaim | undefined> {
  try {
    return JSON.parse(await readFile(join(runDirOf(runRoot, runId), CLAIM_FILE), 'utf8')) as RunClaim;
  } catch {
    return undefined;
  }
}

/**
 * Claims a run id for this process before anything of the run starts.
 * An exclusive mkdir makes the run directory, so two runs with one id cannot destroy each other's servers.
 * A directory that exists is refused, saying whose it is.
 */
export async function claimRunDir(
  runRoot: string,
  runId: string,
  where: { lakeRoot: string; runKey: string; endReason?: string },
): Promise<RunClaim> {
  await ensureRunRoot(runRoot);
  const dir = runDirOf(runRoot, runId);
  try {
    await makeRunDir(dir, runId, { exclusive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    if (!(await isMarkedRunDir(dir)))
      throw new RunIdInUseError(
        `run id "${runId}" names ${dir}, which is not a run directory this aurora-bench made (no marker: ` +
          `another folder, or an older version's run): choose another --run-id`,
      );
    const owner =
      (await readClaim(runRoot, runId)) ?? (await new RunRegistry(runRoot, runId).read().catch(() => undefined));
    if (owner && ownerAlive(owner)) {
      throw new RunIdInUseError(
        `run id "${runId}" is in use by a running aurora-bench (pid ${owner.ownerPid}): choose another ` +
          `--run-id, or wait for it to end`,
      );
    }
    throw new RunIdInUseError(
      `run id "${runId}" was left in ${dir} by an aurora-bench that is gone: run \`aurora-bench cleanup\` ` +
        `first, or choose another --run-id`,
    );
  }
  const claim: RunClaim = {
    runId,
    ownerPid: process.pid,
    ownerStartTime: processStartTime(process.pid),
    lakeRoot: where.lakeRoot,
    runKey: where.runKey,
    claimedAt: new Date().toISOString(),
    ...(where.endReason !== undefined ? { endReason: where.endReason } : {}),
  };
  await writeFile(join(dir, CLAIM_FILE), JSON.stringify(claim, null, 1) + '\n', { mode: 0o600 });
  return claim;
}

/**
 * The key of the claimed run's row. Its date partition is the day the workflow planned it, maybe after the claim's.
 */
async function runRowKey(lake: LocalLakeStore, claim: RunClaim): Promise<string | undefined> {
  const file = claim.runKey.split('/').pop()!;
  return (await lake.get(claim.runKey).catch(() => undefined)) !== undefined
    ? claim.runKey
    : (await lake.list('tables/runs/').catch(() => [])).find((k) => k.endsWith(`/${file}`));
}

/**
 * A run left `running` by an owner that is gone becomes `aborted`, with why, so no status stays a lie.
 * Returns whether it changed the row.
 */
async function settleRunRow(lake: LocalLakeStore, key: string | undefined, reason: string): Promise<boolean> {
  const text = key === undefined ? undefined : await lake.get(key).catch(() => undefined);
  if (key === undefined || text === undefined) return false;
  let row: RunRow;
  try {
    row = JSON.parse(text.trim().split('\n')[0]!) as RunRow;
  } catch {
    return false;
  }
  if (row.status !== 'running') return false;
  await lake.put(key, toJsonLines([{ ...row, status: 'aborted', ended_at: new Date().toISOString(), error: reason }]));
  return true;
}

/**
 * Compacts a settled run's step files to Parquet, as for a finished run, since its owner never got to it.
 * Returns whether anything was compacted. A failure leaves the JSON Lines files, which the lake reads as before.
 */
async function compactSettledRun(lakeRoot: string, runId: string, key: string | undefined): Promise<boolean> {
  const dt = key === undefined ? undefined : /\/dt=(\d{4}-\d{2}-\d{2})\//.exec(key)?.[1];
  if (dt === undefined) return false;
  const done = await compactRun(lakeRoot, { runId, dt }).catch(() => []);
  return done.length > 0;
}

/**
 * Cleans every run under `runRoot` whose owner process is gone, and settles its run row as `aborted`.
 * Runs of live processes are left alone unless `includeLive`, since they belong to someone running now.
 * Only this user's directories are looked at, and a symbolic link is never followed.
 * Only a directory with the run marker is touched, since the run root may also hold the lake or the user's folders.
 * A directory with run files but no marker is left as it is and named in `unproven`.
 */
export async function cleanupAllRuns(
  runRoot: string = defaultRunRoot(),
  options: { includeLive?: boolean; settle?: (runDir: string) => readonly string[] } = {},
): Promise<CleanupOutcome> {
  let entries: string[];
  try {
    entries = await readdir(runRoot);
  } catch {
    return { removed: [], skippedLive: [], settled: [], compacted: [], unsettled: [], unproven: [] };
  }
  await checkRunRoot(runRoot);
  const uid = currentUid();
  const removed: string[] = [];
  const skippedLive: string[] = [];
  const settled: string[] = [];
  const compacted: string[] = [];
  const unsettled: string[] = [];
  const unproven: string[] = [];
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    const dir = join(runRoot, entry);
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
    if (!(await isMarkedRunDir(dir))) {
      const runFiles = await Promise.all([REGISTRY_FILE, CLAIM_FILE].map((f) => lstat(join(dir, f)).catch(() => null)));
      if (runFiles.some((f) => f !== null)) unproven.push(dir);
      continue;
    }
    const registry = new RunRegistry(runRoot, entry);
    let record: RunRecord | undefined;
    try {
      record = await registry.read();
    } catch {
      record = undefined;
    }
    const claim = await readClaim(runRoot, entry);
    const owner = claim ?? record;
    if (owner && ownerAlive(owner) && !options.includeLive) {
      skippedLive.push(owner.runId);
      continue;
    }
    // A marked directory with no registry and no claim is being created now, or a leftover to remove.
    if (!owner && Date.now() - info.mtimeMs < 60_000) continue;
    const runId = owner?.runId ?? entry;
    removed.push(...(await cleanupRunDir(runRoot, runId, options.settle)));
    if (claim) {
      const pid = `pid ${claim.ownerPid}`;
      const why =
        claim.endReason !== undefined
          ? `${claim.endReason}; recorded by \`aurora-bench cleanup\``
          : ownerAlive(claim)
            ? `stopped by \`aurora-bench cleanup\` while its aurora-bench (${pid}) still ran`
            : `its aurora-bench (${pid}) ended without finishing the run (killed, crashed, a forced exit or a ` +
              `full disk); settled by \`aurora-bench cleanup\``;
      const lake = new LocalLakeStore(claim.lakeRoot);
      const key = await runRowKey(lake, claim);
      let changed: boolean;
      try {
        changed = await settleRunRow(lake, key, why);
      } catch (e) {
        // The lake still refuses the write, so the claim stays with the reason for the next cleanup.
        await claimRunDir(runRoot, claim.runId, {
          lakeRoot: claim.lakeRoot,
          runKey: claim.runKey,
          endReason: claim.endReason ?? why,
        }).catch(() => undefined);
        unsettled.push(`${claim.runId} (${(e as Error).message})`);
        continue;
      }
      if (changed) settled.push(claim.runId);
      if (await compactSettledRun(claim.lakeRoot, claim.runId, key)) compacted.push(claim.runId);
    }
  }
  return { removed, skippedLive, settled, compacted, unsettled, unproven };
}

/** What cleanupAllRuns did, by run. */
interface CleanupOutcome {
  readonly removed: string[];
  readonly skippedLive: string[];
  readonly settled: string[];
  readonly compacted: string[];
  readonly unsettled: string[];
  readonly unproven: string[];
}
