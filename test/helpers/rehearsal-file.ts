/**
 * What every rehearsal test file sets up: one moto server, one work folder and one RehearsalAccount
 * for the whole file (started before its first test, stopped and removed after its last), and
 * runRehearsal with the CLI's wiring (bin/aws-rehearsal.ts) and the tests' short timings. A
 * rehearsal uses the account only when given it (RehearsalOptions.account); otherwise it resets the
 * moto server and starts from an empty account.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { rehearsalWiring } from '../../bin/aws-rehearsal';
import { RehearsalAccount } from '../../core/rehearsal/rehearsal-account';
import { runRehearsal, type RehearsalOptions, type RehearsalResult } from '../../core/rehearsal/run-rehearsal';
import { startMoto, type MotoServer } from '../aws/moto';

export const REPO_ROOT = join(__dirname, '..', '..');

export interface RehearsalFile {
  readonly moto: MotoServer;
  /** The file's own folder under TMPDIR, removed after its last test. */
  readonly work: string;
  /**
   * An account on the file's moto server that its rehearsals may share (RehearsalOptions.account:
   * standing infrastructure created once, the Task functions kept warm between rehearsals).
   */
  readonly account: RehearsalAccount;
}

/**
 * Registers the file's beforeAll (moto, the work folder named `prefix`...) and afterAll (moto
 * stopped, the folder removed, then `cleanup`); the returned object is filled in by beforeAll.
 */
export function rehearsalFile(prefix: string, cleanup?: () => void | Promise<void>): RehearsalFile {
  let moto: MotoServer | undefined;
  let work: string | undefined;
  let account: RehearsalAccount | undefined;
  beforeAll(() => {
    moto = startMoto();
    work = mkdtempSync(join(tmpdir(), prefix));
    // The functions run as nobody when the tests run as root: their folders are under this one.
    chmodSync(work, 0o711);
    mkdirSync(join(work, 'account'), { mode: 0o711 });
    account = new RehearsalAccount(moto.endpoint, join(work, 'account'));
  });
  afterAll(async () => {
    await cleanup?.();
    await account?.dispose();
    moto?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`${prefix}: used before the file's beforeAll ran`);
    return value;
  };
  return {
    get moto() {
      return started(moto);
    },
    get work() {
      return started(work);
    },
    get account() {
      return started(account);
    },
  };
}

/** The rehearsal's wiring, as the CLI's (one synthesis per process, cached on disk). */
export const wiring = rehearsalWiring(REPO_ROOT);

/**
 * How long a rehearsal may take before rehearse() aborts it (as Ctrl-C would: the workflow stops and
 * everything is torn down) and fails with its timed lines: under the tests' 600-s Jest timeout, so a
 * rehearsal that hangs says where, instead of Jest's bare timeout.
 */
const REHEARSAL_DEADLINE_MS = 480_000;

/**
 * Where each rehearsal's timed lines are kept after it ends: test-output/rehearsal-timings/, so a
 * slow gate shows which phase of which rehearsal took the time without a rerun.
 */
function keepTimedLines(specFile: string, timed: readonly string[]): void {
  const dir = join(REPO_ROOT, 'test-output', 'rehearsal-timings');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${basename(specFile)}-${process.pid}-${Date.now()}.txt`), `${timed.join('\n')}\n`);
}

/**
 * A whole rehearsal of `specFile` on the file's moto server, with CloudWatch datapoints 1 s late and
 * the definition's Wait states at runRehearsal's default (RehearsalOptions.pollMs, 1 s; longer waits
 * saved no more CPU). `lines` is what it printed; `timed` the same lines with the
 * seconds since the start, for a failed expectation to show where the time went. Past `deadlineMs` the
 * rehearsal is aborted and its timed lines printed to stderr at once (in case the abort itself hangs),
 * then thrown.
 */
export async function rehearse(
  file: RehearsalFile,
  specFile: string,
  extra: Partial<RehearsalOptions> = {},
  deadlineMs = REHEARSAL_DEADLINE_MS,
): Promise<{ r: RehearsalResult; lines: string[]; timed: string[] }> {
  const lines: string[] = [];
  const timed: string[] = [];
  const started = Date.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    process.stderr.write(
      `rehearsal of ${specFile} still running after ${deadlineMs / 1000} s: aborting it. Its lines so far:\n` +
        `${timed.join('\n')}\n`,
    );
    deadline.abort();
  }, deadlineMs);
  const signal = extra.signal ? AbortSignal.any([extra.signal, deadline.signal]) : deadline.signal;
  try {
    const r = await runRehearsal({
      specFile,
      repoRoot: REPO_ROOT,
      ...wiring,
      motoEndpoint: file.moto.endpoint,
      metricsLagS: 1,
      log: (l) => {
        lines.push(l);
        timed.push(`${((Date.now() - started) / 1000).toFixed(1)} ${l}`);
      },
      ...extra,
      signal,
    });
    if (deadline.signal.aborted)
      throw new Error(`rehearsal of ${specFile} aborted after ${deadlineMs / 1000} s; its lines:\n${timed.join('\n')}`);
    keepTimedLines(specFile, timed);
    return { r, lines, timed };
  } finally {
    clearTimeout(timer);
  }
}
