/**
 * Follows an AWS execution of the workflow with the same progress lines a local run prints.
 * Cells run in a Distributed Map and their steps in a nested one, so most lines are in child histories.
 * Each Map Run's children are listed with ListExecutions' mapRunArn, which excludes stateMachineArn.
 * See botocore stepfunctions service-2.json ListExecutionsInput.mapRunArn.
 * Each child's history is read until it has ended and been read to the end.
 *
 * Ctrl-C asks whether to stop the execution or leave it running.
 * A stopped execution ends ABORTED, and the safety net's rule then tears its cells down.
 */
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { Plan } from '../plan/types';
import { HistoryProgress, RunProgressLines } from '../workflow/progress';
import type { InterruptChoice } from './interrupt-choice';

export interface FollowOptions {
  readonly sfn: SFNClient;
  readonly executionArn: string;
  readonly plan: Pick<Plan, 'runId' | 'backend' | 'cells' | 'maxConcurrency' | 'duets' | 'region'>;
  readonly log: (line: string) => void;
  readonly pollMs?: number;
  /** Aborted on Ctrl-C. */
  readonly interrupt?: AbortSignal;
  /** What to do after Ctrl-C. The default is to stop. */
  readonly onInterrupt?: () => Promise<InterruptChoice>;
  readonly now?: () => number;
}

/** 128 + SIGINT, whichever the user chose. */
export const INTERRUPTED_EXIT_CODE = 130;

interface Followed {
  readonly arn: string;
  readonly history: HistoryProgress;
  lastEventId: number;
  /** Ended and read to its end, so not read again. */
  done: boolean;
}

interface MapRun {
  /** The execution whose history started it. */
  readonly owner: string;
  /** Listed once after its owner ended, so no child can be added any more. */
  settled: boolean;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

function consoleUrl(region: string, executionArn: string): string {
  return `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${executionArn}`;
}

/** Follows the execution to its end or to the user's choice after Ctrl-C. Returns the exit code. */
export async function followExecution(options: FollowOptions): Promise<number> {
  const { sfn, executionArn, plan, log } = options;
  const now = options.now ?? Date.now;
  const lines = new RunProgressLines(plan, now);
  const executions = new Map<string, Followed>([
    [executionArn, { arn: executionArn, history: new HistoryProgress(), lastEventId: 0, done: false }],
  ]);
  const mapRuns = new Map<string, MapRun>();
  let stopSent = false;
  log(`plan: ${lines.etaLine()}`);

  /** Reads one execution's new events. Each read starts from the first page, since the API has no "after event N". */
  const readHistory = async (f: Followed): Promise<void> => {
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: f.arn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }),
      );
      for (const ev of page.events ?? []) {
        if ((ev.id ?? 0) <= f.lastEventId) continue;
        f.lastEventId = ev.id ?? f.lastEventId;
        const mapRunArn = ev.mapRunStartedEventDetails?.mapRunArn;
        if (mapRunArn !== undefined && !mapRuns.has(mapRunArn))
          mapRuns.set(mapRunArn, { owner: f.arn, settled: false });
        const progress = f.history.toProgressEvent(ev);
        const line = progress && lines.line(progress);
        if (line) log(line);
      }
      nextToken = page.nextToken;
    } while (nextToken);
  };

  /** The children of every Map Run not yet settled. Ended ones are marked so their last read is the last. */
  const listChildren = async (): Promise<Map<string, boolean>> => {
    const ended = new Map<string, boolean>();
    for (const [mapRunArn, run] of mapRuns) {
      if (run.settled) continue;
      const ownerDone = executions.get(run.owner)?.done === true;
      let nextToken: string | undefined;
      do {
        const page = await sfn.send(
          new ListExecutionsCommand({ mapRunArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }),
        );
        // Newest first, so reversed to follow them in the order they started.
        for (const item of [...(page.executions ?? [])].reverse()) {
          if (item.executionArn === undefined) continue;
          if (!executions.has(item.executionArn))
            executions.set(item.executionArn, {
              arn: item.executionArn,
              history: new HistoryProgress(),
              lastEventId: 0,
              done: false,
            });
          ended.set(item.executionArn, item.status !== 'RUNNING');
        }
        nextToken = page.nextToken;
      } while (nextToken);
      if (ownerDone) run.settled = true;
    }
    return ended;
  };

  for (;;) {
    // Status first, histories second. Once a status is final so is its history.
    // So a read after the status cannot miss an execution that ended in between.
    const desc = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    const parent = executions.get(executionArn)!;
    await readHistory(parent);
    if (desc.status !== 'RUNNING') parent.done = true;
    // Children through the parent's Map Run, grandchildren through theirs, until nothing is new.
    for (let depth = 0; depth < 4; depth++) {
      const before = executions.size;
      const ended = await listChildren();
      for (const [arn, f] of executions) {
        if (arn === executionArn || f.done) continue;
        await readHistory(f);
        if (ended.get(arn) === true) f.done = true;
      }
      if (executions.size === before) break;
    }
    if (desc.status !== 'RUNNING') {
      log(`execution ${desc.status}${desc.error ? `: ${desc.error}` : ''}${desc.cause ? `\n${desc.cause}` : ''}`);
      log(`results: aurora-bench results --aws --run ${plan.runId}`);
      if (stopSent) return INTERRUPTED_EXIT_CODE;
      return desc.status === 'SUCCEEDED' ? 0 : 1;
    }
    await sleep(options.pollMs ?? 15_000, stopSent ? undefined : options.interrupt);
    if (options.interrupt?.aborted && !stopSent) {
      const choice = options.onInterrupt ? await options.onInterrupt() : 'stop';
      if (choice === 'leave') {
        log(
          `left running: execution ${executionArn} goes on (its cells are torn down when it ends, or by the ` +
            `safety net past the spec's ttlHours)`,
        );
        log(`  follow it: ${consoleUrl(plan.region, executionArn)}`);
        log(`  stop it:   aws stepfunctions stop-execution --execution-arn ${executionArn}`);
        return INTERRUPTED_EXIT_CODE;
      }
      await sfn.send(
        new StopExecutionCommand({
          executionArn,
          error: 'UserInterrupted',
          cause: 'stopped with Ctrl-C in aurora-bench run --aws',
        }),
      );
      stopSent = true;
      log(
        `stopping: StopExecution sent for ${executionArn}; it ends ABORTED and the safety net's rule on ` +
          `ABORTED executions tears down every cell of run ${plan.runId}`,
      );
    }
  }
}
