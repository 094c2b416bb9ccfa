/**
 * What moto does not do, put between the handlers' SDK clients and moto.
 * Performance Insights answers with no data.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PIClient } from '@aws-sdk/client-pi';
import { makeAwsClients, type AwsClients } from '../backends/aws/clients';
import { ensurePostgresTemplate, findPostgresTools } from '../backends/local/postgres-server';
import { ensureTemplate } from '../backends/local/template';
import { startAthena } from './athena-emulation';
import { checkAwsCliReachesMoto } from './aws-cli';
import { catalogueCheck } from './catalogue-check';
import { refuseBareClientPaths } from './client-home-check';
import { CloudWatchPublisher } from './cloudwatch-publisher';
import type { ControlPlane } from './control-plane';
import { bootCommands, bootMachines } from './instance-boot';
import { MOTO_CREDENTIALS } from './moto-server';
import { RdsEmulation } from './rds-emulation';
import type { Preflight } from './rehearsal-preflight';
import type { RehearsalOptions } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import { REHEARSAL_VOLUME_PERIOD_S } from './rehearsal-timings';
import type { RunClaim } from './run-claim';
import { answer, interceptClient } from './sdk-intercept';
import { SsmAgentEmulation } from './ssm-agent';

export interface Emulations {
  /** The handlers' clients, with the emulations on them. */
  readonly clients: AwsClients;
  readonly rds: RdsEmulation;
  readonly agent: SsmAgentEmulation;
}

/** GetResourceMetrics answers as for an instance without PI data. */
function answerNoPiData(pi: PIClient): void {
  interceptClient(pi, 'auroraBenchRehearsalPi', async (command, input, forward) =>
    command === 'GetResourceMetrics'
      ? answer({
          Identifier: input['Identifier'],
          AlignedStartTime: input['StartTime'],
          AlignedEndTime: input['EndTime'],
          MetricList: [],
        })
      : forward(),
  );
}

export async function startEmulations(
  options: RehearsalOptions,
  pre: Preflight,
  { dir, tracker }: RunClaim,
  control: ControlPlane,
  state: RehearsalState,
  lagS: number,
  log: (line: string) => void,
): Promise<Emulations> {
  const { plan, versions } = pre;
  const { moto, raw, config } = control;
  const template = await ensureTemplate(versions.tools, versions.serverVersion, undefined, 'rds');
  const cw = (state.publisher = new CloudWatchPublisher({
    cloudwatch: raw.cloudwatch,
    lagS,
    volumePeriodS: REHEARSAL_VOLUME_PERIOD_S,
    log,
  }));
  const rds = (state.rds = new RdsEmulation({
    tools: versions.tools,
    template,
    serverVersion: versions.serverVersion,
    dir: join(dir, 'db'),
    secrets: raw.secrets,
    tracker,
    checkParameters: options.checkParameters ?? catalogueCheck,
    postgres: async () => {
      const tools = findPostgresTools();
      return { tools, template: await ensurePostgresTemplate(tools) };
    },
    ownedRoot: dir,
    ...(options.masterPassword ? { masterPassword: options.masterPassword } : {}),
    onMembersChanged: (m) => cw.membersChanged(m),
    log,
  }));
  const machines = options.boot
    ? await bootMachines(options.boot(config), raw.s3, plan.region, join(dir, 'agent-package'), log)
    : undefined;
  const agent = (state.agent = new SsmAgentEmulation({
    dir: join(dir, 'clients'),
    ...(machines ? { machines } : {}),
    region: plan.region,
    motoEndpoint: moto.endpoint,
    credentials: MOTO_CREDENTIALS,
    s3: raw.s3,
    tracker,
    extraPath: pre.cliPath,
    bootCommands: bootCommands(config),
    // A self-managed server's EC2 metrics come from its mariadbd.
    onServerChanged: (instanceId, server) => cw.ec2ServerChanged(instanceId, server),
    log,
  }));
  await mkdir(join(dir, 'cli-check'));
  await checkAwsCliReachesMoto(agent.env(join(dir, 'cli-check')), config.bucket);
  const clients = (state.clients = makeAwsClients({ ...control.common, maxAttempts: 2 }));
  // Middleware added first runs first: adjustments, then the client-home check, then the emulations.
  options.adjustClients?.(clients);
  refuseBareClientPaths(clients.ssm);
  rds.install(clients.rds);
  agent.install(clients);
  await startAthena(options, pre, control, clients.athena, state, log);
  answerNoPiData(clients.pi);
  cw.start();
  return { clients, rds, agent };
}
