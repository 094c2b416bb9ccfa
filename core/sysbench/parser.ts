/**
 * Parses sysbench 1.0.x or 1.1.x output into ParsedOutput, and client_cpu.jsonl into samples.
 * Every form it reads is recorded in test/fixtures/sysbench/.
 * The 1.0 and 1.1 summaries differ only in the timing block. See sb_report_cumulative in src/sysbench.c.
 * The SQL statistics block is the same for both drivers. See db_report_cumulative in src/db_driver.c.
 * sysbench 0.4 and 0.5 are refused, because their numbers mean other things.
 * On 1.0.20 warmup ends at the last checkpoint report. Intervals before it are dropped.
 * Failures keep every interval printed before them.
 */
import { LATENCY_PERCENTILES } from './types';
import type {
  ClientCpuSample,
  HistogramBucket,
  Interval,
  LatencyPercentileKey,
  LatencySummary,
  ParsedOutput,
  ReadBackCounts,
  RunSummary,
} from './types';

export interface ParseOptions {
  /** sysbench's exit code from result.json, when known. */
  readonly exitCode?: number;
  /** The run's --percentile, used when the output does not say it. */
  readonly percentile?: number;
}

const NUM = '(-?\\d+(?:\\.\\d+)?)';
const TEXT_INTERVAL = new RegExp(
  `^\\[ ${NUM}s \\] thds: (\\d+) tps: ${NUM} qps: ${NUM} \\(r/w/o: ${NUM}/${NUM}/${NUM}\\) lat \\(ms,` +
    `(\\d+)%\\): ${NUM} err/s:? ${NUM} reconn/s: ${NUM}\\s*$`,
);
const QUEUE_LINE = new RegExp(`^\\[ ${NUM}s \\] queue length: (\\d+),? concurrency: (\\d+)\\s*$`);
const CHECKPOINT_LINE = new RegExp(`^\\[ ${NUM}s \\] Checkpoint report:`);
const HOOK_PREFIX = '{"aurora_bench":';
const READ_BACK_PREFIX = '{"aurora_bench_read_back":';
/**
 * One thread's counts object wherever it is in a line.
 * An older marker printed its text and newline in two writes, so objects could share a line.
 */
const READ_BACK_OBJECT = /\{"aurora_bench_read_back":\{[^{}]*\}\}/g;

/** One thread's read-after-write counts. Undefined for a line cut by a crash. */
function readBackLine(line: string): ReadBackCounts | undefined {
  try {
    const o = (JSON.parse(line) as { aurora_bench_read_back?: Record<string, unknown> }).aurora_bench_read_back ?? {};
    const n = (k: string): number => (typeof o[k] === 'number' && Number.isFinite(o[k]) ? o[k] : 0);
    return { checks: n('checks'), stale: n('stale'), foreign: n('foreign') };
  } catch {
    return undefined;
  }
}
const BANNER = /^sysbench (\d+)\.(\d+)(?:\.(\d+))?(\S*)/;
/** The summary heading of sysbench 0.4 and 0.5. See src/db_driver.c at branch 0.5 and sb_oltp.c at 0.4. */
const OLD_SUMMARY = 'OLTP test statistics:';
const HISTOGRAM_ROW = /^\s*(\d+(?:\.\d+)?) \|\**\s+(\d+)\s*$/;

interface SummaryBlock {
  checkpoint: boolean;
  reads?: number;
  writes?: number;
  other?: number;
  queries?: number;
  transactions?: number;
  tps?: number;
  qps?: number;
  errors?: number;
  reconnects?: number;
  totalTimeS?: number;
  events?: number;
  latMin?: number;
  latAvg?: number;
  latMax?: number;
  latPct?: number;
  latPctValue?: number;
  latSum?: number;
}

