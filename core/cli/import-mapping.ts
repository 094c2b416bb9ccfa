/**
 * The mapping of `aurora-bench import`: which experiment and step each hand-run sysbench log belongs to.
 * A log says only its thread count and rate, so the engineer says the rest by flags or a mapping file:
 *
 *   experiment: graviton-2019
 *   date: 2019-06-01                       # the day the logs were taken (default: each file's mtime)
 *   defaults: { workload: read-write, test: oltp_read_write }
 *   files:
 *     - match: "{variant}_t{threads}_*.log"  # file-name pattern: * and ? globs, {field} captures
 *     - match: "r5-old.log"
 *       variant: r5
 *       date: 2019-05-30
 *
 * Every matching `files` entry applies in order over `defaults`, and flags override the file.
 * Threads and rate not given are read from the log. Given ones must agree with it.
 * The caller reads the files.
 */
import { z } from 'zod';
import { EngineSchema, ItemNameSchema, STOCK_TESTS } from '../experiment/schema';
import { problemsFromZod, type SpecProblem } from '../experiment/validate';
import { AuroraBenchError } from '../errors';
import { escapeControls } from '../format';

/** A file name as printed, on one line, since a name can hold ESC or a line break. */
export const shownPath = (path: string): string => escapeControls(path, { field: true });

/** A day or an instant in ISO 8601. */
const isoDate = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/,
    'an ISO date such as 2019-06-01 or 2019-06-01T14:00:00Z',
  )
  .refine((s) => Number.isFinite(Date.parse(s)), 'not a real date');

/** What a log file's entry or the defaults may say about it. */
const fileFields = {
  variant: ItemNameSchema.optional(),
  workload: ItemNameSchema.optional(),
  test: z
    .enum(STOCK_TESTS)
    .optional()
    .describe('The stock sysbench test the log ran (recorded with the step; optional).'),
  threads: z.number().int().min(1).max(10000).optional(),
  rate: z.number().int().min(0).optional().describe('Offered transactions/s (sysbench --rate); 0 = unlimited.'),
  repeat: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe('Which repeat of its step the log is (default: numbered in date order).'),
  date: isoDate.optional(),
  instanceClass: z
    .string()
    .regex(/^db\.[a-z0-9]+\.[a-z0-9]+$/, 'an RDS instance class such as db.r6g.2xlarge')
    .optional(),
};

/** The fields a {placeholder} in a file-name pattern may capture. */
const CAPTURABLE = ['variant', 'workload', 'threads', 'rate', 'repeat', 'date'] as const;
type Capturable = (typeof CAPTURABLE)[number];

const FileRuleSchema = z
  .object({
    match: z
      .string()
      .min(1)
      .describe(
        'A file name, or a pattern on it: * and ? as in a shell, {variant} {workload} {threads} {rate} ' +
          '{repeat} {date} capture that field.',
      ),
    ...fileFields,
  })
  .strict();

const ImportMappingSchema = z
  .object({
    experiment: ItemNameSchema,
    description: z.string().optional(),
    engine: EngineSchema.optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-[0-9]$/, 'an AWS region such as us-east-1')
      .optional(),
    date: isoDate.optional(),
    defaults: z.object(fileFields).strict().default({}),
    files: z.array(FileRuleSchema).default([]),
  })
  .strict();

export type ImportMapping = z.output<typeof ImportMappingSchema>;
type FileFields = z.output<z.ZodObject<typeof fileFields>>;

/** A mapping that cannot be used, with every problem by file or flag and JSON path. */
export class ImportMappingError extends AuroraBenchError {
  override readonly name = 'ImportMappingError';
  constructor(
    readonly mappingSource: string,
    readonly problems: readonly SpecProblem[],
  ) {
    super(
      `${mappingSource}: invalid import mapping\n` +
        problems.map((p) => `  - ${p.path || '(root)'}: ${p.message}`).join('\n'),
      { source: mappingSource },
    );
  }
}

