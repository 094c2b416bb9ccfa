/**
 * The end of every rehearsal, whatever phase it reached.
 * It stops the functions first and moto last, then checks that nothing is left.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { destroyAwsClients } from '../backends/aws/clients';
import { isAlive, waitForExit } from '../backends/local/processes';
import { processesMentioning } from '../backends/local/registry';
import type { RehearsalAccount } from './rehearsal-account';
import type { RehearsalState } from './rehearsal-state';
import type { RunClaim } from './run-claim';

/** The shared account is released once its sandbox is idle. */
async function stopAll(state: RehearsalState, account: RehearsalAccount | undefined): Promise<void> {
  const { notCleaned } = state;
  const ran = state.functionsOf();
  await state.sandbox?.dispose().catch((e: unknown) => notCleaned.push(`Lambda sandbox: ${(e as Error).message}`));
  if (state.held) account?.release();
  state.functionsOf = () => ran;
  await state.publisher?.stop();
  await state.agent?.shutdown().catch((e: unknown) => notCleaned.push(`clients: ${(e as Error).message}`));
  await state.rds?.shutdown().catch((e: unknown) => notCleaned.push(`servers: ${(e as Error).message}`));
  if (state.clients) destroyAwsClients(state.clients);
  for (const c of Object.values(state.raw ?? {})) (c as { destroy(): void }).destroy();
  await state.athenaOnTrino?.close().catch((e: unknown) => notCleaned.push(`Athena on Trino: ${(e as Error).message}`));
  await state.trino?.stop();
}

export async function tearDown(
  state: RehearsalState,
  { dir, runDir, tracker }: RunClaim,
  account: RehearsalAccount | undefined,
  removeDir: () => void,
): Promise<void> {
  const { notCleaned, moto } = state;
  await stopAll(state, account);
  const motoPid = moto?.pid;
  await moto?.stop();
  tracker.killAllSync();
  // A killed process can take seconds to finish exiting on a loaded machine.
  // Wait for that before calling anything left behind.
  const killed = [
    ...tracker.live(),
    ...processesMentioning(dir),
    ...(motoPid !== undefined && motoPid > 0 ? [motoPid] : []),
  ];
  await Promise.all(killed.map((pid) => waitForExit(pid, 10_000)));
  for (const pid of tracker.live()) notCleaned.push(`process ${pid}`);
  for (const pid of processesMentioning(dir)) notCleaned.push(`process ${pid} (${dir})`);
  if (motoPid !== undefined && motoPid > 0 && isAlive(motoPid)) notCleaned.push(`moto server (pid ${motoPid})`);
  if (moto?.logFile && existsSync(moto.logFile)) notCleaned.push(`moto log ${moto.logFile}`);
  tracker.dispose();
  process.off('exit', removeDir);
  await rm(dir, { recursive: true, force: true });
  if (existsSync(dir)) notCleaned.push(`directory ${dir}`);
  else await rm(runDir, { recursive: true, force: true });
}
