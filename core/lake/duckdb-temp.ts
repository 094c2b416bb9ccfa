import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** DuckDB's private temp folders are named by the process that made them. */
const PREFIX = 'ab-duckdb-';
const NAME = /^ab-duckdb-(\d+)-[A-Za-z0-9]{6}$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM means the process exists and belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temp folders of processes that are gone, killed mid-query before they could clean up.
 * Only this user's real directories go, never a link.
 */
function sweepOrphans(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  const uid = userInfo().uid;
  for (const name of names) {
    const pid = NAME.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || alive(Number(pid))) continue;
    const path = join(root, name);
    try {
      const stat = lstatSync(path);
      if (stat.isDirectory() && stat.uid === uid) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/** A fresh private temp folder for one DuckDB instance, after sweeping those of ended processes. */
export function makeDuckdbTempDir(root: string = tmpdir()): string {
  sweepOrphans(root);
  return mkdtempSync(join(root, `${PREFIX}${process.pid}-`));
}
