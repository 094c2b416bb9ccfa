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
