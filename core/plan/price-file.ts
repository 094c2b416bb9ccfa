/**
 * The price table file's shape and loading, with a clear error per invalid field.
 * Its zod schemas are built when it loads, so only the CLI bundles zod. The Lambdas use the bundled table.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PriceTableError } from './price-error';
import { MIB, readUserText, UserFileError } from '../user-file';

/** The most bytes of a price file. The repo's table is under 20 KiB. */
const MAX_PRICE_FILE_BYTES = MIB;

const hourly = z.record(z.string(), z.number().nonnegative());

const RegionPricesSchema = z
  .object({
    currency: z.string().min(1),
    source: z.string().optional(),
    unconfirmed: z.array(z.string()).optional(),
    /**
     * The prices `unconfirmed` describes, by key, where "*" matches any run of characters.
     * A figure that uses one is printed with "unconfirmed price".
     */
    unconfirmedPrices: z.array(z.string()).optional(),
    dbInstanceHourly: hourly.default({}),
    /** DB instance $/h of engines other than Aurora MySQL, by engine kind. */
    dbInstanceHourlyByEngine: z.record(z.string(), hourly).optional(),
    ec2Hourly: hourly.default({}),
    storageGbMonth: z.number().nonnegative().optional(),
    /** RDS DB instance gp3 storage, $ per GB-month. */
    rdsGp3GbMonth: z.number().nonnegative().optional(),
    /** EBS gp3 storage, $ per GB-month, for self-managed servers' root volumes. */
    ebsGp3GbMonth: z.number().nonnegative().optional(),
    ioPerMillion: z.number().nonnegative().optional(),
    /** Aurora Serverless v2 capacity, $ per ACU-hour, for Standard and I/O-Optimized. */
    acuHourly: z.number().nonnegative().optional(),
    acuHourlyIoOptimized: z.number().nonnegative().optional(),
    /** Aurora I/O-Optimized storage, $ per GB-month. */
    storageGbMonthIoOptimized: z.number().nonnegative().optional(),
    /** An Aurora I/O-Optimized provisioned instance's price over its Aurora Standard price. */
    ioOptimizedInstanceMultiplier: z.number().positive().optional(),
  })
  .loose();

const AssumptionsSchema = z
  .object({
    bytesPerRow: z.number().positive(),
    writeIoPerSecond: z.number().nonnegative(),
    readIoPerSecond: z.number().nonnegative(),
    rdsMinimumBillingS: z.number().nonnegative(),
    ec2MinimumBillingS: z.number().nonnegative(),
  })
  .loose();

const PriceTableSchema = z
  .object({
    $comment: z.string().optional(),
    /** When the figures were current, as their sources say. */
    pricesAsOf: z.string().min(1, 'when the figures were current, e.g. "2025-2026" or "2026-03"'),
    pricesAsOfNote: z.string().optional(),
    /** When the table was put together, not when its figures were current. */
    collectedOn: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD')
      .optional(),
    defaultRegion: z.string(),
    regions: z.record(z.string(), RegionPricesSchema),
    dbInstanceNetworkGbps: z.record(z.string(), z.union([z.number().positive(), z.string()])).default({}),
    assumptions: AssumptionsSchema,
  })
  .loose();

export type PriceTable = z.output<typeof PriceTableSchema>;
export type RegionPrices = z.output<typeof RegionPricesSchema>;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge. Objects merge key by key, and everything else is replaced. */
function mergePrices(base: unknown, override: unknown): unknown {
  if (!isObject(base) || !isObject(override)) return override === undefined ? base : override;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(override)) out[k] = mergePrices(base[k], v);
  return out;
}

function readJson(file: string): unknown {
  if (!existsSync(file)) throw new PriceTableError(`${file}: price file not found`);
  let text: string;
  try {
    text = readUserText(file, MAX_PRICE_FILE_BYTES);
  } catch (e) {
    if (e instanceof UserFileError) throw new PriceTableError(e.message, { source: file });
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PriceTableError(`${file}: not valid JSON`, { cause: e, source: file });
  }
}

/** The repo's price table, with a user's file merged over it. */
export function loadPrices(repoRoot: string, overrideFile?: string): PriceTable {
  const baseFile = join(repoRoot, 'prices', 'aws-prices.json');
  let doc = readJson(baseFile);
  if (overrideFile !== undefined) doc = mergePrices(doc, readJson(overrideFile));
  const parsed = PriceTableSchema.safeParse(doc);
  if (!parsed.success) {
    const where = overrideFile !== undefined ? `${overrideFile} (merged over ${baseFile})` : baseFile;
    throw new PriceTableError(
      `${where}: invalid price table\n` +
        parsed.error.issues.map((i) => `  - ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n'),
    );
  }
  return parsed.data;
}
