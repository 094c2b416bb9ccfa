/**
 * The CLI's only way to the terminal, with control characters escaped.
 * Text from an experiment file, a lake row or a file name must not control the terminal.
 * The CLI's own line breaks and tabs are kept. A value that must stay on its line is escaped with `field`.
 */
import { escapeControls } from '../format';

export function printOut(text: string): void {
  process.stdout.write(escapeControls(text));
}

export function printErr(text: string): void {
  process.stderr.write(escapeControls(text));
}
