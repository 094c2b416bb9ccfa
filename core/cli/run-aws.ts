/**
 * `aurora-bench run SPEC --aws` validates, plans and runs the account preflight before anything exists.
 * It then starts an execution of the deployed state machine and follows it to its end.
 */
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { AwsClients } from '../backends/aws/clients';
import { preflightRefused } from '../backends/aws/preflight';
import { preparePlanFromFile } from '../plan/prepare';
import { followExecution, INTERRUPTED_EXIT_CODE } from './aws-follow';
import { readStackOutputs } from './aws-stack';
import type { InterruptChoice } from './interrupt-choice';
import { planNotesLine } from './plan-view';
import { preflightPlan, renderPreflightReport } from './preflight-aws';

export interface RunOnAwsOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly stackName: string;
  /** A price file merged over prices/aws-prices.json for the budget check. */
  readonly prices?: string;
  readonly log: (line: string) => void;
  /** Region of the stack. The default is the spec's region. */
  readonly region?: string;
  /** The run id, which is also the execution's name. */
  readonly runId?: string;
  readonly sfn?: SFNClient;
  readonly cfn?: CloudFormationClient;
  /** SDK clients of the preflight, such as a test's moto endpoint. */
  readonly clients?: AwsClients;
  /** Poll interval while following the execution. */
  readonly pollMs?: number;
  /** Aborted on Ctrl-C. The follower then asks onInterrupt what to do with the execution. */
  readonly interrupt?: AbortSignal;
  /** Stop the execution or leave it running. The default is to stop. */
  readonly onInterrupt?: (executionArn: string) => Promise<InterruptChoice>;
}

/** The execution input, which a user can also paste into the console's "Start execution". */
function executionInput(spec: unknown, scripts: Record<string, string>, runId: string): string {
  return JSON.stringify({ spec, scripts, runId });
}

export async function runOnAws(options: RunOnAwsOptions): Promise<number> {
  const { spec, scripts, plan, notes } = preparePlanFromFile(
    options.specFile,
    join(options.repoRoot, 'client', 'workloads'),
    { backend: 'aws', ...(options.runId !== undefined ? { runId: options.runId } : {}) },
  );
  const notesLine = planNotesLine(notes, [options.specFile, '--aws']);
  if (notesLine !== null) options.log(notesLine);
  const region = options.region ?? plan.region;
  const cfn = options.cfn ?? new CloudFormationClient({ region });
  const sfn = options.sfn ?? new SFNClient({ region });
  // Refused here, before an execution exists. PlanRun repeats the checks for console starts.
  const report = await preflightPlan(plan, spec, {
    stackName: options.stackName,
    region,
    repoRoot: options.repoRoot,
    cfn,
    ...(options.prices !== undefined ? { prices: options.prices } : {}),
    ...(options.clients !== undefined ? { clients: options.clients } : {}),
  });
  options.log(renderPreflightReport(report, spec.name));
  if (preflightRefused(report)) return 1;
  if (options.interrupt?.aborted) {
    options.log('interrupted before the execution started: nothing was started');
    return INTERRUPTED_EXIT_CODE;
  }
  const outputs = await readStackOutputs(cfn, options.stackName);
  // The run id is the execution's name, so it needs no claim in the lake.
  // StartExecution starts no second execution of a name for 90 days.
  // See Step Functions API Reference, StartExecution "name".
  // The id's UTC second and random suffix keep it new after that.
  const started = await sfn.send(
    new StartExecutionCommand({
      stateMachineArn: outputs.stateMachineArn,
      name: plan.runId,
      input: executionInput(spec, scripts, plan.runId),
    }),
  );
  const executionArn = started.executionArn!;
  options.log(
    `started ${executionArn} (run ${plan.runId}); Ctrl-C here asks whether to stop it (everything is torn ` +
      `down) or leave it running`,
  );
  return followExecution({
    sfn,
    executionArn,
    plan: { ...plan, region },
    log: options.log,
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.interrupt !== undefined ? { interrupt: options.interrupt } : {}),
    ...(options.onInterrupt !== undefined ? { onInterrupt: () => options.onInterrupt!(executionArn) } : {}),
  });
}
