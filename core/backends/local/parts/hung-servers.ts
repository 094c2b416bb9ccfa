import { isStopped } from '../processes';
import type { CellState } from './cell-states';
import { tail } from './cell-dir';

/** How long a server must stay stopped before its step is failed. A debugger's short pause is not a hang. */
const STOPPED_FOR_MS = 5_000;

/**
 * MariaDB's "Disk is full writing '<file>'" in a server's error log. See MariaDB mysys/errors.c, EE_DISK_FULL.
 * The server then waits for space instead of failing the statement, so the step would hang until its deadline.
 */
function diskFullIn(errorLog: string): string | undefined {
  const text = tail(errorLog, 20);
  const line = /Disk is full writing '[^']*'(?: \(Errcode: [^)]*\))?/.exec(text);
  return line?.[0];
}

/** The cell's servers that answer nothing: stopped too long, or past the sampler's statement deadline. */
export function hungServers(state: CellState): string[] {
  const servers: { instanceId: string; role: string; pid: number; port: number }[] = state.pg
    ? [state.pg.writer, ...state.pg.readers]
    : state.cluster
      ? [state.cluster.writer, ...state.cluster.readers]
      : [];
  const hung: string[] = [];
  for (const s of servers) {
    const name = `the ${s.role} ${s.instanceId} (pid ${s.pid}, port ${s.port})`;
    if (isStopped(s.pid)) {
      const since = state.stoppedSince.get(s.instanceId) ?? Date.now();
      state.stoppedSince.set(s.instanceId, since);
      if (Date.now() - since >= STOPPED_FOR_MS)
        hung.push(`${name} is stopped (process state T, SIGSTOP) and answers nothing`);
      continue;
    }
    state.stoppedSince.delete(s.instanceId);
    const why = state.sampler?.unresponsive?.get(s.instanceId);
    if (why !== undefined) hung.push(`${name} stopped answering: ${why}`);
    const full = 'errorLog' in s && typeof s.errorLog === 'string' ? diskFullIn(s.errorLog) : undefined;
    if (full !== undefined) hung.push(`${name} has no room on its disk (its error log: ${full})`);
  }
  return hung;
}
