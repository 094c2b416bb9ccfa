/**
 * The `run --aws-rehearsal` command around runRehearsal.
 * Ctrl-C stops the workflow, then tears down through the safety net.
 * It exits 0 when the run succeeded and left nothing, and 1 otherwise.
 * A stopped run exits as a local run does, with 128 plus the signal's number.
 */
import { printOut } from './terminal';
import { listenForStopSignals, stoppedExitCode, stopReason } from './stop-signals';
import type { RehearsalOptions } from '../rehearsal/run-rehearsal';
import { runRehearsal } from '../rehearsal/run-rehearsal';

export type RehearsalCommandOptions = Omit<RehearsalOptions, 'signal' | 'log'>;

export async function runRehearsalCommand(options: RehearsalCommandOptions): Promise<number> {
  const log = (line: string) => printOut(line + '\n');
  // The exit hooks kill every server, shell and moto server this process started.
  const stop = listenForStopSignals('rehearsal', 'forced exit: every process of the rehearsal is killed');
  try {
    const r = await runRehearsal({ ...options, signal: stop.signal, log });
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
      log(`rehearsal of run ${id} aborted (${r.cause ?? stopReason(stop.signal.reason)}); everything was torn down.`);
      return stoppedExitCode(stop.signal.reason);
    }
    if (r.status === 'SUCCEEDED') {
      log(`rehearsal of run ${id} succeeded: ${r.output?.steps ?? 0} steps.`);
      return clean ? 0 : 1;
    }
    log(`rehearsal of run ${id} FAILED (${r.error}):\n${r.cause ?? ''}`);
    return 1;
  } finally {
    stop.dispose();
  }
}
