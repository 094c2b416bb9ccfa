/**
 * What AWS changed on its live parameter pages after the reference repository was archived in June 2023.
 * The hand-edited aurora-mysql-parameter-amendments.json is applied over the built catalogue.
 * Each correction is one entry there, with its page. The built catalogue is never edited by hand.
 */
import { z } from 'zod';

export type Major = '2' | '3';
export type Level = 'cluster' | 'instance';

export interface LevelInfo {
  /** true, false or "at-creation". aurora-bench creates a new cluster per cell. */
  modifiable: boolean | 'at-creation';
  /** AWS's note for this level, links reduced to their text. */
  note?: string;
}

export interface CatalogueEntry {
  cluster?: LevelInfo;
  instance?: LevelInfo;
  /** Values AWS lists as allowed, compared case-insensitively. */
  allowedValues?: string[];
  /** Inclusive integer range AWS publishes, as decimal strings. Some maxima exceed 2^53. */
  range?: { min: string; max: string };
  /** First Aurora MySQL version with the parameter, only where AWS says so. */
  minVersion?: string;
  /** A value other than `unlessValue` needs `parameter`=`value` at the same level. */
  requires?: { unlessValue: string; parameter: string; value: string };
  /** What a value does that a reader of the spec would not expect. It becomes a plan warning. */
  caveats?: Record<string, string>;
  /** The name this parameter has in the other major version. */
  otherName?: string;
  /** Where the entry comes from when not the reference tables. */
  source?: string;
}

export interface MajorCatalogue {
  mysql: '5.7' | '8.0';
  family: 'aurora-mysql5.7' | 'aurora-mysql8.0';
  parameters: Record<string, CatalogueEntry>;
  /** MySQL parameters AWS says don't apply to Aurora MySQL, with AWS's note. */
  notApplicable: Record<string, string>;
}

const levelInfo = z.object({
  modifiable: z.union([z.boolean(), z.literal('at-creation')]),
  note: z.string().optional(),
});
const decimal = z.string().regex(/^-?[0-9]+$/, 'a decimal integer as a string');
/** Each page is an AWS documentation URL. Several are separated by "; ". */
const sources = z
  .string()
  .refine((s) => s.split('; ').every((p) => p.startsWith('https://docs.aws.amazon.com/')), 'AWS documentation URLs');

const AmendmentSchema = z
  .object({
    majors: z.array(z.enum(['2', '3'])).min(1),
    name: z.string().regex(/^[a-z0-9_]+$/, 'a parameter name'),
    levels: z.object({ cluster: levelInfo.optional(), instance: levelInfo.optional() }).strict().optional(),
    allowedValues: z.array(z.string()).min(1).optional(),
    range: z.object({ min: decimal, max: decimal }).strict().optional(),
    minVersion: z
      .string()
      .regex(/^[23]\.[0-9]{2}(\.[0-9]+)?$/, 'an Aurora MySQL version such as "3.05" or "3.03.1"')
      .optional(),
    requires: z.object({ unlessValue: z.string(), parameter: z.string(), value: z.string() }).strict().optional(),
    caveats: z.record(z.string(), z.string()).optional(),
    /** Remove the parameter and list it as not applying to Aurora MySQL, with this note. */
    notApplicable: z.string().optional(),
    source: sources,
  })
  .strict();
export type Amendment = z.infer<typeof AmendmentSchema>;

export const AmendmentsFileSchema = z
  .object({
    $comment: z.string(),
    /** When the live pages were read. */
    read: z.iso.date(),
    amendments: z.array(AmendmentSchema),
  })
  .strict();

/** The record less one key. The others keep their order, which the written catalogue shows. */
export function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _removed, ...rest } = record;
  return rest;
}

export function setLevel(entry: CatalogueEntry, level: Level, info: LevelInfo): void {
  entry[level] = info.note ? info : { modifiable: info.modifiable };
}

/** Applies the amendments in order, in place. An entry left with no level is an error in the file. */
export function applyAmendments(majors: Record<Major, MajorCatalogue>, amendments: readonly Amendment[]): void {
  for (const a of amendments) {
    for (const major of a.majors) {
      const cat = majors[major];
      if (a.notApplicable !== undefined) {
        cat.parameters = without(cat.parameters, a.name);
        cat.notApplicable[a.name] = a.notApplicable;
        continue;
      }
      cat.notApplicable = without(cat.notApplicable, a.name);
      const entry = (cat.parameters[a.name] ??= {});
      for (const level of ['cluster', 'instance'] as const) {
        const info = a.levels?.[level];
        if (info) setLevel(entry, level, info);
      }
      if (!entry.cluster && !entry.instance)
        throw new Error(`amendment for ${a.name} (Aurora MySQL ${major}) leaves it without a level`);
      if (a.allowedValues) entry.allowedValues = a.allowedValues;
      if (a.range) entry.range = a.range;
      if (a.minVersion) entry.minVersion = a.minVersion;
      if (a.requires) entry.requires = a.requires;
      if (a.caveats) entry.caveats = a.caveats;
      entry.source = [...new Set([...(entry.source ? entry.source.split('; ') : []), ...a.source.split('; ')])].join(
        '; ',
      );
    }
  }
}
