/**
 * What the stack's nightly schedule costs a month.
 * That is the runs its cron starts in an average month, times the estimated cost of one run.
 * A cron cannot use * in both the day-of-month and day-of-week fields. See EventBridge User Guide, "Cron expressions".
 * Only the forms a regular schedule uses are counted.
 */

/** Days in an average Gregorian month, 365.2425 / 12. */
const DAYS_PER_MONTH = 365.2425 / 12;
const WEEK_DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

function weekDay(text: string): number | undefined {
  const upper = text.toUpperCase();
  const named = WEEK_DAYS.indexOf(upper);
  if (named >= 0) return named + 1;
  return /^[1-7]$/.test(text) ? Number(text) : undefined;
}

/** The week days of a day-of-week field, or undefined for a form not counted here. */
function weekDays(field: string): Set<number> | undefined {
  const days = new Set<number>();
  for (const part of field.split(',')) {
    const range = part.split('-');
    const from = weekDay(range[0]!);
    const to = range.length === 2 ? weekDay(range[1]!) : from;
    if (from === undefined || to === undefined || range.length > 2 || to < from) return undefined;
    for (let d = from; d <= to; d++) days.add(d);
  }
  return days;
}

/** Values of a minutes or hours field given as numbers or a list. Undefined for wildcards, ranges and steps. */
function fixedValues(field: string): number | undefined {
  const parts = field.split(',');
  return parts.every((p) => /^[0-9]{1,2}$/.test(p)) ? new Set(parts).size : undefined;
}

/**
 * Runs a cron schedule starts in an average month.
 * Undefined for a form not counted here, to say so rather than guess.
 */
export function runsPerMonth(schedule: string): number | undefined {
  const m = /^cron\((.*)\)$/.exec(schedule.trim());
  if (!m) return undefined;
  const fields = m[1]!.trim().split(/\s+/);
  if (fields.length !== 6) return undefined;
  const [minutes, hours, dayOfMonth, month, dayOfWeek, year] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const perDayMinutes = fixedValues(minutes);
  const perDayHours = fixedValues(hours);
  if (perDayMinutes === undefined || perDayHours === undefined || month !== '*' || year !== '*') return undefined;
  const perDay = perDayMinutes * perDayHours;
  if ((dayOfMonth === '*' && dayOfWeek === '?') || (dayOfMonth === '?' && dayOfWeek === '*'))
    return perDay * DAYS_PER_MONTH;
  if (dayOfMonth !== '?') return undefined;
  const days = weekDays(dayOfWeek);
  return days === undefined ? undefined : (perDay * days.size * DAYS_PER_MONTH) / 7;
}

export interface NightlySchedule {
  readonly enabled: boolean;
  readonly cron: string;
  readonly timeZone: string;
}

/** The lines `plan --aws` prints for the nightly experiment. */
export function nightlyCostLines(
  schedule: NightlySchedule,
  perRun: number | null,
  currency: string,
  pricesAsOf: string,
  format: (value: number) => string,
  /** The share of a run's cost that a quiet night costs, when the runs stop early. */
  quietShare: number | null = null,
): string[] {
  const state = schedule.enabled ? 'on' : 'off in cdk.json (set aurora-bench.nightly.enabled to true to deploy it)';
  const head = `Nightly schedule ${schedule.cron} ${schedule.timeZone} (cdk.json aurora-bench.nightly, ${state}):`;
  const runs = runsPerMonth(schedule.cron);
  if (runs === undefined)
    return [`${head} monthly cost not estimated: runs per month of this cron expression not counted here`];
  if (perRun === null)
    return [`${head} ${runs.toFixed(1)} runs a month; monthly cost unknown (a price is missing, above)`];
  const basis = `${currency}, the on-demand prices above, ${pricesAsOf}`;
  if (quietShare !== null)
    return [
      `${head} ${runs.toFixed(1)} runs a month x ${format(perRun * quietShare)} a run when nothing moved = ` +
        `about ${format(runs * perRun * quietShare)} a month (at most ${format(runs * perRun)}, every run at its ` +
        `maximum rounds; ${basis})`,
    ];
  return [
    `${head} ${runs.toFixed(1)} runs a month x ${format(perRun)} a run = about ${format(runs * perRun)} a ` +
      `month (${basis})`,
  ];
}
