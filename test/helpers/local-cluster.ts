/**
 * A local cluster in tests (core/backends/local/cluster.ts): stop it outright, and measure its
 * readers' lag once. The local backend itself stops servers through its run registry and samples
 * lag continuously, so these live with the tests.
 */
import { HeartbeatProbe, type ClusterInfo } from '../../core/backends/local/cluster';
import { queryServer, stopServer, type StopOutcome } from '../../core/backends/local/mariadb-server';

/** Stops every member (readers first would not matter: they are independent processes) and removes their dirs. */
export async function stopCluster(
  cluster: Pick<ClusterInfo, 'writer' | 'readers'>,
  graceMs = 15_000,
): Promise<Record<string, StopOutcome>> {
  const members = [...cluster.readers, cluster.writer];
  const outcomes = await Promise.all(members.map((s) => stopServer(s, { graceMs })));
  return Object.fromEntries(members.map((s, i) => [s.instanceId, outcomes[i]!]));
}

/** One-shot lag of every reader: a probe over one-shot client calls. */
export async function measureReplicaLag(
  cluster: Pick<ClusterInfo, 'writer' | 'readers'>,
  maxWaitMs = 5_000,
): Promise<Map<string, number>> {
  const probe = new HeartbeatProbe(
    (sql) => queryServer(cluster.writer, sql),
    cluster.readers.map((r) => ({ instanceId: r.instanceId, exec: (sql: string) => queryServer(r, sql) })),
    maxWaitMs,
  );
  return probe.probe();
}
