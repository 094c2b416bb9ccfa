/**
 * The `run --aws-rehearsal` command around runRehearsal: Ctrl-C (stop the workflow, then tear
 * down through the safety net and stop everything), the closing results and what was left, and the
 * exit code (0: succeeded and nothing left; 1: failed, or something was left; 130: interrupted).
 */
import { printErr, printOut } from './terminal';
import type { RehearsalOptions } from '../rehearsal/run-rehearsal';
import { runRehearsal } from '../rehearsal/run-rehearsal';

export type RehearsalCommandOptions = Omit<RehearsalOptions, 'signal' | 'log'>;

export async function runRehearsalCommand(options: RehearsalCommandOptions): Promise<number> {
  const log = (line: string) => printOut(line + '\n');
  const abort = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) {
      printErr(`\n${signal}: stopping the rehearsal and tearing everything down (press again to force)...\n`);
      abort.abort();
    } else {
      // The exit hooks kill every server, shell and the moto server this process started.
      printErr('forced exit: every process of the rehearsal is killed\n');
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const r = await runRehearsal({ ...options, signal: abort.signal, log });
    log('');
    log(r.results);
    const id = r.plan.runId;
    if (r.leftBehind.length > 0)
      log(`the workflow LEFT BEHIND (on AWS this would keep running and cost money):\n  ${r.leftBehind.join('\n  ')}`);
    if (r.notCleaned.length > 0) log(`the rehearsal could not remove:\n  ${r.notCleaned.join('\n  ')}`);
    if (r.error === 'ControlPlaneDiedError' && r.notCleaned.length === 0) {
      log(
        'nothing left running: every MariaDB server, emulated client and the moto server stopped; the ' +
          'rehearsal directory removed (what the run had in moto went with it)',
      );
    } else if (r.leftBehind.length === 0 && r.notCleaned.length === 0) {
      log(
        'nothing left behind: no RDS cluster, instance or parameter group, no client instance or secret in ' +
          'moto; every MariaDB server, emulated client and the moto server stopped; the rehearsal directory removed',
      );
    }
    const clean = r.leftBehind.length === 0 && r.notCleaned.length === 0;
    if (r.status === 'ABORTED') {
      log(`rehearsal of run ${id} aborted; everything was torn down.`);
      return 130;
    }
    if (r.status === 'SUCCEEDED') {
      log(`rehearsal of run ${id} succeeded: ${r.output?.steps ?? 0} steps.`);
      return clean ? 0 : 1;
    }
    log(`rehearsal of run ${id} FAILED (${r.error}):\n${r.cause ?? ''}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
