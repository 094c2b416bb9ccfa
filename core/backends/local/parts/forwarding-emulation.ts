import type { CellResources, RunnerJob } from '../../../backend';

/** How long an emulated write-forwarding step waits for the replicas to catch up before it starts. */
export const REPLICA_CATCH_UP_S = 300;

/** The client-side emulation of write forwarding. It is this backend's own script. */
export const WF_EMULATION_SCRIPT = 'wf_emulation.lua';

/** A job as this backend runs it. The emulation adds a second connection to the writer. */
export type LocalRunnerJob = RunnerJob & { readonly extraPort?: number };

/**
 * MariaDB replicas cannot forward writes. So a job whose writes go to a reader runs the client-side emulation.
 * It reads on the reader and writes on a second connection to the writer, with the consistency level's GTID waits.
 * The step's own consistency option, if it sets one, stays.
 */
export function emulatingForwarding(job: RunnerJob, resources: CellResources): LocalRunnerJob {
  if (job.writeForwarding === undefined || job.phase !== 'run') return job;
  if (!resources.writer) throw new Error(`cell ${resources.cellId} has no writer endpoint yet`);
  const base =
    job.workload === 'oltp_write_only'
      ? 'oltp_write_only'
      : job.workload === 'rw_consistency.lua'
        ? 'rw_consistency'
        : 'oltp_read_write';
  const ownLevel = job.sysbenchArgs.some((a) => a.startsWith('--consistency='));
  return {
    ...job,
    workload: WF_EMULATION_SCRIPT,
    sysbenchArgs: [
      ...job.sysbenchArgs,
      `--wf_base=${base}`,
      `--wf_writer_port=${resources.writer.port}`,
      ...(ownLevel ? [] : [`--consistency=${job.writeForwarding.consistency}`]),
    ],
    extraPort: resources.writer.port,
  };
}