/** Summary lines, each with its regex and the block fields its numbers go to. */
const SUMMARY_LINES: readonly [RegExp, readonly (keyof SummaryBlock)[]][] = [
  [/^\s*read:\s+(\d+)\s*$/, ['reads']],
  [/^\s*write:\s+(\d+)\s*$/, ['writes']],
  [/^\s*other:\s+(\d+)\s*$/, ['other']],
  [new RegExp(`^\\s*transactions:\\s+(\\d+)\\s+\\(${NUM} per sec\\.\\)`), ['transactions', 'tps']],
  [new RegExp(`^\\s*queries:\\s+(\\d+)\\s+\\(${NUM} per sec\\.\\)`), ['queries', 'qps']],
  [new RegExp(`^\\s*ignored errors:\\s+(\\d+)\\s+\\(${NUM} per sec\\.\\)`), ['errors']],
  [new RegExp(`^\\s*reconnects:\\s+(\\d+)\\s+\\(${NUM} per sec\\.\\)`), ['reconnects']],
  [new RegExp(`^\\s*total time:\\s+${NUM}s\\s*$`), ['totalTimeS']],
  // 1.1's name for it. See sb_report_cumulative in src/sysbench.c at 1.1.0.
  [new RegExp(`^\\s*time elapsed:\\s+${NUM}s\\s*$`), ['totalTimeS']],
  [/^\s*total number of events:\s+(\d+)\s*$/, ['events']],
  [new RegExp(`^\\s*min:\\s+${NUM}\\s*$`), ['latMin']],
  [new RegExp(`^\\s*avg:\\s+${NUM}\\s*$`), ['latAvg']],
  [new RegExp(`^\\s*max:\\s+${NUM}\\s*$`), ['latMax']],
  [new RegExp(`^\\s*(\\d+)th percentile:\\s+${NUM}\\s*$`), ['latPct', 'latPctValue']],
  [new RegExp(`^\\s*sum:\\s+${NUM}\\s*$`), ['latSum']],
];

const CRASH_SIGNALS: Readonly<Record<number, string>> = {
  4: 'SIGILL',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  11: 'SIGSEGV',
};
const STOP_SIGNALS: Readonly<Record<number, string>> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

/** How much of a failed statement a FATAL line keeps. Enough to tell which statement it was. */
const QUERY_SHOWN = 120;
/** The longest FATAL line kept whole. The reason goes into the lake and the terminal. */
const FATAL_SHOWN = 400;

/**
 * A FATAL line without the bulk of the statement it quotes.
 * sysbench's drivers print the whole failed query. See check_error in src/drivers/mysql/drv_mysql.c.
 * A prepare's INSERT holds its batch of rows and runs to kilobytes.
 */
function clipFatal(line: string): string {
  const marker = " for query '";
  const at = line.indexOf(marker);
  if (at >= 0) {
    // The line may be cut by sysbench's own message buffer before the closing quote.
    const rest = line.slice(at + marker.length);
    const closing = /'((?: on connection \d+)?)\s*$/.exec(rest);
    const query = closing ? rest.slice(0, closing.index) : rest;
    if (query.length > QUERY_SHOWN) {
      const tail = closing ? `'${closing[1]}` : "'";
      return (
        line.slice(0, at + marker.length) +
        `${query.slice(0, QUERY_SHOWN)}...${tail} (a statement ` +
        `of ${closing ? '' : 'at least '}${query.length} characters)`
      );
    }
  }
  return line.length > FATAL_SHOWN ? `${line.slice(0, FATAL_SHOWN)}... (${line.length} characters)` : line;
}

function exitCodeReason(exitCode: number): string {
  if (exitCode > 128 && exitCode < 160) {
    const sig = exitCode - 128;
    if (CRASH_SIGNALS[sig]) return `sysbench crashed (signal ${sig} / exit ${exitCode})`;
    return (
      `sysbench was stopped by signal ${sig}` +
      (STOP_SIGNALS[sig] ? ` (${STOP_SIGNALS[sig]})` : '') +
      ` (exit ${exitCode})`
    );
  }
  return `sysbench exited with code ${exitCode}`;
}

function hookInterval(line: string): Interval | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined; // a line cut by a crash
  }
  const n = (k: string): number | undefined => (typeof o[k] === 'number' && Number.isFinite(o[k]) ? o[k] : undefined);
  const t = n('t');
  const threads = n('threads');
  const tps = n('tps');
  if (t === undefined || threads === undefined || tps === undefined) return undefined;
  const queueLength = n('queue_length');
  const concurrency = n('concurrency');
  return {
    t,
    threads,
    tps,
    qps: n('qps') ?? 0,
    readsPerS: n('reads_ps') ?? 0,
    writesPerS: n('writes_ps') ?? 0,
    otherPerS: n('other_ps') ?? 0,
    latencyMs: n('lat_ms') ?? 0,
    errorsPerS: n('errors_ps') ?? 0,
    reconnectsPerS: n('reconnects_ps') ?? 0,
    ...(queueLength !== undefined ? { queueLength } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
  };
}

