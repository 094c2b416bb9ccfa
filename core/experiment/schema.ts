/**
 * The experiment spec. One file describes a whole benchmark study.
 * The zod schema is the single source of truth for the TypeScript types and `experiments/schema.json`.
 */
import { READ_ONLY_TESTS } from './read-only-tests';
import { z } from 'zod';
import { ACU_STEP, MAX_ACU, MIN_MAX_ACU, READER_PROMOTION_TIER, STORAGE_TYPES } from '../aurora/aurora-configurations';
import { ENGINE_KINDS, ENGINES } from '../aurora/engines';
import { maxRepeats, roundsIssues } from './rounds';

const name = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,39}$/,
    'lowercase letters, digits and dashes, at most 40 characters, starting with a letter or digit',
  );
/** The form of an experiment, variant or workload name. `aurora-bench import` names them so too. */
export const ItemNameSchema = name;

/** A parameter value as it is written in a parameter group. */
// One line without control characters.
// A value goes to an option file, a SET statement or a parameter group, where a newline would start another setting.
const parameterValue = z.union([
  // eslint-disable-next-line no-control-regex -- the control characters are what the pattern refuses
  z.string().regex(/^[^\u0000-\u001f\u007f]*$/, 'a value on one line, without a newline or other control character'),
  z.number(),
  z.boolean(),
]);
// Hyphens too, since some Aurora parameter names have them.
const parameterName = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_.-]*$/, 'a parameter name');
const parameters = z.record(parameterName, parameterValue);

/**
 * MariaDB server variables for a local what-if that Aurora does not let you set.
 * Only the local backend applies them, and `plan` marks them "local only".
 * An AWS plan refuses the variant, since nothing of it exists on Aurora.
 */
const localOnlyParameters = z
  .record(parameterName, parameterValue)
  .describe(
    'LOCAL ONLY: MariaDB server variables for a what-if on the local backend that Aurora does not let you set. ' +
      'Applied only by the local run; an AWS plan refuses the variant.',
  );

/**
 * The longest a run may keep anything.
 * After its ttlHours the sweeper deletes a run's resources and the clients shut down.
 * The state machine's TimeoutSeconds ends an execution that outlives it.
 * @internal Exported for its tests.
 */
export const MAX_TTL_HOURS = 168;

/**
 * The most steps one run may expand to.
 * Every step is planned up front and runs sysbench for at least durationS.
 * 10,000 of the shortest steps take about 8 hours locally, so a larger study is several experiments.
 * The limit stops a typo, such as a 1,000-value sweep, from planning millions of steps.
 * @internal Exported for its tests.
 */
export const MAX_STEPS_PER_RUN = 10_000;
/** Values of one sweep. Sweeps in the studies have fewer than 20 points. */
export const MAX_SWEEP_VALUES = 100;

const CONSISTENCY_LEVELS = ['EVENTUAL', 'SESSION', 'GLOBAL'] as const;

/**
 * The database engine, the spec's for every variant or a variant's own to compare engines.
 * core/aurora/engines.ts says what each kind is and has.
 */
export const EngineSchema = z
  .object({
    kind: z
      .enum(ENGINE_KINDS)
      .default('aurora-mysql')
      .describe(
        'aurora-mysql, aurora-postgresql, rds-mysql, rds-mariadb, rds-postgresql, or self-managed (a server on ' +
          'an EC2 instance).',
      ),
    version: z
      .string()
      .describe(
        'The engine version: "3.04.0" (Aurora MySQL), "16.4" (Aurora/RDS PostgreSQL), "8.0.39" (RDS MySQL), ' +
          '"10.11.9" (RDS MariaDB), "mariadb-10.11" (self-managed).',
      ),
  })
  .strict()
  .superRefine((engine, ctx) => {
    const facts = ENGINES[engine.kind];
    if (!facts.versionPattern.test(engine.version)) {
      ctx.addIssue({
        code: 'custom',
        message: `"${engine.version}" is not a version of ${facts.label}: use e.g. ${facts.versionExample}`,
        path: ['version'],
      });
    }
  });

