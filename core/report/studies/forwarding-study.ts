/**
 * "What the study found, and this run": one row per finding of the write-forwarding study (Aurora MySQL
 * 3.04 on db.r5.xlarge, 1 writer + 1 reader), each answered from this run's own findings with the figure
 * its tables show, or marked not testable here with why. The cells quote the other tables' figures at
 * their rounding, so they can be checked against them like any sentence.
 */
import { fixed, pct } from '../../format';
import type { RatioFinding } from '../findings';
import type { TableBlock } from '../model';

/** A ratio's verdict in the cells' words ("within this run's noise", "higher in this run*"). */
export type Cell = (r: RatioFinding, higherIsBetter: boolean) => string;

export interface StudyInputs {
  readonly local: boolean;
  /** rw reader/writer at each thread count. */
  readonly rw: readonly {
    readonly threads: number;
    readonly ratio: RatioFinding;
    /** The writer's own commits/s, reader step over writer step (forwarding-confounds.ts); null: not measured. */
    readonly server?: number | null;
  }[];
  readonly controls: readonly {
    readonly threads: number;
    readonly ratio: RatioFinding;
    /** The writer and reader steps' latency percentile, as the Writer vs reader table prints it. */
    readonly latency?: { readonly writer: string; readonly reader: string } | null;
  }[];
  /** The latency percentile the tables print (95). */
  readonly percentile?: number;
  /** Locally, the rw pair whose writer step deadlocked most: the writer's deadlocks/s in each step; null: none. */
  readonly splitDeadlocks?: { readonly threads: number; readonly writer: number; readonly reader: number } | null;
  /** Where the reader was higher, per thread count, in the Answer's words. */
  readonly shares: string | null;
  /** The share grid's state: a threshold at some thread count, scattered cells, or every cell within noise. */
  readonly sharesState: 'threshold' | 'scattered' | 'within-noise' | null;
  /** Each thread count's grid against the study's claim for it (forwarding.ts); null: no grid. */
  readonly sharesVerdict?: string | null;
  readonly scaleOut: readonly {
    readonly vsWriter: RatioFinding | null;
    readonly vsOne: RatioFinding | null;
    /** reads:writes label of its mix ("50:50"); null for the stock mix. */
    readonly share: string | null;
    readonly readShare: number | null;
  }[];
  readonly stale: readonly {
    readonly level: string;
    readonly text: string;
    readonly stale: number;
    readonly checks: number;
  }[];
  readonly global: {
    /** The most the replica lagged during GLOBAL's step, s; null: not measured. */
    readonly globalLagMaxS?: number | null;
    /** The lag under which a replica counts as drained, s. */
    readonly drainedS?: number;
    readonly tps: RatioFinding | null;
    readonly avg: RatioFinding | null;
    readonly tail: RatioFinding | null;
    readonly percentile: number;
    /** p99 over p50 of GLOBAL's and EVENTUAL's steps: how widely each level's times vary. */
    readonly spread: { readonly global: number; readonly eventual: number } | null;
    /** EVENTUAL's step started this far behind (s), over the drained threshold; null: drained or not measured. */
    readonly eventualBehindS: number | null;
  } | null;
}

const apart = (r: RatioFinding): boolean => r.direction === 'higher' || r.direction === 'lower';

/** rw: the study has the reader a little ahead at 32 threads or fewer and behind above. */
function rwVerdict(rw: StudyInputs['rw'], local: boolean): string {
  const against = rw.filter(
    (x) => (x.threads > 32 && x.ratio.direction === 'higher') || (x.threads <= 32 && x.ratio.direction === 'lower'),
  );
  if (against.length > 0)
    return (
      `contradicts in this run at ${against.map((x) => `t${x.threads}`).join(', ')}` +
      (local ? ' (the emulation’s split transaction, not forwarding, can explain it)' : '')
    );
  const with_ = rw.filter(
    (x) => (x.threads > 32 && x.ratio.direction === 'lower') || (x.threads <= 32 && x.ratio.direction === 'higher'),
  );
  return with_.length === rw.length ? 'agrees in this run' : 'not resolved: within this run’s noise';
}

/** Scale-out: the study has 2 readers ahead of the writer at read shares above 70:30. */
function scaleOutRun(rows: StudyInputs['scaleOut'], local: boolean): { run: string; verdict: string } | null {
  const higher = rows.filter((x) => x.vsWriter?.direction === 'higher' && x.share !== null);
  if (higher.length === 0 || rows.some((x) => x.readShare === null)) return null;
  const low = higher.every((x) => x.readShare! <= 0.7);
  // Higher only below 70:30 with the shares above it within the noise: no pattern, not the study's reversed.
  const none = low && rows.some((x) => x.readShare! > 0.7 && x.vsWriter !== null && !apart(x.vsWriter));
  return {
    run: none ? ': no pattern resolved' : '',
    verdict: local
      ? 'not comparable: on one machine a second reader adds no capacity'
      : none
        ? 'not resolved: no pattern'
        : 'see its table',
  };
}

