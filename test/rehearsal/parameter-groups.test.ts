/**
 * A cell's parameter groups are in effect on every instance before it is ready: the AWS backend's
 * cluster code (core/backends/aws/cluster.ts) against moto behind the rehearsal's RDS emulation,
 * which reports the apply statuses moto does not (applying, pending-reboot) and runs real MariaDB
 * servers. The wait before a new group's first use (botocore rds service-2.json,
 * CreateDBClusterParameterGroup: "wait at least 5 minutes") is shortened to 2 s here.
 */
import { join } from 'node:path';
import { DescribeDBClustersCommand, ModifyDBClusterParameterGroupCommand } from '@aws-sdk/client-rds';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CellResources, ReadyState, RunContext } from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import { ensureTemplate } from '../../core/backends/local/template';
import { validateSpec } from '../../core/experiment/validate';
import { planRun } from '../../core/plan/plan';
import type { CellPlan } from '../../core/plan/types';
import { ProcessTracker } from '../../core/rehearsal/process-tracker';
import { RdsEmulation } from '../../core/rehearsal/rds-emulation';
import { catalogueCheck } from '../../core/rehearsal/catalogue-check';
import {
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  rawClients,
  REGION,
  type RawClients,
} from '../aws/fixtures';
import type { MotoServer } from '../aws/moto';
import { rehearsalFile } from '../helpers/rehearsal-file';

const SETTLE_S = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let moto: MotoServer;
let raw: RawClients;
let config: AwsBackendConfig;
let clients: AwsClients;
let secrets: SecretsManagerClient;
let emulation: RdsEmulation;
let tracker: ProcessTracker;
let work: string;
const rdsCalls: { command: string; input: Record<string, unknown> }[] = [];

const file = rehearsalFile('abr-pg-', async () => {
  await emulation.shutdown();
  tracker.dispose();
  destroyAwsClients(clients);
  secrets.destroy();
  destroyRawClients(raw);
});

beforeAll(async () => {
  ({ moto, work } = file);
  raw = rawClients(moto.endpoint);
  config = await createStandingInfrastructure(moto.endpoint, raw, { parameterGroupSettleS: SETTLE_S });
  const versions = await checkLocalDependencies();
  const template = await ensureTemplate(versions.tools, versions.serverVersion, undefined, 'rds');
  secrets = new SecretsManagerClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  tracker = new ProcessTracker();
  emulation = new RdsEmulation({
    tools: versions.tools,
    template,
    serverVersion: versions.serverVersion,
    dir: join(work, 'db'),
    secrets,
    tracker,
    checkParameters: catalogueCheck,
    applyingMs: 1500,
    rebootMs: 1000,
  });
  clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  clients.rds.middlewareStack.add(
    (next, context) => async (args) => {
      rdsCalls.push({ command: context.commandName as string, input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'recordRdsCalls' },
  );
  emulation.install(clients.rds);
}, 300_000);

function cellOf(): { run: RunContext; cell: CellPlan } {
  const spec = validateSpec(
    {
      name: 'pg',
      engine: { version: '3.04.0' },
      region: REGION,
      variants: [
        {
          name: 'wf',
          instanceClass: 'db.r6g.large',
          az: 'a',
          readers: 1,
          // An instance-level parameter in the cluster parameter group: every instance inherits it.
          clusterParameters: { max_prepared_stmt_count: 23456 },
          writeForwarding: { enabled: true, consistency: 'SESSION' },
        },
      ],
      data: { tables: 1, tableSize: 100 },
      workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2] }],
      ttlHours: 1,
    },
    'pg.json',
  );
  const plan = planRun(spec, { backend: 'aws', runId: `pg-${Math.random().toString(16).slice(2, 8)}` });
  return {
    run: {
      runId: plan.runId,
      specName: plan.specName,
      backend: 'aws',
      region: plan.region,
      engineVersion: plan.engine.version,
      dt: plan.dt,
      ttlHours: plan.ttlHours,
    },
    cell: plan.cells[0]!,
  };
}

