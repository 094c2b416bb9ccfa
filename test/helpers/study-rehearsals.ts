/**
 * Every study in experiments/ through the AWS rehearsal (test/rehearsal/studies-*.test.ts, each file
 * a part of the studies, so that the parts run side by side), on one moto server per file: the
 * study at `--scale small`, then trimmed for the suite's time budget (a study at --scale small takes
 * minutes to tens of minutes, all of them together far more than the suite may):
 * - one cell for each kind of variant the AWS path treats differently (engine topology and the
 *   server standing in for it, AZ, readers, client count
 *   and instance type, so the launch template of its architecture, write forwarding, Performance
 *   Insights), all run at once (maxConcurrency, as the Distributed Map would on AWS); variants that
 *   differ only in instance class or parameter values make the same calls with other values (the
 *   plan checks every variant's parameters against the catalogue before anything starts). A kind is
 *   rehearsed in one study only (studyCells): the AWS path does not know which study a cell is of;
 *   each study keeps at least one cell;
 * - one step for each kind of workload the AWS path treats differently (stock test or custom Lua
 *   fetched from S3, target, client count, rate limit), at the first point of its sweep, 2 s, no
 *   warm-up, on one table of 1,000 rows.
 * What the trim drops (repeats, sweep points, rows, seconds, look-alike variants and workloads)
 * repeats the same AWS calls. `run --aws-rehearsal --scale small` of a study is the untrimmed run;
 * quickstart's runs in test/e2e/cli-rehearsal.test.ts.
 */
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LocalLake } from '../../core/lake/duckdb';
import type { MetricWindowRow, ServerMetricRow, StepRow } from '../../core/lake/rows';
import { ENGINES } from '../../core/aurora/engines';
import { scaleSpec } from '../../core/experiment/scale';
import type { Spec } from '../../core/experiment/schema';
import { isSpecSchemaFile, loadSpecFile } from '../../core/experiment/validate';
import { expectIamAllowedAndEachActionNeeded } from './iam-replay';
import { rehearsalFile, rehearse, REPO_ROOT as ROOT } from './rehearsal-file';

const EXPERIMENTS = join(ROOT, 'experiments');
/** A db.serverless variant's capacity range as the rehearsal prints it ("0.5-8"). */
const acuRange = (s: { readonly minAcu: number; readonly maxAcu: number }): string => `${s.minAcu}-${s.maxAcu}`;

/** Copies a study's own workload script into the work folder; its name there, relative to the trimmed spec. */
function copyNextTo(work: string, script: string): string {
  copyFileSync(script, join(work, basename(script)));
  return basename(script);
}

/** The study at --scale small. */
function smallStudy(study: string): Spec {
  return scaleSpec(loadSpecFile(join(EXPERIMENTS, study), join(ROOT, 'client', 'workloads')).spec, 'small').spec;
}

/** The first variant of each kind the AWS path treats differently, by kind (the file comment's list). */
function variantsByKind(spec: Spec): Map<string, string> {
  const byKind = new Map<string, string>();
  for (const v of spec.variants) {
    const engine = ENGINES[v.engine?.kind ?? spec.engine.kind];
    // The engine's topology (an Aurora cluster, an RDS DB instance and its replicas, or self-managed
    // servers on EC2 instances set up over SSM by client/server-setup.sh) and the server standing in
    // for it (MariaDB, PostgreSQL) are kinds of their own: RDS for MySQL and RDS for MariaDB make the
    // same calls with another Engine, self-managed variants with and without the thread pool the same
    // calls with other option lines. Serverless v2 and the storage configuration change
    // CreateDBCluster and the metrics collected.
    const kind = JSON.stringify([
      engine.topology,
      engine.localServer,
      v.az ?? null,
      v.readers,
      v.clients,
      v.writeForwarding ?? null,
      v.performanceInsights,
      v.instanceClass === 'db.serverless',
      v.storage ?? null,
    ]);
    if (!byKind.has(kind)) byKind.set(kind, v.name);
  }
  return byKind;
}