/** @internal Exported for its tests. */
export const WriteForwardingSchema = z
  .object({
    enabled: z.boolean().describe('Aurora MySQL local write forwarding (readers forward writes to the writer).'),
    consistency: z
      .enum(CONSISTENCY_LEVELS)
      .default('EVENTUAL')
      .describe('aurora_replica_read_consistency for forwarded sessions.'),
    maxConnectionsPct: z
      .number()
      .int()
      .min(0)
      .max(90)
      .optional()
      .describe(
        'aurora_fwd_writer_max_connections_pct: share of writer connections forwarded sessions may use (0 ' +
          'disables forwarding).',
      ),
    // AWS, "Configuration parameters for write forwarding", allows 1–86,400 s with a default of 60.
    idleTimeoutS: z
      .number()
      .int()
      .min(1)
      .max(86400)
      .optional()
      .describe('aurora_fwd_writer_idle_timeout in seconds (1 to 86400).'),
  })
  .strict();

const ClientsSchema = z
  .object({
    count: z.number().int().min(1).max(64).default(1).describe('Client machines for this variant.'),
    instanceType: z
      .string()
      .regex(/^[a-z][a-z0-9-]*\.[a-z0-9]+$/, 'an EC2 instance type such as c6i.large')
      .default('c6i.large'),
    placement: z
      .enum(['same-az', 'any'])
      .default('same-az')
      .describe('same-az puts every client in the AZ of the cluster writer (lowest latency, as in S1).'),
  })
  .strict();

const VariantSchema = z
  .object({
    name,
    description: z.string().optional(),
    engine: EngineSchema.optional().describe(
      "This variant's engine when it differs from the spec's engine (e.g. RDS for MariaDB beside Aurora MySQL).",
    ),
    instanceClass: z
      .string()
      .regex(
        /^db\.([a-z0-9]+\.[a-z0-9]+|serverless)$/,
        'an RDS instance class such as db.r6g.2xlarge, or db.serverless',
      )
      .describe(
        'The DB instance class of the writer and the readers; db.serverless for Aurora Serverless v2 (with ' +
          'minAcu and maxAcu). For a self-managed engine the EC2 instance type is the class without "db." ' +
          '(db.r6g.large runs on r6g.large).',
      ),
    // botocore's ServerlessV2ScalingConfiguration takes half steps from 0 to 256.
    // core/experiment/aurora-configurations.ts checks which versions take 0 or more than 128.
    minAcu: z
      .number()
      .min(0)
      .max(MAX_ACU)
      .multipleOf(ACU_STEP)
      .optional()
      .describe(
        'db.serverless only: the least Aurora capacity units each instance scales down to (0.5 steps; 0 pauses ' +
          'it when idle, on the versions that allow it). Default 0.5.',
      ),
    maxAcu: z
      .number()
      .min(MIN_MAX_ACU)
      .max(MAX_ACU)
      .multipleOf(ACU_STEP)
      .optional()
      .describe(
        'db.serverless only (required there): the most Aurora capacity units each instance scales up to (0.5 ' +
          'steps, 1 to 256; above 128 needs a recent engine version).',
      ),
    readerScaling: z
      .enum(
        Object.keys(READER_PROMOTION_TIER) as [
          keyof typeof READER_PROMOTION_TIER,
          ...(keyof typeof READER_PROMOTION_TIER)[],
        ],
      )
      .optional()
      .describe(
        "db.serverless readers: with-writer (promotion tier 1, the default) keeps each reader at the writer's " +
          'capacity; independent (tier 2) lets each scale on its own load.',
      ),
    storage: z
      .enum(Object.keys(STORAGE_TYPES) as [keyof typeof STORAGE_TYPES, ...(keyof typeof STORAGE_TYPES)[]])
      .optional()
      .describe(
        'Aurora only: the cluster storage configuration, standard (StorageType aurora, I/O billed per request, ' +
          'the default) or io-optimized (aurora-iopt1, no I/O charge).',
      ),
    az: z
      .string()
      .regex(/^[a-z]$/, 'an AZ letter such as "a" (appended to the region)')
      .optional(),
    readers: z
      .number()
      .int()
      .min(0)
      .max(15)
      .default(0)
      .describe(
        'Readers besides the writer: Aurora Replicas, RDS read replicas, or replicas of a self-managed server ' +
          '(at most 15 for every engine).',
      ),
    parameterTemplate: z
      .string()
      .optional()
      .describe("Name of an entry in parameterTemplates, merged under this variant's own parameters."),
    clusterParameters: parameters
      .default({})
      .describe(
        "Aurora DB cluster parameter group values; checked against Aurora MySQL's parameter catalogue for " +
          'engine.version.',
      ),
    instanceParameters: parameters
      .default({})
      .describe(
        "Aurora DB (instance) parameter group values; checked against Aurora MySQL's parameter catalogue for " +
          'engine.version.',
      ),
    localOnlyParameters: localOnlyParameters.optional(),
    writeForwarding: WriteForwardingSchema.optional(),
    performanceInsights: z.boolean().default(true),
    clients: ClientsSchema.default({ count: 1, instanceType: 'c6i.large', placement: 'same-az' }),
  })
  .strict();

