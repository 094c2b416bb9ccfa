/**
 * `aurora-bench run SPEC --aws`: validate, plan and run the account preflight here (refusing before
 * anything is created, with the same checks as `aurora-bench preflight` and the workflow's PlanRun),
 * start an execution of the deployed state machine with the same input the console would take,
 * and follow it until it ends, printing the same progress lines as a local run (core/workflow/progress.ts).
 */
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { AwsClients } from '../backends/aws/clients';
import { preflightRefused } from '../backends/aws/preflight';
import { preparePlanFromFile } from '../plan/prepare';
import { HistoryProgress, progressLine } from '../workflow/progress';
import { readStackOutputs } from './aws-stack';
import { preflightPlan, renderPreflightReport } from './preflight-aws';

export interface RunOnAwsOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly stackName: string;
  /** A price file merged over prices/aws-prices.json for the budget check. */
  readonly prices?: string;
  readonly log: (line: string) => void;
  /** Region of the stack (default: the spec's region). */
  readonly region?: string;
  readonly sfn?: SFNClient;
  readonly cfn?: CloudFormationClient;
  /** SDK clients of the preflight (tests: a moto endpoint). */
  readonly clients?: AwsClients;
  /** Poll interval while following the execution. */
  readonly pollMs?: number;
}

/** The execution input: what a user pastes into the console's "Start execution" too. */
function executionInput(spec: unknown, scripts: Record<string, string>, runId: string): string {
  return JSON.stringify({ spec, scripts, runId });
}

export async function runOnAws(options: RunOnAwsOptions): Promise<number> {
  const { spec, scripts, plan, notes } = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), { backend: 'aws' });
  for (const n of notes) options.log(`[${n.level}] ${n.path}: ${n.message}`);
  const region = options.region ?? plan.region;
  const cfn = options.cfn ?? new CloudFormationClient({ region });
  const sfn = options.sfn ?? new SFNClient({ region });
  // Refused here, before an execution exists (PlanRun runs the same checks again for console starts).
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
  const outputs = await readStackOutputs(cfn, options.stackName);
  const started = await sfn.send(new StartExecutionCommand({ stateMachineArn: outputs.stateMachineArn, name: plan.runId, input: executionInput(spec, scripts, plan.runId) }));
  const executionArn = started.executionArn!;
  options.log(`started ${executionArn} (run ${plan.runId}); stop it from the console or with Ctrl-C here and everything is torn down by the safety net`);
  let lastEventId = 0;
  const history = new HistoryProgress();
  for (;;) {
    // Status first, history second: once the status is final so is the history, and reading it
    // after the status cannot miss the events of an execution that ended in between.
    const desc = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    let nextToken: string | undefined;
    // Distributed Map cells run as child executions: the parent's history shows the map run, the
    // per-step lines come from the children, which the console links to.
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 200, ...(nextToken ? { nextToken } : {}) }));
      for (const ev of page.events ?? []) {
        if ((ev.id ?? 0) <= lastEventId) continue; // each poll re-reads the history from the start
        lastEventId = ev.id ?? lastEventId;
        const progress = history.toProgressEvent(ev);
        const line = progress && progressLine(progress, () => plan.duets?.length ?? plan.cells.length);
        if (line) options.log(line);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    if (desc.status !== 'RUNNING') {
      options.log(`execution ${desc.status}${desc.error ? `: ${desc.error}` : ''}${desc.cause ? `\n${desc.cause}` : ''}`);
      options.log(`results: aurora-bench results --aws --run ${plan.runId}`);
      return desc.status === 'SUCCEEDED' ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 15_000));
  }
}
