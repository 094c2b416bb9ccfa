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

/** A number with exactly `digits` decimals and thousands separators (aligned table columns). */
export function fixed(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** cli-table3 options for a compact table: no line between rows, numbers right-aligned by caller. */
export const COMPACT_TABLE = {
  chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  style: { head: [] as string[], border: [] as string[] },
};

/**
 * The kind of error behind a failed step's message or an error count, in a few words: what a reader
 * needs to tell a connection limit from deadlocks. A step that ran with errors but no message
 * counted sysbench's ignored errors: by default 1213 (deadlock), 1020 (record changed) and 1205
 * (lock wait timeout) (sysbench 1.0.20 src/drivers/mysql/drv_mysql.c, --mysql-ignore-errors
 * default "1213,1020,1205").
 */
export function errorKind(error: string | null | undefined): string {
  if (error === null || error === undefined || error.trim() === '') return 'ignored SQL errors (deadlocks 1213, record changed 1020, lock wait timeouts 1205)';
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