export const STOCK_TESTS = [
  'oltp_read_only',
  'oltp_write_only',
  'oltp_read_write',
  'oltp_point_select',
  'oltp_update_index',
  'oltp_update_non_index',
  'oltp_insert',
  'oltp_delete',
  'select_random_points',
  'select_random_ranges',
] as const;

/** sysbench options of the stock OLTP tests that a spec may set, spelled as sysbench spells them. */
const SysbenchOptionsSchema = z
  .object({
    range_selects: z.boolean().optional(),
    skip_trx: z.boolean().optional(),
    point_selects: z.number().int().min(0).optional(),
    simple_ranges: z.number().int().min(0).optional(),
    sum_ranges: z.number().int().min(0).optional(),
    order_ranges: z.number().int().min(0).optional(),
    distinct_ranges: z.number().int().min(0).optional(),
    index_updates: z.number().int().min(0).optional(),
    non_index_updates: z.number().int().min(0).optional(),
    delete_inserts: z.number().int().min(0).optional(),
    range_size: z.number().int().min(1).optional(),
    auto_inc: z.boolean().optional(),
    secondary: z.boolean().optional(),
    create_secondary: z.boolean().optional(),
    mysql_storage_engine: z.string().optional(),
    db_ps_mode: z.enum(['auto', 'disable']).optional(),
    histogram: z.boolean().optional(),
    rand_type: z.enum(['uniform', 'gaussian', 'special', 'pareto']).optional(),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean()]))
  .describe('Extra sysbench options, passed as --name=value. Known ones are type-checked.');

const TARGETS = ['writer', 'reader', 'all-readers'] as const;