/** The flags of `aurora-bench import` that make or override a mapping. */
export interface ImportFlags {
  readonly experiment?: string;
  readonly variant?: string;
  /** NAME=PATTERN: files matching PATTERN are variant NAME. */
  readonly variantPattern?: readonly string[];
  readonly workload?: string;
  readonly test?: string;
  readonly threads?: string;
  readonly rate?: string;
  readonly date?: string;
  readonly instanceClass?: string;
}

/** Where a flag's value lands, so errors name the flag rather than a JSON path. */
const FLAG_OF_PATH: Readonly<Record<string, string>> = {
  experiment: '--experiment',
  date: '--date',
  'defaults.variant': '--variant',
  'defaults.workload': '--workload',
  'defaults.test': '--test',
  'defaults.threads': '--threads',
  'defaults.rate': '--rate',
  'defaults.instanceClass': '--instance-class',
};

const integerFlag = (value: string | undefined): number | string | undefined =>
  value !== undefined && /^\d+$/.test(value) ? Number(value) : value;

/**
 * The mapping file's document, with the flags applied over it, validated.
 * `source` names the mapping file in errors. A flag's problem names the flag.
 */
export function resolveMapping(fileDoc: unknown, source: string | undefined, flags: ImportFlags): ImportMapping {
  if (fileDoc !== undefined && (fileDoc === null || typeof fileDoc !== 'object' || Array.isArray(fileDoc))) {
    throw new ImportMappingError(source ?? 'mapping', [
      { path: '', message: 'expected an object with "experiment", and "defaults" and "files" as needed' },
    ]);
  }
  const fromFile = (fileDoc ?? {}) as Record<string, unknown>;
  // The file alone first, so its problems are named by its own JSON paths.
  const fileProblems =
    source !== undefined ? validationProblems({ experiment: flags.experiment ?? 'placeholder', ...fromFile }) : [];
  if (fileProblems.length > 0) throw new ImportMappingError(source!, fileProblems);

  const defaultsFromFlags: Record<string, unknown> = {};
  if (flags.variant !== undefined) defaultsFromFlags['variant'] = flags.variant;
  if (flags.workload !== undefined) defaultsFromFlags['workload'] = flags.workload;
  if (flags.test !== undefined) defaultsFromFlags['test'] = flags.test;
  if (flags.threads !== undefined) defaultsFromFlags['threads'] = integerFlag(flags.threads);
  if (flags.rate !== undefined) defaultsFromFlags['rate'] = integerFlag(flags.rate);
  if (flags.instanceClass !== undefined) defaultsFromFlags['instanceClass'] = flags.instanceClass;
  const patternRules: Record<string, unknown>[] = [];
  const flagProblems: SpecProblem[] = [];
  for (const p of flags.variantPattern ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0 || eq === p.length - 1) {
      flagProblems.push({
        path: '--variant-pattern',
        message: `expected NAME=PATTERN (e.g. r5=r5-*.log), got ${JSON.stringify(p)}`,
      });
      continue;
    }
    patternRules.push({ match: p.slice(eq + 1), variant: p.slice(0, eq) });
  }
  const merged: Record<string, unknown> = {
    ...fromFile,
    ...(flags.experiment !== undefined ? { experiment: flags.experiment } : {}),
    ...(flags.date !== undefined ? { date: flags.date } : {}),
    defaults: { ...((fromFile['defaults'] ?? {}) as Record<string, unknown>), ...defaultsFromFlags },
    // Flag patterns come after the file's entries, since a later entry overrides an earlier one.
    files: [...((fromFile['files'] as unknown[] | undefined) ?? []), ...patternRules],
  };
  const fileRuleCount = ((fromFile['files'] as unknown[] | undefined) ?? []).length;
  const result = ImportMappingSchema.safeParse(merged);
  if (!result.success) {
    for (const problem of problemsFromZod(result.error, merged)) {
      const flag = FLAG_OF_PATH[problem.path];
      const patternIndex = /^files\[(\d+)\]/.exec(problem.path);
      if (problem.path === 'experiment' && merged['experiment'] === undefined) {
        flagProblems.push({
          path: '--experiment',
          message:
            `the experiment's name is required: pass --experiment ` +
            `NAME${source ? ` or set "experiment" in ${source}` : ''}`,
        });
      } else if (flag !== undefined) flagProblems.push({ path: flag, message: problem.message });
      else if (patternIndex && Number(patternIndex[1]) >= fileRuleCount) {
        flagProblems.push({
          path: `--variant-pattern ${flags.variantPattern?.[Number(patternIndex[1]) - fileRuleCount] ?? ''}`.trim(),
          message: problem.message,
        });
      } else flagProblems.push(problem);
    }
  }
  if (flagProblems.length > 0)
    throw new ImportMappingError(
      source !== undefined ? `${source} with the command line` : 'command line',
      flagProblems,
    );
  const mapping = result.data!;
  const patternProblems = mapping.files.flatMap((rule, i) =>
    patternProblemsOf(rule.match).map((message) => ({ path: `files[${i}].match`, message })),
  );
  if (patternProblems.length > 0) throw new ImportMappingError(source ?? 'command line', patternProblems);
  return mapping;
}