/**
 * The variants each study rehearses: each kind of variant in one study only, the study with the most
 * kinds first (so a study's own check on its kinds, thread-sweep's topologies, sees all of them), and
 * at least one cell per study (its first kind's variant when an earlier study took every kind).
 * Every file computes the same assignment, from all the studies.
 */
function studyCells(small: ReadonlyMap<string, Spec>): Map<string, Set<string>> {
  const kinds = new Map([...small].map(([study, spec]) => [study, variantsByKind(spec)] as const));
  const order = [...kinds.keys()].sort((a, b) => kinds.get(b)!.size - kinds.get(a)!.size || (a < b ? -1 : 1));
  const rehearsed = new Set<string>();
  const cells = new Map<string, Set<string>>();
  for (const study of order) {
    const mine = [...kinds.get(study)!].filter(([kind]) => !rehearsed.has(kind));
    const kept = mine.length > 0 ? mine : [...kinds.get(study)!].slice(0, 1);
    for (const [kind] of kept) rehearsed.add(kind);
    cells.set(study, new Set(kept.map(([, name]) => name)));
  }
  return cells;
}

/** The study at --scale small, trimmed as the file comment says, written where the rehearsal reads it. */
function trimmedStudy(work: string, study: string, cells: ReadonlySet<string>): string {
  const small = smallStudy(study);
  const first = (values: readonly number[]) =>
    values.length === 0 ? [] : [[...values].sort((a, b) => a - b).find((v) => v > 0) ?? values[0]!];
  const variants = small.variants.filter((v) => cells.has(v.name));
  const kinds = new Set<string>();
  const workloads = small.workloads.filter((w) => {
    const kind = JSON.stringify([w.script !== undefined, w.target, w.clients ?? null, w.rates.some((r) => r > 0)]);
    if (kinds.has(kind)) return false;
    kinds.add(kind);
    return true;
  });
  // A question stays only where the trim kept both its variants and its workload.
  const keptVariants = new Set(variants.map((v) => v.name));
  const keptWorkloads = new Set(workloads.map((w) => w.name));
  const questions = (small.questions ?? []).filter(
    (q) =>
      (q.against === 'history'
        ? q.variant === undefined || keptVariants.has(q.variant)
        : keptVariants.has(q.baseline) && keptVariants.has(q.candidate)) &&
      (q.workload === undefined || keptWorkloads.has(q.workload)),
  );
  const trimmed: Spec = {
    ...small,
    variants,
    // An empty list is refused (a question list names at least one): none left, none given.
    ...(questions.length > 0 ? { questions } : { questions: undefined }),
    repeats: 1,
    maxConcurrency: variants.length,
    data: { ...small.data, tables: 1, tableSize: 1000, prepareThreads: 1 },
    defaults: { ...small.defaults, durationS: 2, warmupS: 0 },
    workloads: workloads.map((w) => ({
      ...w,
      // The spec moves to a temp dir, and a script path must stay inside the spec's folder: a script
      // next to the study moves with it.
      ...(w.script !== undefined && existsSync(join(EXPERIMENTS, w.script))
        ? { script: copyNextTo(work, join(EXPERIMENTS, w.script)) }
        : {}),
      threads: first(w.threads),
      rates: first(w.rates),
      ...(w.durationS !== undefined ? { durationS: 2 } : {}),
      ...(w.warmupS !== undefined ? { warmupS: 0 } : {}),
    })),
  };
  const out = join(work, study);
  writeFileSync(out, JSON.stringify(trimmed, null, 1));
  return out;
}

// Every engine the AWS backend provisions is rehearsed (Aurora MySQL and RDS for MySQL/MariaDB on
// MariaDB stand-ins, Aurora PostgreSQL and RDS for PostgreSQL on PostgreSQL ones, self-managed
// MariaDB on emulated EC2 instances running the real server scripts).
const studies = readdirSync(EXPERIMENTS)
  .filter((f) => f.endsWith('.json') && !isSpecSchemaFile(join(EXPERIMENTS, f)) && f !== 'quickstart.json')
  .sort();
const cellsByStudy = studyCells(new Map(studies.map((study) => [study, smallStudy(study)])));