const WorkloadSchema = z
  .object({
    name,
    test: z.enum(STOCK_TESTS).optional().describe('A stock sysbench test.'),
    script: z.string().optional().describe('A custom Lua workload, path relative to the spec file.'),
    options: SysbenchOptionsSchema.default({}),
    threads: z
      .array(z.number().int().min(1).max(10000))
      .min(1)
      .max(MAX_SWEEP_VALUES)
      .default([1])
      .describe('Threads per client; one step per value.'),
    rates: z
      .array(z.number().int().min(0))
      .min(1)
      .max(MAX_SWEEP_VALUES)
      .default([0])
      .describe('Offered transactions/s per client (sysbench --rate); 0 means unlimited. One step per value.'),
    ratesOfCapacity: z
      .array(z.number().gt(0).max(1000))
      .min(1)
      .max(MAX_SWEEP_VALUES)
      .optional()
      .describe(
        'Offered rates as multiples of the capacity measured in the same cell: an unlimited-rate probe (rate ' +
          "0) of this workload runs first at each thread count, and each value x offers x times the probe's " +
          'achieved transactions/s (split over the clients). Replaces the positive values of rates: useful where ' +
          'the capacity is not known in advance (a local rehearsal on this machine).',
      ),
    stopAtOverload: z
      .boolean()
      .default(false)
      .describe(
        "Skip this workload's higher offered rates in a cell once one rate overloaded (sysbench's event queue " +
          'filled: offered > capacity). Past capacity more rates only measure the same plateau; on AWS the ' +
          'skipped steps are not paid for.',
      ),
    durationS: z.number().int().min(1).max(86400).optional(),
    warmupS: z.number().int().min(0).max(3600).optional(),
    reportIntervalS: z.number().int().min(1).max(3600).optional(),
    percentile: z.number().int().min(1).max(100).optional(),
    target: z.enum(TARGETS).default('writer').describe('Endpoint the clients connect to.'),
    clients: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Client machines running this workload at once (default: all of the variant). With all-readers, spread ' +
          'across readers.',
      ),
  })
  .strict()
  .superRefine((w, ctx) => {
    if ((w.test === undefined) === (w.script === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'exactly one of "test" (a stock sysbench test) or "script" (a Lua file) is required',
        path: ['test'],
      });
    }
    // A step's id is the workload, threads and rate. A repeated value would give two steps one id.
    for (const key of ['threads', 'rates'] as const) {
      w[key].forEach((value, i) => {
        const first = w[key].indexOf(value);
        if (first !== i) {
          ctx.addIssue({
            code: 'custom',
            message:
              `${value} is listed twice (also ${key}[${first}]): both would be the step ` +
              `"${w.name}-${key === 'threads' ? 't' : 'r'}${value}"; remove one, or use repeats to run a step again`,
            path: [key, i],
          });
        }
      });
    }
    if (w.ratesOfCapacity !== undefined && w.rates.some((r) => r > 0)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'give either rates (absolute transactions/s) or ratesOfCapacity (multiples of the measured ' +
          'capacity), not both: remove the positive values from rates',
        path: ['ratesOfCapacity'],
      });
    }
  });

const DataSchema = z
  .object({
    tables: z.number().int().min(1).max(100000),
    tableSize: z.number().int().min(1).describe('Rows per table (sysbench --table_size).'),
    reuse: z
      .enum(['cell', 'step'])
      .default('cell')
      .describe(
        'cell: prepare once per cell on the writer and reuse for every step; step: prepare afresh before each step.',
      ),
    prepareThreads: z.number().int().min(1).max(256).default(8),
  })
  .strict();

const DefaultsSchema = z
  .object({
    durationS: z.number().int().min(1).max(86400).default(60),
    warmupS: z.number().int().min(0).max(3600).default(0),
    reportIntervalS: z.number().int().min(1).max(3600).default(1),
    percentile: z.number().int().min(1).max(100).default(95),
  })
  .strict();

const repeatCount = z.number().int().min(1).max(100);

/** The metrics a question may compare. */
const QUESTION_METRICS = ['tps', 'qps', 'p50', 'p90', 'p95', 'p99', 'tps_per_usd', 'qps_per_usd'] as const;
export type QuestionMetric = (typeof QUESTION_METRICS)[number];

const HorizonQuestionSchema = z
  .object({
    id: name.optional().describe('How the run and the report name it; default "<candidate>-vs-<baseline>-<metric>".'),
    against: z.literal('variants').optional().describe('The default kind: the candidate against the baseline.'),
    baseline: name.describe('The variant the candidate is compared with.'),
    candidate: name,
    metric: z.enum(QUESTION_METRICS).describe('p50..p99: latency percentiles; *_per_usd: per dollar of the hour.'),
    workload: name.optional().describe("Only this workload's steps (default every step both variants run)."),
    horizons: z
      .array(z.number().gt(0).lt(100))
      .min(1)
      .max(5)
      .describe('Differences worth knowing, in percent: [5] asks whether the ratio is below 95%, above 105%.'),
  })
  .strict();

/** The metrics a history question may test. Latency is the step's percentile. */
const HISTORY_QUESTION_METRICS = ['tps', 'qps', 'latency'] as const;

const HistoryQuestionSchema = z
  .object({
    id: name.optional().describe('How the run and the report name it; default "<metric>-vs-history".'),
    against: z
      .literal('history')
      .describe(
        "Each step of each variant tonight against the same series' stable runs before it (as `history` reads " +
          'them): one round when nothing moved, more only while a series is unclear (core/rounds/history-test.ts).',
      ),
    metric: z.enum(HISTORY_QUESTION_METRICS).describe('latency: the percentile of the defaults (or the step).'),
    variant: name.optional().describe("Only this variant's steps (default every variant)."),
    workload: name.optional().describe("Only this workload's steps (default every workload)."),
  })
  .strict();