function validationProblems(doc: unknown): SpecProblem[] {
  const result = ImportMappingSchema.safeParse(doc);
  const problems = result.success ? [] : problemsFromZod(result.error, doc);
  if (result.success)
    result.data.files.forEach((rule, i) =>
      problems.push(...patternProblemsOf(rule.match).map((message) => ({ path: `files[${i}].match`, message }))),
    );
  return problems;
}

const CAPTURE_PATTERN: Readonly<Record<Capturable, string>> = {
  variant: '[a-z0-9][a-z0-9-]*?',
  workload: '[a-z0-9][a-z0-9-]*?',
  threads: '\\d+',
  rate: '\\d+',
  repeat: '\\d+',
  date: '\\d{4}-?\\d{2}-?\\d{2}',
};

function patternProblemsOf(pattern: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const m of pattern.matchAll(/\{([^}]*)\}/g)) {
    const field = m[1]!;
    if (!(CAPTURABLE as readonly string[]).includes(field))
      problems.push(`unknown placeholder {${field}}: use ${CAPTURABLE.map((c) => `{${c}}`).join(', ')}`);
    else if (seen.has(field)) problems.push(`{${field}} appears twice`);
    seen.add(field);
  }
  return problems;
}

/** A file-name pattern as an anchored regular expression with a named group per placeholder. */
function patternRegex(pattern: string): RegExp {
  let source = '';
  for (const part of pattern.split(/(\{[a-z]+\}|\*|\?)/)) {
    if (part === '*') source += '[^/]*';
    else if (part === '?') source += '[^/]';
    else if (/^\{[a-z]+\}$/.test(part)) {
      const field = part.slice(1, -1) as Capturable;
      source += `(?<${field}>${CAPTURE_PATTERN[field]})`;
    } else source += part.replace(/[.+^$()|[\]\\{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** What the importer read from one log's header before mapping it. */
export interface LogFacts {
  /** As given on the command line, for messages. */
  readonly path: string;
  /** The file name, or its path under the directory given when the pattern has a "/". */
  readonly relativePath: string;
  /** "Number of threads: N" in sysbench's header. */
  readonly threads?: number;
  /** "Target transaction rate: N/sec" in sysbench's header. */
  readonly rate?: number;
  /** The file's modification time, the date when the mapping gives none. */
  readonly modifiedAt: string;
}

/** One log mapped: the step it is a measurement of. */
export interface FileAssignment {
  readonly path: string;
  readonly variant: string;
  readonly workload: string;
  readonly test?: string;
  readonly threads: number;
  readonly rate: number;
  readonly repeat: number;
  /** The ISO instant the log's run is taken to have started at. */
  readonly startedAt: string;
  /** Where the date came from: the mapping, or the file's modification time. */
  readonly dateFrom: 'mapping' | 'file-name' | 'mtime';
  readonly instanceClass?: string;
}

/**
 * Log files the mapping cannot place, each problem naming its file.
 * @internal exported for its tests (a test seam)
 */
export class ImportAssignmentError extends AuroraBenchError {
  override readonly name = 'ImportAssignmentError';
  constructor(readonly problems: readonly string[]) {
    super(
      `cannot import: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the mapping of the logs ` +
        `(nothing was imported)\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
}

const toInstant = (date: string): string =>
  new Date(/^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T00:00:00Z` : date).toISOString();

/**
 * Each log's step, from the matching `files` entries over `defaults`, and the log itself.
 * Repeats not given are numbered per step in date order.
 * Throws ImportAssignmentError listing every file it cannot place.
 */
export function assignFiles(
  mapping: ImportMapping,
  logs: readonly LogFacts[],
  mappingSource = 'the mapping',
): FileAssignment[] {
  const problems: string[] = [];
  const rules = mapping.files.map((rule) => ({ rule, regex: patternRegex(rule.match) }));
  const partial: (Omit<FileAssignment, 'repeat'> & { repeat?: number })[] = [];
  for (const log of logs) {
    const fields: FileFields & { dateFrom?: FileAssignment['dateFrom'] } = { ...mapping.defaults };
    if (mapping.date !== undefined && fields.date === undefined) fields.date = mapping.date;
    const fileName = log.relativePath.slice(log.relativePath.lastIndexOf('/') + 1);
    rules.forEach(({ rule, regex }, i) => {
      const m = regex.exec(rule.match.includes('/') ? log.relativePath : fileName);
      if (!m) return;
      const { match: _match, ...given } = rule;
      Object.assign(
        fields,
        Object.fromEntries(Object.entries(given as Record<string, unknown>).filter(([, v]) => v !== undefined)),
      );
      // Every placeholder's group is mandatory, so a match has them all.
      for (const [field, value] of Object.entries({ ...m.groups })) {
        if (field === 'threads' || field === 'rate' || field === 'repeat') {
          const n = Number(value);
          if (field !== 'rate' && n < 1)
            problems.push(
              `${shownPath(log.path)}: ${mappingSource} files[${i}].match ` +
                `captures ${field} ${value}: must be at least 1`,
            );
          else (fields as Record<string, unknown>)[field] = n;
        } else if (field === 'date') {
          const iso = value.length === 8 ? `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6)}` : value;
          if (!Number.isFinite(Date.parse(iso)))
            problems.push(
              `${shownPath(log.path)}: ${mappingSource} files[${i}].match captures date ${value}: not a real date`,
            );
          else {
            fields.date = iso;
            fields.dateFrom = 'file-name';
          }
        } else (fields as Record<string, unknown>)[field] = value;
      }
    });
    const missing: string[] = [];
    if (fields.variant === undefined)
      missing.push(
        'variant (--variant NAME, --variant-pattern NAME=PATTERN, or "variant" in defaults or a files entry)',
      );
    if (fields.workload === undefined)
      missing.push('workload (--workload NAME, or "workload" in defaults or a files entry)');
    for (const key of ['threads', 'rate'] as const) {
      const given = fields[key];
      const inLog = log[key];
      if (given !== undefined && inLog !== undefined && given !== inLog) {
        problems.push(
          `${shownPath(log.path)}: the mapping says ${key} ${given}, the log ran with ${inLog} ` +
            `("${key === 'threads' ? 'Number of threads' : 'Target transaction rate'}: ${inLog}" in its header): ` +
            `correct the mapping`,
        );
      }
    }
    const threads = fields.threads ?? log.threads;
    if (threads === undefined)
      missing.push('threads (the log has no "Number of threads:" line: --threads N, or "threads" in the mapping)');
    if (missing.length > 0) {
      problems.push(`${shownPath(log.path)}: no ${missing.join('; no ')}`);
      continue;
    }
    partial.push({
      path: log.path,
      variant: fields.variant!,
      workload: fields.workload!,
      ...(fields.test !== undefined ? { test: fields.test } : {}),
      threads: threads!,
      rate: fields.rate ?? log.rate ?? 0,
      ...(fields.repeat !== undefined ? { repeat: fields.repeat } : {}),
      startedAt: toInstant(fields.date ?? log.modifiedAt),
      dateFrom: fields.date === undefined ? 'mtime' : (fields.dateFrom ?? 'mapping'),
      ...(fields.instanceClass !== undefined ? { instanceClass: fields.instanceClass } : {}),
    });
  }
  // A variant has one instance class, so two logs of one variant may not differ.
  const classes = new Map<string, { cls: string; path: string }>();
  for (const a of partial) {
    if (a.instanceClass === undefined) continue;
    const seen = classes.get(a.variant);
    if (seen && seen.cls !== a.instanceClass)
      problems.push(
        `${shownPath(a.path)}: variant ${a.variant} is ${a.instanceClass} here but ${seen.cls} ` +
          `for ${shownPath(seen.path)}: one variant, one instance class`,
      );
    else if (!seen) classes.set(a.variant, { cls: a.instanceClass, path: a.path });
  }
  const assigned = numberRepeats(partial, problems);
  if (problems.length > 0) throw new ImportAssignmentError(problems);
  return assigned.map((a) => ({
    ...a,
    ...(classes.has(a.variant) ? { instanceClass: classes.get(a.variant)!.cls } : {}),
  }));
}

const stepText = (a: Pick<FileAssignment, 'variant' | 'workload' | 'threads' | 'rate'>): string =>
  `${a.variant} ${a.workload} t${a.threads}${a.rate > 0 ? ` @${a.rate}/s` : ''}`;

/**
 * Repeats numbered 1, 2, ... per step in date order, around the ones the mapping fixed.
 * Two logs of one repeat are refused. The result keeps the logs' order.
 */
function numberRepeats(
  partial: readonly (Omit<FileAssignment, 'repeat'> & { repeat?: number })[],
  problems: string[],
): FileAssignment[] {
  const byStep = new Map<string, (Omit<FileAssignment, 'repeat'> & { repeat?: number })[]>();
  for (const a of partial) byStep.set(stepText(a), [...(byStep.get(stepText(a)) ?? []), a]);
  const repeatOf = new Map<string, number>();
  for (const [step, files] of byStep) {
    const taken = new Map<number, string>();
    for (const f of files) {
      if (f.repeat === undefined) continue;
      const other = taken.get(f.repeat);
      if (other !== undefined)
        problems.push(
          `${shownPath(f.path)}: repeat ${f.repeat} of ${step} is also ${shownPath(other)}: give ` +
            `each log its own repeat`,
        );
      taken.set(f.repeat, f.path);
    }
    let next = 1;
    for (const f of [...files].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.path.localeCompare(b.path))) {
      if (f.repeat !== undefined) continue;
      while (taken.has(next)) next++;
      taken.set(next, f.path);
      repeatOf.set(f.path, next);
    }
  }
  // In the order the logs were given.
  return partial.map((f) => ({ ...f, repeat: f.repeat ?? repeatOf.get(f.path)! }));
}

/** The header facts of a sysbench log. Versions 1.0 and 1.1 print the same lines. */
export function headerFacts(text: string): { threads?: number; rate?: number; reportIntervalS?: number } {
  const threads = /^Number of threads:\s*(\d+)\s*$/m.exec(text);
  const rate = /^Target transaction rate:\s*(\d+)\/sec\s*$/m.exec(text);
  const interval = /^Report intermediate results every (\d+) second\(s\)\s*$/m.exec(text);
  return {
    ...(threads ? { threads: Number(threads[1]) } : {}),
    ...(rate ? { rate: Number(rate[1]) } : {}),
    ...(interval ? { reportIntervalS: Number(interval[1]) } : {}),
  };
}
