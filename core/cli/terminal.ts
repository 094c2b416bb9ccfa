/**
 * The CLI's only way to the terminal: everything the commands print goes through these, with the
 * control characters escaped (core/format.ts escapeControls), so text that came from an experiment
 * file (a hostile `description`), a lake row or a file name cannot set the terminal's title, clear
 * its screen or move its cursor. Line breaks and tabs of the CLI's own layout are kept; a single
 * value that must stay on its line (a file name) is escaped with `field` where it is printed.
 */
import { escapeControls } from '../format';

/** Standard output, escaped. */
export function printOut(text: string): void {
  process.stdout.write(escapeControls(text));
}

/** Standard error, escaped. */
export function printErr(text: string): void {
  process.stderr.write(escapeControls(text));
}
