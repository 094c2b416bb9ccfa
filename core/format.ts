/** A number with thousands separators and at most `digits` decimals. '-' for null or NaN. */
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
 * A probability level as a percentage with the digits it has, e.g. 0.999 is "99.9%".
 * Rounding to a whole percent would print 0.999 as "100%", an interval that covers everything.
 */
export function levelPercent(level: number): string {
  return `${Number((level * 100).toPrecision(6))}%`;
}

/** A number with exactly `digits` decimals and thousands separators, for aligned columns. */
export function fixed(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * The kind of error behind a failed step's message or an error count, in a few words.
 * A reader needs to tell a connection limit from deadlocks.
 * A step with errors but no message counted sysbench's ignored errors, by default 1213, 1020 and 1205.
 * See --mysql-ignore-errors in sysbench 1.0.20 src/drivers/mysql/drv_mysql.c.
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
 * Text made safe to print on a terminal.
 * Control characters other than line breaks and tabs become visible escapes.
 * So text from a spec, a lake row or a file name cannot retitle the window, clear the screen or move the cursor.
 * See ECMA-48, "Control Functions for Coded Character Sets", sections 5.3-5.4, for the C0 and C1 ranges.
 * With `field`, line breaks, carriage returns and tabs are escaped too, so one value cannot forge another line.
 * Bidirectional formatting characters are escaped as well, since they reorder what a terminal shows.
 * See Unicode Standard Annex #9, section 2, and CVE-2021-42574, "Trojan Source".
 * Every terminal writer of the CLI prints through it. JSON output needs no escaping.
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

/** Columns a cell takes on a terminal, counted in code points. Cells are names and numbers. */
const cellWidth = (text: string): number => Array.from(text).length;

/**
 * A boxed text table in two passes over its rows, so its time is linear in the rows.
 * cli-table3's span check is quadratic in the rows, which made `plan` of 10,000 steps take 20-35 s.
 * See cli-table3 issue #68. There are no spans and no wrapping, and each cell is escaped as a field.
 * `measure` is a seam that counts the work. Each cell is measured exactly once.
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
 * One command-line argument, printed for the user to paste into a POSIX shell.
 * A plain argument stays as it is.
 * One with single quotes but nothing special to double quotes goes in double quotes.
 * Anything else goes in single quotes, inside which the shell interprets nothing.
 * See POSIX.1-2017 Shell Command Language 2.2.2 and 2.2.3. Control characters are escaped as for a terminal.
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