/** checkCellReady as the workflow polls it (every 250 ms here), with every detail it gave on the way. */
async function pollReady(
  backend: AwsBackend,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources,
): Promise<{ state: ReadyState; details: string[] }> {
  const details: string[] = [];
  const deadline = Date.now() + 120_000;
  for (;;) {
    const state = await backend.checkCellReady(run, cell, resources);
    if (state.ready) return { state, details };
    details.push(state.detail);
    if (Date.now() > deadline) throw new Error(`not ready within 120 s: ${details.at(-1)}`);
    await sleep(250);
  }
}

describe('parameter groups in effect before anything is measured', () => {
  const { run, cell } = cellOf();
  const backend = () => new AwsBackend({ config, clients, now: () => new Date() });
  const names = cellNames(run.runId, cell.cellId);
  let resources: CellResources;

  it('creates the cluster once the groups settled; ready when every instance, reader too, is in-sync', async () => {
    // Act
    const provisioned = await backend().provisionCell(run, cell);
    const clustersRightAfter =
      (await clients.rds.send(new DescribeDBClustersCommand({}))).DBClusters?.map((c) => c.DBClusterIdentifier) ?? [];
    const { state, details } = await pollReady(backend(), run, cell, provisioned);
    resources = state.resources;

    // Assert
    expect(clustersRightAfter).not.toContain(names.clusterId);
    expect(details[0]).toMatch(/^parameter groups settling until \S+ before the cluster uses them/);
    expect(details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `instance ${names.readerId(1)}: cluster parameter group ${names.clusterParameterGroup} applying ` +
              `\\(max_prepared_stmt_count, aurora_replica_read_consistency\\)`,
          ),
        ),
      ]),
    );
    const statuses = JSON.parse(state.resources.backendState['parameterApplyStatus']!) as {
      instanceId: string;
      status: string;
    }[];
    expect(new Set(statuses.map((s) => s.instanceId))).toEqual(new Set([names.writerId, names.readerId(1)]));
    expect(new Set(statuses.map((s) => s.status))).toEqual(new Set(['in-sync']));
  }, 300_000);

  it('reboots the instances whose group a change left pending-reboot, and is ready once they run it', async () => {
    // Arrange: a retried ProvisionCell sets the group's values again under running instances.
    rdsCalls.length = 0;
    await backend().provisionCell(run, cell);

    // Act
    const { state, details } = await pollReady(backend(), run, cell, resources);

    // Assert
    expect(details[0]).toMatch(
      new RegExp(
        `instance ${names.writerId}: cluster parameter group ${names.clusterParameterGroup} pending-reboot, rebooted`,
      ),
    );
    expect(details[0]).toMatch(
      new RegExp(
        `instance ${names.readerId(1)}: cluster parameter group ${names.clusterParameterGroup} ` +
          `pending-reboot, rebooted`,
      ),
    );
    expect(
      rdsCalls
        .filter((c) => c.command === 'RebootDBInstanceCommand')
        .map((c) => c.input['DBInstanceIdentifier'])
        .sort(),
    ).toEqual([names.readerId(1), names.writerId].sort());
    expect(state.ready).toBe(true);
  }, 300_000);

  it('fails the cell naming the parameter and the instance when a group does not hold a value asked for', async () => {
    // Arrange: the write-forwarding level changed behind the workflow's back.
    await clients.rds.send(
      new ModifyDBClusterParameterGroupCommand({
        DBClusterParameterGroupName: names.clusterParameterGroup,
        Parameters: [
          { ParameterName: 'aurora_replica_read_consistency', ParameterValue: 'EVENTUAL', ApplyMethod: 'immediate' },
        ],
      }),
    );

    // Act
    const outcome = pollReady(backend(), run, cell, resources);

    // Assert
    await expect(outcome).rejects.toMatchObject({ name: 'ConfigurationNotInEffectError' });
    await expect(outcome).rejects.toThrow(
      new RegExp(
        `aurora_replica_read_consistency: asked SESSION, instance ${names.readerId(1)} runs EVENTUAL ` +
          `\\(cluster parameter group`,
      ),
    );
  }, 300_000);
});
