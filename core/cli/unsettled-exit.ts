/**
 * "The process ended with the command unsettled" is a failure, never a success. Node ends a process
 * whose event loop has nothing left to do with exit code 0 even when the command's promise is still
 * pending (nothing referenced keeps it alive: unref'd children whose exit events were awaited, a
 * socket to a server that was killed). A CI job would count such a run as passed. `beforeExit` is
 * emitted exactly then (and not on an explicit process.exit):
 * https://nodejs.org/api/process.html#event-beforeexit
 */

/** The exit code of a command that ended unsettled (EX_SOFTWARE, sysexits.h: an internal error). */
const UNSETTLED_EXIT_CODE = 70;

/** Makes the process exit with UNSETTLED_EXIT_CODE and a message if it runs out of work while `main` is pending. */
export function failIfUnsettledAtExit(
  main: Promise<unknown>,
  command: string,
  stderr: NodeJS.WritableStream = process.stderr,
): void {
  let settled = false;
  main.then(
    () => (settled = true),
    () => (settled = true),
  );
  process.on('beforeExit', () => {
    if (settled) return;
    stderr.write(
      `${command}: the process ran out of work with the command still unfinished (it waited on something that ` +
        `can no longer happen): ` +
        `it did not complete, whatever it printed; exit ${UNSETTLED_EXIT_CODE}\n`,
    );
    process.exit(UNSETTLED_EXIT_CODE);
  });
}