const QuestionSchema = z.discriminatedUnion('against', [HorizonQuestionSchema, HistoryQuestionSchema]);

export const SpecSchema = z
  .object({
    $schema: z.string().optional(),
    name,
    description: z.string().optional(),
    engine: EngineSchema,
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-[0-9]$/, 'an AWS region such as us-east-1')
      .default('us-east-1'),
    parameterTemplates: z
      .record(
        z.string(),
        z
          .object({
            clusterParameters: parameters.default({}),
            instanceParameters: parameters.default({}),
            localOnlyParameters: localOnlyParameters.optional(),
          })
          .strict(),
      )
      .default({}),
    variants: z.array(VariantSchema).min(1).max(50),
    data: DataSchema,
    defaults: DefaultsSchema.default({ durationS: 60, warmupS: 0, reportIntervalS: 1, percentile: 95 }),
    workloads: z.array(WorkloadSchema).min(1).max(100),
    repeats: z
      .union([repeatCount, z.object({ min: repeatCount, max: repeatCount }).strict()])
      .default(1)
      .describe(
        'Fresh-server repeats of every variant: a number, or {min, max} rounds with questions (the run stops ' +
          'between them once every question is resolved).',
      ),
    questions: z
      .array(QuestionSchema)
      .min(1)
      .max(20)
      .optional()
      .describe(
        'What the study asks: after each round the workflow judges these and stops when each is resolved ' +
          '(its interval clear of every horizon), at repeats.max, or before the next round would pass budget.maxUsd.',
      ),
    order: z
      .enum(['interleaved', 'sequential', 'randomized', 'duet'])
      .default('interleaved')
      .describe(
        'interleaved alternates variants within each repeat round (drift does not fall on one variant); ' +
          'randomized shuffles the variants of each round with orderSeed (randomized multiple interleaved ' +
          'trials); duet runs the variants of a round at the same time, each step started on all of them ' +
          'together, so their ratios come from time-paired intervals; sequential runs all repeats of a variant ' +
          'before the next.',
      ),
    orderSeed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional()
      .describe(
        'Seed of the randomized order (0 to 4294967295); when absent one is drawn and recorded in the plan and ' +
          'the run manifest, so the order can be repeated.',
      ),
    maxConcurrency: z.number().int().min(1).max(40).default(1).describe('Cells provisioned and run at once.'),
    budget: z
      .object({ maxUsd: z.number().positive() })
      .strict()
      .optional()
      .describe(
        'Refuse an AWS run whose estimated cost exceeds this (with a repeats range: its minimum rounds); with ' +
          'questions, no round starts that would pass it.',
      ),
    ttlHours: z
      .number()
      .int()
      .min(1)
      .max(MAX_TTL_HOURS)
      .default(24)
      .describe('Resources older than this are deleted by the sweeper.'),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const unique = (items: { name: string }[], key: 'variants' | 'workloads') => {
      const seen = new Set<string>();
      items.forEach((it, i) => {
        if (seen.has(it.name))
          ctx.addIssue({ code: 'custom', message: `duplicate name "${it.name}"`, path: [key, i, 'name'] });
        seen.add(it.name);
      });
    };
    unique(spec.variants, 'variants');
    unique(spec.workloads, 'workloads');
    // Duet benchmarking pairs variants that run at the same moment, so one variant has nothing to pair with.
    // See Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE 2020.
    if (spec.order === 'duet' && spec.variants.length < 2) {
      ctx.addIssue({
        code: 'custom',
        message:
          `order "duet" runs the variants of each round at the same time and pairs their intervals, so ` +
          `it needs at least 2 variants (this experiment has ${spec.variants.length}): add a variant to compare ` +
          `with, or use order "interleaved"`,
        path: ['order'],
      });
    }
    if (spec.orderSeed !== undefined && spec.order !== 'randomized') {
      ctx.addIssue({
        code: 'custom',
        message:
          `orderSeed seeds the shuffle of order "randomized"; with order "${spec.order}" nothing is ` +
          `shuffled: remove orderSeed, or set order to "randomized"`,
        path: ['orderSeed'],
      });
    }
    for (const issue of roundsIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
    const stepsPerCell = spec.workloads.reduce((n, w) => n + w.threads.length * w.rates.length, 0);
    const repeats = maxRepeats(spec);
    const steps = stepsPerCell * spec.variants.length * repeats;
    if (steps > MAX_STEPS_PER_RUN) {
      ctx.addIssue({
        code: 'custom',
        message:
          `expands to ${steps.toLocaleString('en-US')} steps (${spec.variants.length} variants ` +
          `x ${repeats} repeats x ${stepsPerCell} steps per cell); one run may have at ` +
          `most ${MAX_STEPS_PER_RUN.toLocaleString('en-US')}, about 8 hours of the shortest steps: split the ` +
          `study into several experiments or sweep fewer values`,
        path: ['workloads'],
      });
    }
    spec.workloads.forEach((w, i) => {
      const durationS = w.durationS ?? spec.defaults.durationS;
      const reportIntervalS = w.reportIntervalS ?? spec.defaults.reportIntervalS;
      if (reportIntervalS > durationS) {
        const at =
          w.reportIntervalS !== undefined ? ['workloads', i, 'reportIntervalS'] : ['defaults', 'reportIntervalS'];
        ctx.addIssue({
          code: 'custom',
          message:
            `reportIntervalS ${reportIntervalS} is longer than durationS ${durationS} of workload ` +
            `"${w.name}": sysbench would report no interval; make it at most ${durationS}`,
          path: at,
        });
      }
    });
    spec.variants.forEach((v, i) => {
      if (v.parameterTemplate !== undefined && !(v.parameterTemplate in spec.parameterTemplates)) {
        ctx.addIssue({
          code: 'custom',
          message:
            `unknown parameter template "${v.parameterTemplate}" ` +
            `(defined: ${Object.keys(spec.parameterTemplates).join(', ') || 'none'})`,
          path: ['variants', i, 'parameterTemplate'],
        });
      }
    });
    spec.workloads.forEach((w, i) => {
      const needsReaders = w.target !== 'writer';
      const writes = w.script !== undefined || !READ_ONLY_TESTS.has(w.test ?? '');
      spec.variants.forEach((v) => {
        if (needsReaders && writes && v.readers > 0 && !v.writeForwarding?.enabled) {
          ctx.addIssue({
            code: 'custom',
            message:
              `workload "${w.name}" writes but targets ${w.target} of variant "${v.name}", which has no ` +
              `writeForwarding (Aurora readers are read-only)`,
            path: ['workloads', i, 'target'],
          });
        }
      });
      spec.variants.forEach((v) => {
        if (needsReaders && v.readers === 0) {
          ctx.addIssue({
            code: 'custom',
            message: `target "${w.target}" needs readers but variant "${v.name}" has readers: 0`,
            path: ['workloads', i, 'target'],
          });
        }
        if (w.clients !== undefined && w.clients > v.clients.count) {
          ctx.addIssue({
            code: 'custom',
            message: `clients ${w.clients} exceeds the ${v.clients.count} client(s) of variant "${v.name}"`,
            path: ['workloads', i, 'clients'],
          });
        }
      });
    });
  });

/** A spec as written, before defaults. */
export type SpecInput = z.input<typeof SpecSchema>;
/** A validated spec with every default applied. */
export type Spec = z.output<typeof SpecSchema>;
export type Variant = z.output<typeof VariantSchema>;
export type Workload = z.output<typeof WorkloadSchema>;
export type SysbenchOptions = z.output<typeof SysbenchOptionsSchema>;
export type WriteForwarding = z.output<typeof WriteForwardingSchema>;
export type Target = (typeof TARGETS)[number];
export type Question = z.output<typeof QuestionSchema>;
export type HorizonQuestion = z.output<typeof HorizonQuestionSchema>;
export type HistoryQuestion = z.output<typeof HistoryQuestionSchema>;