/**
 * Registers the tests of part `part` (1-based) of `parts`: the studies at positions part-1, part-1+parts, ...
 * of the sorted list, so that the parts' files together rehearse every study once and can run side by side.
 */
export function rehearseStudies(part: number, parts: number): void {
  const openLakes: LocalLake[] = [];
  const file = rehearsalFile(`abr-studies-${part}-`, () => {
    for (const lake of openLakes) lake.close();
  });
  const mine = studies.filter((_, i) => i % parts === part - 1);
  describe('every study through the AWS rehearsal', () => {
    it('finds the studies', () => {
      // Every experiment file but the schema and quickstart (rehearsed by the CLI test): a new study is rehearsed too.
      expect(studies).toEqual(
        expect.arrayContaining([
          'apg-graviton-vs-intel.json',
          'graviton-vs-intel.json',
          'network-throughput.json',
          'rate-sweep.json',
          'thread-sweep.json',
          'write-forwarding.json',
        ]),
      );
      expect(mine.length).toBeGreaterThan(0);
    });

    it.each(mine)(
      '%s: every step ok, its rows in the lake, nothing left behind',
      async (study) => {
        // Arrange
        const lakeDir = join(file.work, `${study}-lake`);

        // Act
        // The file's rehearsals share one account, as one stack's executions do: its standing
        // infrastructure, and its Task functions warm from one study to the next.
        const { r, lines } = await rehearse(file, trimmedStudy(file.work, study, cellsByStudy.get(study)!), {
          lakeDir,
          account: file.account,
        });

        // Assert
        expect({ status: r.status, cause: r.cause }).toEqual({ status: 'SUCCEEDED', cause: undefined });
        await expectIamAllowedAndEachActionNeeded(r, lines);
        // Read as `results` reads the lake (DuckDB over JSON Lines and Parquet): FinishRun's function
        // compacts the run's step tables to Parquet with Athena, as on AWS.
        const lake = await LocalLake.open(lakeDir);
        openLakes.push(lake);
        const tableRows = <T extends object>(table: string, cell: string, step: string): Promise<T[]> =>
          lake.query<T>(
            `SELECT * FROM ${table} WHERE run_id = '${r.plan.runId}' AND cell_id = '${cell}' AND step_id = '${step}'`,
          );
        const planned = r.plan.cells.flatMap((c) => c.steps.map((s) => `${c.cellId}/${s.stepId}`));
        const rows: StepRow[] = [];
        for (const c of r.plan.cells)
          for (const s of c.steps) rows.push(...(await tableRows<StepRow>('steps', c.cellId, s.stepId)));
        // One row per client of each step, every one ok, or overloaded on a rate step (offered > capacity
        // is a measurement: the achieved rate of the intervals before sysbench's event queue filled).
        expect([...new Set(rows.map((s) => `${s.cell_id}/${s.step_id}`))]).toEqual(planned);
        expect(
          rows
            .filter((s) => s.status !== 'ok' && !(s.status === 'overloaded' && s.rate > 0))
            .map((s) => `${s.cell_id}/${s.step_id}: ${s.error}`),
        ).toEqual([]);
        expect(rows.every((s) => (s.tps ?? 0) > 0)).toBe(true);
        // The servers' CloudWatch metrics, published late into moto, reached the lake for every step and
        // instance: collected again after the cell's last step, every CloudWatch window ends complete.
        for (const c of r.plan.cells) {
          for (const s of c.steps) {
            const metrics = await tableRows<ServerMetricRow>('server_metrics', c.cellId, s.stepId);
            const instances = new Set(
              metrics.filter((m) => m.source === 'cloudwatch' && m.metric === 'CPUUtilization').map((m) => m.role),
            );
            expect([`${c.cellId}/${s.stepId}`, ...instances].sort()).toEqual(
              [`${c.cellId}/${s.stepId}`, 'writer', ...(c.variant.readers > 0 ? ['reader'] : [])].sort(),
            );
            // Write forwarding is Aurora's: its Forwarding* metrics have no MariaDB counterpart and stay empty
            // (incomplete). The PostgreSQL stand-in's sampler has no network counters
            // (core/backends/local/postgres-cluster.ts): those windows stay incomplete too.
            const postgres =
              c.variant.engine !== undefined && ['aurora-postgresql', 'rds-postgresql'].includes(c.variant.engine.kind);
            const unmeasured = (m: string) => m.startsWith('Forwarding') || (postgres && m.startsWith('Network'));
            const windows = (await tableRows<MetricWindowRow>('metric_windows', c.cellId, s.stepId)).filter(
              (w) => w.source === 'cloudwatch' && !unmeasured(w.metric),
            );
            expect(windows.length).toBeGreaterThan(0);
            expect(
              windows.filter((w) => !w.complete).map((w) => `${c.cellId}/${s.stepId} ${w.instance_id} ${w.metric}`),
            ).toEqual([]);
          }
        }
        expect(r.leftBehind).toEqual([]);
        expect(r.notCleaned).toEqual([]);
        if (study === 'thread-sweep.json') {
          // The offerings' topologies, the self-managed server on EC2 among them.
          expect(new Set(r.plan.cells.map((c) => c.variant.engine?.kind))).toEqual(
            new Set(['aurora-mysql', 'rds-mysql', 'self-managed']),
          );
          // A self-managed server's memory is the CloudWatch agent's CWAgent mem_available (the rehearsal
          // publishes this machine's MemAvailable for its emulated instances), as FreeableMemory in bytes.
          for (const c of r.plan.cells.filter((cell) => cell.variant.engine?.kind === 'self-managed')) {
            for (const s of c.steps) {
              const memory = (await tableRows<ServerMetricRow>('server_metrics', c.cellId, s.stepId)).filter(
                (m) => m.metric === 'FreeableMemory',
              );
              expect(memory.map((m) => `${m.role} ${m.source} ${m.unit}`)).toEqual(
                expect.arrayContaining(['writer cloudwatch Bytes']),
              );
              expect(memory.every((m) => m.value > 0)).toBe(true);
            }
          }
        }
        if (study === 'serverless-vs-provisioned.json') {
          // The cluster is created with its capacity range, and each step of a db.serverless cell collects
          // its writer's ServerlessDatabaseCapacity and ACUUtilization (the stand-in's constant maximum).
          const serverless = r.plan.cells.filter((c) => c.variant.serverless !== undefined);
          expect(serverless.length).toBeGreaterThan(0);
          for (const c of serverless) {
            expect(lines).toEqual(
              expect.arrayContaining([
                expect.stringMatching(
                  new RegExp(`ServerlessV2ScalingConfiguration ${acuRange(c.variant.serverless!)} ACUs`),
                ),
              ]),
            );
            for (const s of c.steps) {
              const capacity = (await tableRows<ServerMetricRow>('server_metrics', c.cellId, s.stepId)).filter(
                (m) => m.metric === 'ServerlessDatabaseCapacity' || m.metric === 'ACUUtilization',
              );
              expect(new Set(capacity.map((m) => `${m.role} ${m.metric} ${m.unit} ${m.value}`))).toEqual(
                new Set([
                  `writer ServerlessDatabaseCapacity Count ${c.variant.serverless!.maxAcu}`,
                  'writer ACUUtilization Percent 100',
                ]),
              );
            }
          }
        }
        if (study === 'io-optimized-vs-standard.json') {
          // Both storage configurations reach CreateDBCluster as RDS names them.
          expect(lines).toEqual(
            expect.arrayContaining([
              expect.stringMatching(/StorageType aurora-iopt1/),
              expect.stringMatching(/StorageType aurora(,|$)/),
            ]),
          );
        }
        if (study === 'write-forwarding.json') {
          // What the local plan says about writes sent to a reader, said by the rehearsal too.
          expect(lines).toEqual(
            expect.arrayContaining([
              expect.stringMatching(
                new RegExp(
                  /^\[refused\] workloads\[\d+\]: workload "rw-reader" on variant "r5-xl-fwd" sends/.source +
                    / writes to a reader: .*MariaDB replicas cannot forward writes; left out of the AWS/.source +
                    / rehearsal$/.source,
                ),
              ),
            ]),
          );
        }
      },
      600_000,
    );
  });
}