function staleVerdict(stale: StudyInputs['stale']): string {
  const of = (l: string) => stale.find((x) => x.level.toUpperCase() === l);
  const ev = of('EVENTUAL');
  const se = of('SESSION');
  if (ev === undefined || se === undefined) return 'not resolved: a level is missing';
  return ev.stale > 0 && se.stale === 0 ? 'agrees' : 'contradicts';
}

/** The study: GLOBAL's query times vary with the replica's lag, EVENTUAL's (local reads) are stable. */
function globalRow(g: NonNullable<StudyInputs['global']>, cell: Cell): [string, string] | null {
  const parts: string[] = [];
  // "119% of EVENTUAL's", not "119% higher": the figure is the ratio, the verdict its direction.
  const of = (name: string, r: RatioFinding): string =>
    `${name} ${pct(r.estimate, 0)} of EVENTUAL’s (${cell(r, false)})`;
  if (g.avg?.estimate != null) parts.push(of('avg', g.avg));
  if (g.tail?.estimate != null) parts.push(of(`p${g.percentile}`, g.tail));
  if (parts.length === 0 && g.spread === null) return null;
  const spread =
    g.spread !== null ? `; p99/p50 GLOBAL ${fixed(g.spread.global, 1)}×, EVENTUAL ${fixed(g.spread.eventual, 1)}×` : '';
  // The claim is about lag: a GLOBAL step at a drained replica had none for its times to vary with.
  const untested = g.globalLagMaxS != null && g.drainedS !== undefined && g.globalLagMaxS < g.drainedS;
  const verdict = untested
    ? `not tested: GLOBAL’s step ran at ${fixed(g.globalLagMaxS, 2)} s lag at most`
    : g.eventualBehindS !== null
      ? `not comparable: EVENTUAL’s step started ${fixed(g.eventualBehindS, 2)} s behind`
      : g.spread === null
        ? 'not resolved: no spread measured'
        : g.spread.global > g.spread.eventual
          ? 'agrees in this run (1 repeat)'
          : 'contradicts in this run (1 repeat)';
  return [`GLOBAL’s ${parts.join(', ')}${spread}`, verdict];
}

/** Every share's ratio over the writer, grouped by its cell's verdict in share order: "50:50 119%, 60:40 113% ...". */
function scaleOutCells(rows: StudyInputs['scaleOut'], cell: Cell): string | null {
  if (rows.some((x) => x.share === null || x.vsWriter?.estimate == null)) return null;
  const groups: { words: string; items: string[] }[] = [];
  for (const x of rows) {
    const words = cell(x.vsWriter!, true);
    const item = `${x.share} ${pct(x.vsWriter!.estimate, 0)}`;
    const last = groups[groups.length - 1];
    if (last?.words === words) last.items.push(item);
    else groups.push({ words, items: [item] });
  }
  return groups.map((g) => `${g.items.join(', ')} ${g.words}`).join('; ');
}

const span = (rs: readonly RatioFinding[], cell: Cell): string => {
  const est = rs.map((r) => r.estimate!).sort((a, b) => a - b);
  const words = new Set(rs.map((r) => cell(r, true)));
  const range = est.length === 1 ? pct(est[0], 0) : `${pct(est[0], 0)} to ${pct(est[est.length - 1], 0)}`;
  return `${range}${words.size === 1 ? `, all ${[...words][0]}` : ' (verdicts per row in its table)'}`;
};

/**
 * The emulation's biggest gap from Aurora, under every verdict: it splits each reader transaction in two, where
 * Aurora forwards the writes inside the one transaction, and that changes the writer's locking.
 */
function splitNote(d: StudyInputs['splitDeadlocks']): string {
  return (
    'Locally no row has the reader-to-writer hop, and the emulation splits each reader transaction in two ' +
    '(Aurora keeps one transaction), which changes locking' +
    (d != null
      ? ` (the writer's deadlocks/s at rw t${d.threads}: ${fixed(d.writer, 2)} in the writer step, ` +
        `${fixed(d.reader, 2)} in the reader step)`
      : '') +
    ': each verdict compares the emulation, not forwarding, with the study.'
  );
}

