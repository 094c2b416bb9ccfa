/**
 * What a rehearsal has started so far, set by each phase.
 * The teardown stops what is there whichever phase failed.
 */
import type { AwsClients } from '../backends/aws/clients';
import type { AthenaOnTrino } from './athena-on-trino';
import type { CloudWatchPublisher } from './cloudwatch-publisher';
import type { RehearsalIam } from './iam/rehearsal-iam';
import type { LambdaSandbox } from './lambda-sandbox';
import type { MotoClients } from './moto-clients';
import type { MotoServer } from './moto-server';
import type { RdsEmulation } from './rds-emulation';
import type { RehearsalResult } from './rehearsal-options';
import type { SsmAgentEmulation } from './ssm-agent';
import type { TrinoServer } from './trino-server';

export interface RehearsalState {
  moto?: MotoServer;
  /** Whether this rehearsal holds the shared account, to release it. */
  held: boolean;
  raw?: MotoClients;
  publisher?: CloudWatchPublisher;
  rds?: RdsEmulation;
  agent?: SsmAgentEmulation;
  clients?: AwsClients;
  trino?: TrinoServer;
  athenaOnTrino?: AthenaOnTrino;
  /** The rehearsal's own sandbox. A shared account's stays with the account. */
  sandbox?: LambdaSandbox;
  functionsOf: () => RehearsalResult['functions'];
  gated?: RehearsalIam;
  /** What the run was doing, for the error a dead moto server gives. */
  doing: string;
  readonly leftBehind: string[];
  readonly notCleaned: string[];
  readonly safetyNetDeleted: string[];
}

export function newRehearsalState(): RehearsalState {
  return {
    held: false,
    functionsOf: () => new Map(),
    doing: 'the rehearsal set up its standing infrastructure',
    leftBehind: [],
    notCleaned: [],
    safetyNetDeleted: [],
  };
}