function toSummary(b: SummaryBlock, percentile: number): RunSummary | null {
  if (b.transactions === undefined || b.queries === undefined || b.events === undefined || b.totalTimeS === undefined)
    return null;
  if (b.latMin === undefined || b.latAvg === undefined || b.latMax === undefined || b.latSum === undefined) return null;
  const latencyMs: LatencySummary = {
    min: b.latMin,
    avg: b.latAvg,
    max: b.latMax,
    percentile: b.latPct ?? percentile,
    value: b.latPctValue ?? 0,
    sum: b.latSum,
  };
  return {
    tps: b.tps ?? 0,
    qps: b.qps ?? 0,
    events: b.events,
    totalTimeS: b.totalTimeS,
    reads: b.reads ?? 0,
    writes: b.writes ?? 0,
    other: b.other ?? 0,
    transactions: b.transactions,
    queries: b.queries,
    errors: b.errors ?? 0,
    reconnects: b.reconnects ?? 0,
    latencyMs,
  };
}

/**
 * The latency at `percentile` of a printed histogram, computed as sysbench computes its own.
 * See get_pct_cumulative in src/sb_histogram.c, 1.0.20 and 1.1.0.
 * It is the first bucket where the running count reaches floor(n * p / 100 + 0.5).
 * The histogram is reset at each checkpoint, so after a warmup it covers the measured part only.
 * Null for an empty histogram.
 * @internal Exported for its tests.
 */
export function histogramPercentile(histogram: readonly HistogramBucket[], percentile: number): number | null {
  const total = histogram.reduce((a, b) => a + b.count, 0);
  if (total === 0) return null;
  const target = Math.floor((total * percentile) / 100 + 0.5);
  let seen = 0;
  for (const bucket of histogram) {
    seen += bucket.count;
    if (seen >= target) return bucket.valueMs;
  }
  return histogram[histogram.length - 1]!.valueMs;
}

function histogramPercentiles(histogram: readonly HistogramBucket[]): Record<LatencyPercentileKey, number> | undefined {
  const out: Partial<Record<LatencyPercentileKey, number>> = {};
  for (const key of LATENCY_PERCENTILES) {
    const value = histogramPercentile(histogram, Number(key));
    if (value === null) return undefined;
    out[key] = value;
  }
  return out as Record<LatencyPercentileKey, number>;
}

