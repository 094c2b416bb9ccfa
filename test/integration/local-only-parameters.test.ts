/**
 * A local-only what-if from the spec to a real server: localOnlyParameters planned by planRun and
 * applied by the local backend to real mariadbd processes (thread pool on), noted "local only",
 * and only for the variant that asks for them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CellResources, RunContext } from '../../core/backend';
import { LocalBackend } from '../../core/backends/local/local-backend';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import { query } from '../../core/backends/local/sql-client';
import { LOCAL_LOGINS } from '../../core/backends/local/template';
import { planRun } from '../../core/plan/plan';
import type { Plan } from '../../core/plan/types';
import { validateSpec } from '../../core/experiment/validate';

const REPO = join(__dirname, '..', '..');

let lakeDir: string;
let runRoot: string;
let backend: LocalBackend;
let plan: Plan;
let run: RunContext;
const provisioned: Record<string, CellResources> = {};

/** @@variables of a server, read as the benchmark login over TCP (as sysbench connects). */
async function variablesOf(resources: CellResources, names: readonly string[]): Promise<string[]> {
  const { tools } = await checkLocalDependencies();
  const file = join(runRoot, `sbtest-${resources.writer!.port}.cnf`);
  writeFileSync(
    file,
    `[client]\nuser=${LOCAL_LOGINS.sbtest.user}\npassword=${LOCAL_LOGINS.sbtest.password}\nhost=127.0.0.1\n` +
      `port=${resources.writer!.port}\nprotocol=tcp\n`,
  );
  const rows = await query(
    { client: tools.client, clientDefaultsFile: file },
    `SELECT ${names.map((n) => `@@${n}`).join(', ')}`,
  );
  return rows[0]!.map((v) => v ?? '');
}

beforeAll(() => {
  lakeDir = mkdtempSync(join(tmpdir(), 'ab-local-only-lake-'));
  runRoot = mkdtempSync(join(tmpdir(), 'ab-local-only-runs-'));
  backend = new LocalBackend({ lakeDir, runRoot, repoRoot: REPO });
  const spec = validateSpec(
    {
      name: 'local-only',
      engine: { version: '3.10.4' },
      variants: [
        { name: 'aurora', instanceClass: 'db.t3.medium', instanceParameters: { max_prepared_stmt_count: 50000 } },
        {
          name: 'whatif',
          instanceClass: 'db.t3.medium',
          instanceParameters: { max_prepared_stmt_count: 50000 },
          localOnlyParameters: { thread_handling: 'pool-of-threads', innodb_flush_neighbors: 0 },
        },
      ],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'rw', test: 'oltp_read_write' }],
    },
    'local-only.json',
  );
  plan = planRun(spec, { backend: 'local', runId: 'local-only-test' });
  run = {
    runId: plan.runId,
    specName: plan.specName,
    backend: 'local',
    region: plan.region,
    engineVersion: plan.engine.version,
    dt: plan.dt,
    ttlHours: 1,
  };
});

afterAll(async () => {
  await backend.cleanupAll({ includeLive: true });
  rmSync(lakeDir, { recursive: true, force: true });
  rmSync(runRoot, { recursive: true, force: true });
});

describe('localOnlyParameters on the local backend', () => {
  it(
    'applies the what-if settings to the variant that has them, says "local only", and leaves the Aurora ' +
      'variant at the MariaDB default',
    async () => {
      // Act
      for (const cell of plan.cells) provisioned[cell.variant.name] = await backend.provisionCell(run, cell);
      const whatIf = await variablesOf(provisioned['whatif']!, [
        'thread_handling',
        'innodb_flush_neighbors',
        'max_prepared_stmt_count',
      ]);
      const aurora = await variablesOf(provisioned['aurora']!, ['thread_handling', 'max_prepared_stmt_count']);

      // Assert: on the servers
      expect(whatIf).toEqual(['pool-of-threads', '0', '50000']);
      expect(aurora).toEqual(['one-thread-per-connection', '50000']);
      // Assert: in the plan and in the provision notes the run records
      expect(plan.notes).toContainEqual(
        expect.objectContaining({
          level: 'info',
          path: 'variants[1].localOnlyParameters',
          message: expect.stringMatching(
            /^local only: thread_handling=pool-of-threads, innodb_flush_neighbors=0 applied/,
          ),
        }),
      );
      expect(provisioned['whatif']!.notes).toContainEqual(
        expect.objectContaining({
          level: 'info',
          path: 'variants[name=whatif].localOnlyParameters.thread_handling',
          message: expect.stringMatching(
            new RegExp(
              /^local only: thread_handling=pool-of-threads set on MariaDB .* \(option file\) for/.source +
                / this what-if; Aurora does not let you set it$/.source,
            ),
          ),
        }),
      );
      expect(provisioned['aurora']!.notes.filter((n) => n.message.startsWith('local only'))).toEqual([]);
    },
  );
});
