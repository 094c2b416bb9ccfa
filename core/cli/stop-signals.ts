/**
 * The signals that stop a run, local or rehearsed, and what each one means: Ctrl-C (SIGINT),
 * SIGTERM (kill, a service manager, a CI timeout) and SIGHUP (its terminal closed). The first one
 * stops the run: nothing new starts, what runs is torn down and the lake says why. A second one
 * forces the exit. Node's default for SIGHUP is to die at once, leaving the servers, runners and
 * sysbench running (they run in sessions of their own, so the hangup never reaches them).
 */
import { closeSync } from 'node:fs';
import { constants } from 'node:os';
import { isatty } from 'node:tty';
import { printErr } from './terminal';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Why a run was stopped, from its AbortSignal's reason: SIGINT is Ctrl-C, the others are not. */
export function stopReason(reason: unknown): string {
  if (reason === 'SIGINT') return 'interrupted by the user (Ctrl-C, SIGINT)';
  if (reason === 'SIGTERM')
    return 'stopped by SIGTERM (another process asked it to end: kill, a service manager, a CI timeout)';
  if (reason === 'SIGHUP') return 'stopped by SIGHUP (its terminal was closed)';
  if (typeof reason === 'string') return `stopped by ${reason}`;
  if (reason instanceof Error) return reason.message;
  return 'aborted by the user (Ctrl-C)';
}

/** The shell's convention for a process a signal ended: 128 + the signal's number (130 without one). */
export function stoppedExitCode(reason: unknown): number {
  const number = typeof reason === 'string' ? constants.signals[reason as NodeJS.Signals] : undefined;
  return 128 + (number ?? constants.signals.SIGINT);
}

/** Write errors that mean the terminal or pipe is gone: there is nobody left to read the output. */
const READER_GONE = new Set(['EIO', 'EPIPE', 'ERR_STREAM_DESTROYED']);

const ignoreReaderGone = (e: NodeJS.ErrnoException): void => {
  if (!READER_GONE.has(e.code ?? '')) throw e;
};

/**
 * At exit Node puts a terminal back into the mode it found it in, and aborts the process (SIGABRT)
 * when the terminal refuses with EIO, as a hung-up one does (src/node.cc ResetStdio: it skips a
 * descriptor the program closed). Closed here, the exit code stays the one the run chose.
 */
function closeTerminals(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

export interface StopSignals {
  /** Aborted on the first stop signal, with the signal's name as its reason. */
  readonly signal: AbortSignal;
  /** Stops listening for the signals (the command is over). */
  dispose(): void;
}

/**
 * Listens for the stop signals while a run command runs. The first aborts `signal` after saying so
 * on stderr; a second exits at once with the shell's code after the `forced` line. Output to a
 * closed terminal fails with EIO: from here on such write errors are dropped (for the rest of the
 * process: an error of a last write may come after the command is over), so a run whose terminal
 * went away still tears down and records its end instead of dying of an unhandled error event.
 */
export function listenForStopSignals(what: string, forced: string): StopSignals {
  const abort = new AbortController();
  // Known now: once the terminal is hung up, isatty says false for its descriptors.
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