export function parseSysbenchOutput(text: string, opts: ParseOptions = {}): ParsedOutput {
  const lines = text.split(/\r?\n/);
  const hookIntervals: Interval[] = [];
  const textIntervals: Interval[] = [];
  const blocks: SummaryBlock[] = [];
  const fatals: string[] = [];
  const runnerErrors: string[] = [];
  const histogram: HistogramBucket[] = [];
  let current: SummaryBlock | undefined;
  let pendingCheckpoint = false;
  let lastCheckpointT: number | undefined;
  let inHistogram = false;
  let sawBanner = false;
  let version: string | undefined;
  let oldVersion: string | undefined;
  let runStarted = false;
  let readBack: ReadBackCounts | undefined;

  for (const raw of lines) {
    const line = raw.replace(/\s+$/, '');
    if (line.startsWith(READ_BACK_PREFIX)) {
      for (const [object] of line.matchAll(READ_BACK_OBJECT)) {
        const counts = readBackLine(object);
        if (counts)
          readBack = {
            checks: (readBack?.checks ?? 0) + counts.checks,
            stale: (readBack?.stale ?? 0) + counts.stale,
            foreign: (readBack?.foreign ?? 0) + counts.foreign,
          };
      }
      continue;
    }
    if (line.startsWith(HOOK_PREFIX)) {
      const iv = hookInterval(line);
      if (iv) hookIntervals.push(iv);
      continue;
    }
    if (line.startsWith('FATAL: ')) {
      const msg = line.slice('FATAL: '.length).trim();
      const clipped = clipFatal(msg);
      if (clipped !== '' && !fatals.includes(clipped)) fatals.push(clipped);
      continue;
    }
    if (line.startsWith('aurora-bench runner: ')) {
      runnerErrors.push(line.slice('aurora-bench runner: '.length));
      continue;
    }
    if (line.startsWith('DEBUG: ')) continue;
    const banner = BANNER.exec(line);
    if (banner) {
      sawBanner = true;
      version = `${banner[1]}.${banner[2]}${banner[3] !== undefined ? `.${banner[3]}` : ''}`;
      if (banner[1] === '0') oldVersion = version;
      continue;
    }
    if (line.trim() === OLD_SUMMARY) {
      oldVersion ??= '0.4 or 0.5';
      continue;
    }
    if (line.startsWith('Running the test with following options:') || line === 'Threads started!') {
      runStarted = true;
      continue;
    }
    let m = TEXT_INTERVAL.exec(line);
    if (m) {
      textIntervals.push({
        t: Number(m[1]),
        threads: Number(m[2]),
        tps: Number(m[3]),
        qps: Number(m[4]),
        readsPerS: Number(m[5]),
        writesPerS: Number(m[6]),
        otherPerS: Number(m[7]),
        latencyMs: Number(m[9]),
        errorsPerS: Number(m[10]),
        reconnectsPerS: Number(m[11]),
      });
      continue;
    }
    m = QUEUE_LINE.exec(line);
    if (m) {
      const t = Number(m[1]);
      const last = textIntervals[textIntervals.length - 1];
      if (last && last.t === t) {
        textIntervals[textIntervals.length - 1] = { ...last, queueLength: Number(m[2]), concurrency: Number(m[3]) };
      }
      continue;
    }
    m = CHECKPOINT_LINE.exec(line);
    if (m) {
      lastCheckpointT = Number(m[1]);
      pendingCheckpoint = true;
      continue;
    }
    if (line.trim() === 'SQL statistics:') {
      current = { checkpoint: pendingCheckpoint };
      pendingCheckpoint = false;
      blocks.push(current);
      continue;
    }
    if (line.startsWith('Latency histogram')) {
      inHistogram = true;
      continue;
    }
    if (inHistogram) {
      const h = HISTOGRAM_ROW.exec(line);
      if (h) {
        histogram.push({ valueMs: Number(h[1]), count: Number(h[2]) });
        continue;
      }
      if (/^\s*value\s+-+ distribution -+ count$/.test(line)) continue;
      inHistogram = false; // any other line ends the histogram and is read as usual
    }
    if (current) {
      for (const [re, fields] of SUMMARY_LINES) {
        const s = re.exec(line);
        if (!s) continue;
        fields.forEach((f, i) => {
          (current as unknown as Record<string, number>)[f] = Number(s[i + 1]);
        });
        break;
      }
    }
  }

  const percentile = opts.percentile ?? 95;
  const finalBlock = [...blocks].reverse().find((b) => !b.checkpoint);
  const blockSummary = finalBlock ? toSummary(finalBlock, percentile) : null;
  const percentiles = blockSummary && histogram.length > 0 ? histogramPercentiles(histogram) : undefined;
  const summary =
    blockSummary && percentiles
      ? { ...blockSummary, latencyMs: { ...blockSummary.latencyMs, percentiles } }
      : blockSummary;
  // The hook replaces sysbench's interval lines; if both appear, the hook's are the complete ones.
  let intervals = hookIntervals.length > 0 ? hookIntervals : textIntervals;
  if (lastCheckpointT !== undefined) intervals = intervals.filter((iv) => iv.t > lastCheckpointT);

  // The reason, most telling first.
  // The runner's own error comes first, then a crash or stop signal, then two distinct FATAL lines.
  // sysbench repeats FATAL lines per thread. A bare exit code counts only when nothing else says why.
  const reasons: string[] = [...runnerErrors];
  if (oldVersion !== undefined) {
    reasons.push(
      `sysbench ${oldVersion} output is not supported: aurora-bench reads the output of sysbench 1.0.x and ` +
        `1.1.x (0.4 and 0.5 print another summary, "OLTP test statistics:" with per-request figures); re-run the ` +
        `benchmark with sysbench 1.0 or later`,
    );
  }
  const exitCode = opts.exitCode;
  const signalled = exitCode !== undefined && exitCode > 128;
  if (signalled) reasons.push(exitCodeReason(exitCode));
  if (fatals.length > 0) reasons.push(fatals.slice(0, 2).join('; '));
  if (!signalled && fatals.length === 0 && exitCode !== undefined && exitCode !== 0)
    reasons.push(exitCodeReason(exitCode));
  if (reasons.length === 0) {
    if (!sawBanner) reasons.push('no sysbench output');
    else if (runStarted && summary === null)
      reasons.push('sysbench output ended before its summary (crashed or killed?)');
  }
  const error = reasons.length > 0 ? reasons.join(': ') : null;
  return {
    status: error === null ? 'ok' : 'failed',
    error,
    summary: oldVersion !== undefined ? null : summary,
    intervals,
    ...(histogram.length > 0 ? { histogram } : {}),
    ...(readBack !== undefined ? { readBack } : {}),
    ...(version !== undefined ? { sysbenchVersion: version } : {}),
  };
}