export function studyTable(s: StudyInputs, cell: Cell): TableBlock {
  const rows: [string, string, string][] = [];
  const perThreads = (xs: StudyInputs['rw']): string =>
    xs
      .map(
        (x) =>
          `t${x.threads} ${pct(x.ratio.estimate, 0)} ${cell(x.ratio, true)}` +
          (x.server != null ? ` (server ${pct(x.server, 0)})` : ''),
      )
      .join('; ');
  const rw = s.rw.filter((x) => x.ratio.estimate !== null);
  if (rw.length > 0)
    rows.push([
      'read-write: reader a little ahead of the writer at 32 threads or fewer, behind above',
      perThreads(rw),
      rwVerdict(rw, s.local),
    ]);
  const controls = s.controls.filter((x) => x.ratio.estimate !== null);
  rows.push([
    'write-only: the reader never reaches the writer, the gap widening from 64 threads',
    s.local
      ? 'locally both steps send every write to the writer' +
        (controls.length > 0 ? ` (the control: ${perThreads(controls)})` : '')
      : 'see the Writer vs reader table',
    s.local
      ? 'not comparable'
      : controls.every((x) => x.ratio.direction === 'lower')
        ? 'agrees in this run'
        : 'not resolved',
  ]);
  // The study's write-only latency claim ("latency 差距显著"), against the control's figures.
  const lat = controls.filter((x) => x.latency != null);
  if (s.local && lat.length > 0)
    rows.push([
      'write-only: the reader’s latency clearly higher than the writer’s (“latency 差距显著”)',
      `p${s.percentile ?? 95} ms writer vs reader: ` +
        lat.map((x) => `t${x.threads} ${x.latency!.writer} vs ${x.latency!.reader}`).join('; '),
      'not comparable (both steps send every write to the writer)',
    ]);
  if (s.shares !== null)
    rows.push([
      // The study's own words: 32 threads "读比例在超过 7:3 之后，读节点的效率会相比写节点更高"; 64 and 128
      // threads "读节点效率始终无法明显优于写节点".
      'read share: at 32 threads the reader ahead once reads exceed 70:30 (“超过 7:3”); at 64 and 128 threads ' +
        'the reader never clearly better than the writer (“始终无法明显优于写节点”)',
      s.shares,
      s.sharesState === 'threshold' && s.sharesVerdict != null
        ? s.sharesVerdict
        : s.sharesState === 'threshold'
          ? 'compare the thresholds'
          : s.sharesState === 'scattered'
            ? 'not resolved: scattered cells, no threshold'
            : 'not resolved: within this run’s noise',
    ]);
  const vsWriter = s.scaleOut.flatMap((x) => (x.vsWriter?.estimate != null ? [x.vsWriter] : []));
  const vsOne = s.scaleOut.flatMap((x) => (x.vsOne?.estimate != null ? [x.vsOne] : []));
  const pattern = scaleOutRun(s.scaleOut, s.local);
  if (vsWriter.length > 0)
    rows.push([
      'scale-out: 2 readers x 32 threads raise the cluster’s TPS over the writer at 64 (reads above 70:30)',
      `summed over the writer${scaleOutCells(s.scaleOut, cell)?.replace(/^/, ': ') ?? ` ${span(vsWriter, cell)}`}` +
        (pattern?.run ?? '') +
        (vsOne.length > 0 ? `; over 1 reader ${span(vsOne, cell)}` : ''),
      pattern?.verdict ??
        (s.local ? 'not comparable: on one machine a second reader adds no capacity' : 'see its table'),
    ]);
  if (s.stale.length > 0)
    rows.push([
      'consistency: EVENTUAL may read stale data; SESSION sees the session’s own writes',
      `stale read-backs ${s.stale.map((x) => `${x.level} ${x.text}`).join(', ')}` +
        (s.local ? ' (EVENTUAL: the emulation’s read-back timing)' : ''),
      staleVerdict(s.stale),
    ]);
  const global = s.global !== null ? globalRow(s.global, cell) : null;
  if (global !== null)
    rows.push([
      'consistency: GLOBAL’s query times vary with the replica’s lag; EVENTUAL’s, read locally, are stable',
      ...global,
    ]);
  if (s.local) {
    rows.push([
      'aurora_fwd_writer_max_connections_pct caps forwarded sessions (0 turns forwarding off); idle ones close',
      'MariaDB has no write forwarding',
      'not testable here',
    ]);
    rows.push(['failover keeps forwarding through the reader endpoint', 'no failover locally', 'not testable here']);
  }
  return {
    title: 'What the study found, and this run',
    head: ['the study found', 'this run', 'verdict'],
    rows,
    notes: [
      'Each figure is one of the tables’ below, at their rounding; * as there.',
      ...(s.local ? [splitNote(s.splitDeadlocks ?? null)] : []),
    ],
  };
}
