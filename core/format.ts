/** Number formatting shared by the results table and the reports (terminal and HTML). */

/** A number with thousands separators and at most `digits` decimals; '-' for null/NaN. */
export function num(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits });
}

/** A ratio as a percentage, e.g. 0.9246 -> "92.46%". */
export function pct(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return `${(value * 100).toFixed(digits)}%`;
}

/** Long text cut to `max` characters for a terminal cell. */
export function clip(text: string | null | undefined, max = 60): string {
  if (text === null || text === undefined) return '';
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? one.slice(0, max - 1) + '…' : one;
}

/**
 * A probability level as a percentage with the digits it has: 0.99 is "99%", 0.999 "99.9%" (rounding to
 * a whole percent would print 0.999 as "100%", an interval that covers everything).
 */
export function levelPercent(level: number): string {
  return `${Number((level * 100).toPrecision(6))}%`;
}

/** A number with exactly `digits` decimals and thousands separators (aligned table columns). */
export function fixed(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * The kind of error behind a failed step's message or an error count, in a few words: what a reader
 * needs to tell a connection limit from deadlocks. A step that ran with errors but no message
 * counted sysbench's ignored errors: by default 1213 (deadlock), 1020 (record changed) and 1205
 * (lock wait timeout) (sysbench 1.0.20 src/drivers/mysql/drv_mysql.c, --mysql-ignore-errors
 * default "1213,1020,1205").
 */
export function errorKind(error: string | null | undefined): string {
  if (error === null || error === undefined || error.trim() === '')
    return 'ignored SQL errors (deadlocks 1213, record changed 1020, lock wait timeouts 1205)';
  const kinds: [RegExp, string][] = [
    [/event queue is full/i, 'overloaded: offered rate above capacity'],
    [/\b1040\b|too many connections/i, 'connection limit (1040 too many connections)'],
    [/\b1213\b|deadlock/i, 'deadlock (1213)'],
    [/\b1205\b|lock wait timeout/i, 'lock wait timeout (1205)'],
    [/\b20(13|06)\b|lost connection|gone away/i, 'lost connection (2013/2006)'],
    [/\b200[23]\b|can't connect|connection refused/i, 'cannot connect (2002/2003)'],
    [/crashed|signal 11|SIGSEGV/i, 'sysbench crashed'],
    [/did not finish in time|still running after/i, 'timed out'],
    [/stopped by the user|aborted|run stopped/i, 'run stopped'],
    [/skipped/i, 'skipped'],
    [/runner/i, 'runner error'],
  ];
  return kinds.find(([re]) => re.test(error))?.[1] ?? 'other';
}

/**
 * Text made safe to print on a terminal: every control character that is not a line break or a tab
 * (C0 but \n and \t, DEL, and the C1 range, whose U+009B is a one-character CSI to some terminals)
 * becomes a visible escape (`\x1b`, `\x9b`), so text from an experiment file, a lake row or a file
 * name cannot set the window title (ESC ] 0 ; ... BEL), clear the screen (ESC [ 2 J) or move the
 * cursor (ECMA-48, "Control Functions for Coded Character Sets", 5th ed. 1991, sections 5.3-5.4: C0
 * is 0x00-0x1F, C1 0x80-0x9F). With `field`, line breaks, carriage returns and tabs are escaped too
 * (`\n`, `\r`, `\t`): one value (a file name) then stays on its line and cannot forge another.
 * The bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069:
 * Unicode Standard Annex #9, "Unicode Bidirectional Algorithm", section 2) become `\u202e` and the
 * like too: they reorder what a terminal shows, so a description could make a line read other than
 * it is (CVE-2021-42574, "Trojan Source").
 * Every terminal writer of the CLI prints through it (core/cli/terminal.ts); JSON output needs no
 * escaping, JSON.stringify already writes control characters as \uXXXX.
 */
export function escapeControls(text: string, options: { readonly field?: boolean } = {}): string {
  const pattern = options.field ? FIELD_CONTROLS : TEXT_CONTROLS;
  return text.replace(pattern, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    if (code > 0xff) return `\\u${code.toString(16).padStart(4, '0')}`;
    return `\\x${code.toString(16).padStart(2, '0')}`;
  });
}
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TEXT_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FIELD_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Columns a cell takes on a terminal: its code points (the plan's and results' cells are names and numbers). */
const cellWidth = (text: string): number => Array.from(text).length;

/**
 * A boxed text table in two passes over its rows (the widths, then the lines), so its time is
 * linear in the number of rows. cli-table3 lays a table out by checking every cell against every
 * earlier row for row spans (layout-manager.js fillInTable/conflictExists: quadratic in the rows;
 * cli-table/cli-table3 issue #68, open), which made `plan` of 10,000 steps take 20-35 s. No spans,
 * no wrapping; cells are single-line (escapeControls with `field` is applied to each).
 * `measure` is how wide a cell is (a seam to count the work: each cell is measured exactly once).
 */
export function textTable(
  head: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  options: { readonly align?: readonly ('left' | 'right')[]; readonly measure?: (text: string) => number } = {},
): string {
  const measure = options.measure ?? cellWidth;
  const text = (row: readonly (string | number)[]) =>
    head.map((_, i) => escapeControls(String(row[i] ?? ''), { field: true }));
  const cells = [text(head), ...rows.map(text)];
  const widthsOf = cells.map((row) => row.map(measure));
  const widths = head.map((_, i) => widthsOf.reduce((w, row) => Math.max(w, row[i]!), 0));
  const line = (row: readonly string[], rowWidths: readonly number[], isHead: boolean) =>
    '│' +
    row
      .map((c, i) => {
        const pad = ' '.repeat(widths[i]! - rowWidths[i]!);
        return ` ${!isHead && options.align?.[i] === 'right' ? pad + c : c + pad} `;
      })
      .join('│') +
    '│';
  const rule = (left: string, mid: string, right: string) =>
    left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const out = [rule('┌', '┬', '┐'), line(cells[0]!, widthsOf[0]!, true), rule('├', '┼', '┤')];
  for (let r = 1; r < cells.length; r++) out.push(line(cells[r]!, widthsOf[r]!, false));
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

/**
 * One argument of a command line printed for the user to paste into a POSIX shell: as it is when
 * it has nothing a shell would interpret; in double quotes when it has single quotes but nothing
 * special inside double quotes ($, `, backslash, " and bash's history !); else in single quotes, inside
 * which the shell interprets nothing (a quote itself is closed, escaped and reopened). POSIX.1-2017
 * Shell Command Language 2.2.2 "Single-Quotes" and 2.2.3 "Double-Quotes". Control characters are
 * escaped as for a terminal.
 */
function shellArg(arg: string): string {
  const text = escapeControls(arg, { field: true });
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  if (!/[$`\\"!]/.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A command line of shellArg arguments. */
export function commandLine(args: readonly string[]): string {
  return args.map(shellArg).join(' ');
}
