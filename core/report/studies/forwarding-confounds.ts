/**
 * What else differs between a local pair's writer and reader steps, besides where the reads ran: the
 * writer's deadlocks in each (the emulation splits each transaction, so its writes run without the reads on
 * the writer), the reader lag each step started at, and whether the steps ran in a fixed order.
 */
import { fixed } from '../../format';
import type { Context, StepGroup } from '../context';
import { mean } from '../stats';
import { replicaLagOf } from './forwarding-timeline';

/** The writer's side of one step: its deadlocks/s (null: not measured) and the reader lag it started at. */
export interface StepSide {
  readonly deadlocks: number | null;
  /** The writer instance's own CommitThroughput/s over the step's full seconds (writerCommits); null: not measured. */
  readonly commits: number | null;
  readonly lagAtStartMs: number | null;
  readonly startedAt: string;
}

/** The writer instance's Deadlocks/s over the step, the mean over its repeats; null when not measured. */
function writerDeadlocks(ctx: Context, g: StepGroup): number | null {
  const cells = new Set(g.ok.map((r) => r.cell_id));
  const xs = ctx.data.metrics.filter(
    (m) => m.metric === 'Deadlocks' && m.role === 'writer' && m.step_id === g.stepId && cells.has(m.cell_id),
  );
  return xs.length > 0 ? mean(xs.map((m) => m.avg_value)) : null;
}

/**
 * The writer's commits/s as the server counted them, without the window's first and last datapoint: those cover
 * seconds the load filled only in part, and a reader step's load starts later in its window (the emulation
 * first waits for the replica to catch up), so a plain mean reads its commits low. In both roles of a pair
 * every transaction commits once on the writer (wf_emulation.lua), so the ratio checks sysbench's TPS ratio.
 */
function writerCommits(ctx: Context, g: StepGroup): number | null {
  const cells = new Set(g.ok.map((r) => r.cell_id));
  const xs = ctx.data.metrics.filter(
    (m) => m.metric === 'CommitThroughput' && m.role === 'writer' && m.step_id === g.stepId && cells.has(m.cell_id),
  );
  return xs.length > 0 ? mean(xs.map((m) => m.steady_value ?? m.avg_value)) : null;
}

export function sideOf(ctx: Context, g: StepGroup): StepSide {
  const first = [...g.ok.map((r) => r.started_at)].sort()[0] ?? '';
  return {
    deadlocks: writerDeadlocks(ctx, g),
    commits: writerCommits(ctx, g),
    lagAtStartMs: replicaLagOf(ctx, g).lagAtStartMs,
    startedAt: first,
  };
}

/** Reader step's writer commits over the writer step's: the server's own reader/writer ratio; null: unmeasured. */
export function serverRatio(p: SidedPair): number | null {
  const w = p.writerSide.commits;
  const r = p.readerSide.commits;
  return w !== null && r !== null && w > 0 ? r / w : null;
}

export interface SidedPair {
  readonly threads: number;
  readonly writerSide: StepSide;
  readonly readerSide: StepSide;
}

const dl = (x: number | null): string => (x === null ? '-' : fixed(x, 2));
const lagS = (x: number | null): string => (x === null ? '-' : fixed(x / 1000, 2));

/** "t32 0.25 vs 0.00, t128 9.65 vs 0.06": the writer's deadlocks/s, writer step vs reader step. */
function deadlocksText(pairs: readonly SidedPair[]): string | null {
  const measured = pairs.filter((p) => p.writerSide.deadlocks !== null && p.readerSide.deadlocks !== null);
  if (measured.length === 0) return null;
  return measured.map((p) => `t${p.threads} ${dl(p.writerSide.deadlocks)} vs ${dl(p.readerSide.deadlocks)}`).join(', ');
}

/**
 * The emulation runs a read-write transaction's reads on the reader and its writes, in a transaction of their
 * own, on a writer that serves nothing else (client/workloads/wf_emulation.lua); in the writer step the same
 * server runs the reads too, so each write holds its row locks longer. The deadlocks show the difference.
 */
export function splitTransactionSentence(pairs: readonly SidedPair[], readerAhead: boolean): string {
  const d = deadlocksText(pairs);
  return (
    'The emulation splits each transaction: its reads run on the reader, its writes in a transaction of their ' +
    'own on the writer, which then serves only the writes, so their row locks are likely held for less time ' +
    'than in the writer step' +
    (d !== null ? ` (writer deadlocks/s, writer step vs reader step: ${d})` : '') +
    (readerAhead ? '; that, not forwarding, can explain a reader ahead.' : '.')
  );
}

const lags = (pairs: readonly SidedPair[], side: (p: SidedPair) => StepSide): string =>
  pairs.map((p) => lagS(side(p).lagAtStartMs)).join(' / ');

/** A control pair whose steps started at different reader lags: the step order, not only the noise. */
export function controlOrderText(pairs: readonly SidedPair[], drainedMs: number, withDeadlocks = true): string | null {
  const lagged = pairs.some(
    (p) =>
      p.writerSide.lagAtStartMs !== null &&
      p.readerSide.lagAtStartMs !== null &&
      Math.abs(p.writerSide.lagAtStartMs - p.readerSide.lagAtStartMs) > drainedMs,
  );
  if (!lagged) return null;
  const d = withDeadlocks ? deadlocksText(pairs) : null;
  return (
    `its steps did not start alike: the reader was ${lags(pairs, (p) => p.writerSide)} s behind when the ` +
    `writer steps started, ${lags(pairs, (p) => p.readerSide)} s ` +
    `for the reader steps` +
    (d !== null ? ` (writer deadlocks/s: ${d})` : '') +
    ', so the ratio carries the step order as well as the noise'
  );
}

/** Every pair's writer step ran before its reader step: the order is fixed, not interleaved. */
export const writerAlwaysFirst = (pairs: readonly SidedPair[]): boolean =>
  pairs.length > 1 && pairs.every((p) => p.writerSide.startedAt < p.readerSide.startedAt);

/**
 * On one machine the replica applies its backlog on the CPUs the writer and the clients use: a lag at a
 * step's start can slow a writer step too, and a fixed order puts it on one side of every ratio.
 */
export const FIXED_ORDER_WORDS =
  'Every writer step ran before its reader step (the order was fixed, not interleaved), and on one machine a ' +
  'replica still catching up takes CPU from the writer too: the order is part of every reader/writer ratio here.';
