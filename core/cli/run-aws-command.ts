/**
 * The `run --aws` command around runOnAws.
 * The first Ctrl-C has the follower ask whether to stop the execution or leave it.
 * A second one while it asks exits at once with 130 and leaves the execution running.
 */
import { printErr, printOut } from './terminal';
import { runOnAws } from './run-aws';
import { askOnInterrupt } from './interrupt-choice';

export interface RunAwsCommandOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly stackName: string;
  readonly region?: string;
  readonly runId?: string;
}

export async function runAwsCommand(options: RunAwsCommandOptions): Promise<number> {
  const interrupt = new AbortController();
  let executionArn: string | undefined;
  process.on('SIGINT', () => {
    if (!interrupt.signal.aborted) {
      interrupt.abort();
      return;
    }
    printErr(
      `\naurora-bench: second Ctrl-C: exiting without stopping the ` +
        `execution` +
        (executionArn
          ? `; it goes on: stop it with aws stepfunctions stop-execution --execution-arn ${executionArn}`
          : '') +
        `\n`,
    );
    process.exit(130);
  });
  return runOnAws({
    ...options,
    log: (l) => printOut(l + '\n'),
    interrupt: interrupt.signal,
    onInterrupt: (arn) => {
      executionArn = arn;
      return askOnInterrupt({ input: process.stdin, output: process.stderr }, arn);
    },
  });
}