// ------------------------------------------------------------------ client CPU

/** Samples of client_cpu.jsonl. A cut last line, from a runner killed mid-write, is skipped. */
export function parseClientCpu(jsonl: string, source = 'client_cpu.jsonl'): ClientCpuSample[] {
  const lines = jsonl.split('\n');
  const samples: ClientCpuSample[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const isLast = lines.slice(i + 1).every((l) => l.trim() === '');
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      if (isLast) return;
      throw new Error(`${source} line ${i + 1}: not JSON: ${line.slice(0, 80)}`);
    }
    for (const field of ['t', 'sysbenchCpuPct', 'hostCpuPct', 'cores'] as const) {
      if (typeof o[field] !== 'number' || !Number.isFinite(o[field])) {
        throw new Error(`${source} line ${i + 1}: field "${field}" must be a number, got ${JSON.stringify(o[field])}`);
      }
    }
    samples.push({
      t: o['t'] as number,
      sysbenchCpuPct: o['sysbenchCpuPct'] as number,
      hostCpuPct: o['hostCpuPct'] as number,
      cores: o['cores'] as number,
    });
  });
  return samples;
}

export interface ClientCpuSummary {
  /** Host CPU busy % of all cores, mean and max over the samples. Null without samples. */
  readonly avg: number | null;
  readonly max: number | null;
  /** sysbench's own CPU as % of one core, mean and max. It can exceed 100. */
  readonly sysbenchAvg: number | null;
  readonly sysbenchMax: number | null;
  readonly samples: number;
  /**
   * The client, not the server, may be the limit.
   * That is when sysbench averaged at least 90% of min(threads, cores) cores.
   * One sysbench thread can only use one core.
   * On a client machine of its own, a host at least 95% busy counts too.
   */
  readonly saturated: boolean;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

export function summarizeClientCpu(
  samples: readonly ClientCpuSample[],
  opts: { threads?: number; sharedHost?: boolean } = {},
): ClientCpuSummary {
  if (samples.length === 0)
    return { avg: null, max: null, sysbenchAvg: null, sysbenchMax: null, samples: 0, saturated: false };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const host = samples.map((s) => s.hostCpuPct);
  const sb = samples.map((s) => s.sysbenchCpuPct);
  const cores = Math.max(...samples.map((s) => s.cores));
  const usableCores = opts.threads !== undefined && opts.threads > 0 ? Math.min(opts.threads, cores) : cores;
  const avg = mean(host);
  const sysbenchAvg = mean(sb);
  return {
    avg: round2(avg),
    max: round2(Math.max(...host)),
    sysbenchAvg: round2(sysbenchAvg),
    sysbenchMax: round2(Math.max(...sb)),
    samples: samples.length,
    // On a shared host, host CPU says nothing about the client. Only sysbench's own CPU does.
    saturated: sysbenchAvg >= 0.9 * usableCores * 100 || (!opts.sharedHost && avg >= 95),
  };
}
