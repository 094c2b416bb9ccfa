/**
 * The signals that stop a run: Ctrl-C, SIGTERM and SIGHUP.
 * The first stops the run, and a second forces the exit.
 * Node's default for SIGHUP is to die at once, leaving servers and sysbench in their own sessions running.
 */
import { closeSync } from 'node:fs';
import { constants } from 'node:os';
import { isatty } from 'node:tty';
import { printErr } from './terminal';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Why a run was stopped, from its AbortSignal's reason. */
export function stopReason(reason: unknown): string {
  if (reason === 'SIGINT') return 'interrupted by the user (Ctrl-C, SIGINT)';
  if (reason === 'SIGTERM')
    return 'stopped by SIGTERM (another process asked it to end: kill, a service manager, a CI timeout)';
  if (reason === 'SIGHUP') return 'stopped by SIGHUP (its terminal was closed)';
  if (typeof reason === 'string') return `stopped by ${reason}`;
  if (reason instanceof Error) return reason.message;
  return 'aborted by the user (Ctrl-C)';
}

/** The shell's convention: 128 + the signal's number, or 130 without one. */
export function stoppedExitCode(reason: unknown): number {
  const number = typeof reason === 'string' ? constants.signals[reason as NodeJS.Signals] : undefined;
  return 128 + (number ?? constants.signals.SIGINT);
}

/** Write errors that mean the terminal or pipe is gone, with nobody left to read. */
const READER_GONE = new Set(['EIO', 'EPIPE', 'ERR_STREAM_DESTROYED']);

const ignoreReaderGone = (e: NodeJS.ErrnoException): void => {
  if (!READER_GONE.has(e.code ?? '')) throw e;
};

/**
 * At exit Node restores a terminal's mode, and aborts with SIGABRT when a hung-up terminal refuses.
 * Node's ResetStdio in src/node.cc skips a descriptor the program closed.
 * So closing them here keeps the exit code the run chose.
 */
function closeTerminals(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
}

export interface StopSignals {
  /** Aborted on the first stop signal, with the signal's name as its reason. */
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Listens for the stop signals while a run command runs.
 * The first aborts `signal` after saying so, and a second exits at once after the `forced` line.
 * Output to a closed terminal fails with EIO, so such write errors are dropped from here on.
 * So a run whose terminal went away still tears down instead of dying of an unhandled error.
 */
export function listenForStopSignals(what: string, forced: string): StopSignals {
  const abort = new AbortController();
  // Known now, since isatty says false for a hung-up terminal's descriptors.
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  const onSignal = (signal: NodeJS.Signals) => {
    if (signal === 'SIGHUP') process.once('exit', () => closeTerminals(terminals));
    if (!abort.signal.aborted) {
      const [name, again] = signal === 'SIGINT' ? ['Ctrl-C (SIGINT)', 'press again'] : [signal, 'send it again'];
      printErr(
        `\n${name}: stopping the ${what}: nothing new starts, what runs is waited for and torn down (${again} ` +
          `to force)...\n`,
      );
      abort.abort(signal);
      return;
    }
    printErr(`${forced}\n`);
    process.exit(stoppedExitCode(signal));
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  for (const stream of [process.stdout, process.stderr])
    if (!stream.listeners('error').includes(ignoreReaderGone)) stream.on('error', ignoreReaderGone);
  return {
    signal: abort.signal,
    dispose: () => {
      for (const s of STOP_SIGNALS) process.off(s, onSignal);
    },
  };
}
