/**
 * "What the study found, and this run": one row per finding of the write-forwarding study (Aurora MySQL
 * 3.04 on db.r5.xlarge, 1 writer + 1 reader), each answered from this run's own findings with the figure
 * its tables show, or marked not testable here with why. The cells quote the other tables' figures at
 * their rounding, so they can be checked against them like any sentence.
 */
import { pct } from '../../format';
import type { RatioFinding } from '../findings';
import type { TableBlock } from '../model';

/** A ratio's verdict in the cells' words ("within this run's noise", "higher in this run*"). */
export type Cell = (r: RatioFinding, higherIsBetter: boolean) => string;

export interface StudyInputs {
  readonly local: boolean;
  /** rw reader/writer at each thread count. */
  readonly rw: readonly { readonly threads: number; readonly ratio: RatioFinding }[];
  readonly controls: readonly { readonly threads: number; readonly ratio: RatioFinding }[];
  /** Where the reader was higher, per thread count, in the Answer's words. */
  readonly shares: string | null;
  readonly scaleOut: readonly { readonly vsWriter: RatioFinding | null; readonly vsOne: RatioFinding | null }[];
  readonly stale: readonly { readonly level: string; readonly text: string }[];
  readonly global: { readonly tps: RatioFinding | null; readonly tail: RatioFinding | null } | null;
}

const span = (rs: readonly RatioFinding[], cell: Cell): string => {
  const est = rs.map((r) => r.estimate!).sort((a, b) => a - b);
  const words = new Set(rs.map((r) => cell(r, true)));
  const range = est.length === 1 ? pct(est[0], 0) : `${pct(est[0], 0)} to ${pct(est[est.length - 1], 0)}`;
  return `${range}${words.size === 1 ? `, all ${[...words][0]}` : ' (verdicts per row in its table)'}`;
};

export function studyTable(s: StudyInputs, cell: Cell): TableBlock {
  const rows: [string, string][] = [];
  const perThreads = (xs: StudyInputs['rw']): string =>
    xs.map((x) => `t${x.threads} ${pct(x.ratio.estimate, 0)} ${cell(x.ratio, true)}`).join('; ');
  const rw = s.rw.filter((x) => x.ratio.estimate !== null);
  if (rw.length > 0)
    rows.push(['read-write: reader a little ahead of the writer at 32 threads or fewer, behind above', perThreads(rw)]);
  const controls = s.controls.filter((x) => x.ratio.estimate !== null);
  rows.push([
    'write-only: the reader never reaches the writer, the gap widening from 64 threads',
    s.local
      ? 'not testable here: locally both steps send every write to the writer' +
        (controls.length > 0 ? ` (the control: ${perThreads(controls)})` : '')
      : 'see the Writer vs reader table',
  ]);
  if (s.shares !== null)
    rows.push(['read share: the reader ahead from 70:30 at 32 threads, from 80:20 at 64 and 128', s.shares]);
  const vsWriter = s.scaleOut.flatMap((x) => (x.vsWriter?.estimate != null ? [x.vsWriter] : []));
  const vsOne = s.scaleOut.flatMap((x) => (x.vsOne?.estimate != null ? [x.vsOne] : []));
  if (vsWriter.length > 0)
    rows.push([
      'scale-out: 2 readers x 32 threads raise the cluster’s TPS over the writer at 64 (reads above 70:30)',
      `summed over the writer ${span(vsWriter, cell)}` +
        (vsOne.length > 0 ? `; over 1 reader ${span(vsOne, cell)}` : '') +
        (s.local ? '; one machine: no capacity is added' : ''),
    ]);
  if (s.stale.length > 0)
    rows.push([
      'consistency: EVENTUAL may read stale data; SESSION sees the session’s own writes',
      `stale read-backs ${s.stale.map((x) => `${x.level} ${x.text}`).join(', ')}` +
        (s.local ? ' (EVENTUAL: the emulation’s read-back timing)' : ''),
    ]);
  if (s.global !== null && s.global.tail !== null && s.global.tail.estimate !== null)
    rows.push([
      'consistency: GLOBAL waits for the replica, so its queries take longer than EVENTUAL’s',
      `GLOBAL p95 ${pct(s.global.tail.estimate, 0)} of EVENTUAL's ${cell(s.global.tail, false)}` +
        (s.global.tps?.estimate != null ? `; TPS ${pct(s.global.tps.estimate, 0)} ${cell(s.global.tps, true)}` : ''),
    ]);
  if (s.local) {
    rows.push([
      'aurora_fwd_writer_max_connections_pct caps forwarded sessions (0 turns forwarding off); idle ones close',
      'not testable here: MariaDB has no write forwarding',
    ]);
    rows.push(['failover keeps forwarding through the reader endpoint', 'not testable here: no failover locally']);
  }
  return {
    title: 'What the study found, and this run',
    head: ['the study found', 'this run'],
    rows,
    folded: true,
    notes: ['Each figure is one of the tables’ below, at their rounding; * as there.'],
  };
}
