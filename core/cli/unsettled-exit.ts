/**
 * Ending with the command unsettled is a failure, never a success.
 * Node exits with code 0 when the event loop is empty, even with the command's promise pending.
 * A CI job would count such a run as passed.
 * `beforeExit` is emitted exactly then. See https://nodejs.org/api/process.html#event-beforeexit
 */

/** EX_SOFTWARE in sysexits.h, an internal error. */
const UNSETTLED_EXIT_CODE = 70;

/** Exits with UNSETTLED_EXIT_CODE and a message if the process runs out of work while `main` is pending. */
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
