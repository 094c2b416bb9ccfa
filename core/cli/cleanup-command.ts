/**
 * The `cleanup` command. It settles and removes what local runs and AWS rehearsals left behind.
 * It imports only the registry, because the run command's modules doubled what a `cleanup` costs.
 */
import { cleanupAllRuns, defaultRunRoot } from '../backends/local/registry';
import { settleRehearsal } from '../backends/local/rehearsal-record';
import { removeAbandonedStaging } from '../backends/local/import-staging';

/**
 * `cleanup`'s exit code when it kept a run it could not settle.
 * 75 is EX_TEMPFAIL in sysexits.h, which invites the user to retry.
 * The next `cleanup` settles the run once it has ended or the lake is writable.
 */
const CLEANUP_KEPT_EXIT_CODE = 75;

/** What `cleanup` prints, and its exit code. It is 0 only when every run it found is settled. */
export async function cleanupLocalLeftovers(
  runRoot?: string,
  lakeDir?: string,
): Promise<{ text: string; exitCode: number }> {
  const runs = await cleanupAllRuns(runRoot ?? defaultRunRoot(), { settle: settleRehearsal });
  const { skippedLive, settled, compacted, unsettled, unproven } = runs;
  // What killed imports left in the lake's staging folder, never a live import's.
  const removed = [...runs.removed, ...(lakeDir === undefined ? [] : removeAbandonedStaging(lakeDir))];
  const kept = unsettled.length + skippedLive.length;
  const lines = [
    removed.length > 0
      ? `cleaned up: ${removed.join(', ')}`
      : kept + unproven.length > 0
        ? 'nothing removed'
        : 'nothing left behind by a finished aurora-bench',
  ];
  if (settled.length > 0)
    lines.push(`recorded as aborted in the lake (they were still marked running): ${settled.join(', ')}`);
  if (compacted.length > 0) lines.push(`their step rows compacted to Parquet: ${compacted.join(', ')}`);
  if (unsettled.length > 0)
    lines.push(
      `still marked running: the lake refused the write, so their claims are kept for the next ` +
        `cleanup: ${unsettled.join('; ')}`,
    );
  if (unproven.length > 0)
    lines.push(
      `left as they are, not proven to be run directories (no aurora-bench run marker: an older version's ` +
        `runs?): ${unproven.join(', ')}; remove them by hand once nothing of theirs runs`,
    );
  if (skippedLive.length > 0) lines.push(`left alone (their aurora-bench is still running): ${skippedLive.join(', ')}`);
  if (kept === 0) return { text: lines.join('\n'), exitCode: 0 };
  const why = [
    ...unsettled.map((u) => {
      const at = u.indexOf(' (');
      return at < 0
        ? `${u}: the lake refused to record its end`
        : `${u.slice(0, at)}: the lake refused to record its end ${u.slice(at + 1)}`;
    }),
    ...skippedLive.map((runId) => `${runId}: its aurora-bench is still running`),
  ];
  lines.push(`not settled, kept for a later cleanup (exit ${CLEANUP_KEPT_EXIT_CODE}): ${why.join('; ')}`);
  return { text: lines.join('\n'), exitCode: CLEANUP_KEPT_EXIT_CODE };
}
