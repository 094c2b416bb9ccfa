/**
 * `aurora-bench plan` at 2,500, 5,000 and 10,000 steps (one variant, one repeat, workloads of 100
 * thread counts each): the built CLI's wall time for the text plan and for `plan --json`, and the
 * text time per 1,000 steps, which stays flat when the text rendering is linear in the steps.
 *
 * Run: `node dist/bench/plan-scale.js [--steps 2500,5000,10000] [--repeat 3]` after
 * `npm run build:dist`. Prints the median of the repeats; asserts nothing. Scratch files under TMPDIR.
 *
 * Figures (2 cores shared with other jobs, load average 25-60, so a second or two is noise):
 *   steps                         2,500    5,000    10,000
 *   text, cli-table3 tables       11.6 s   26.8 s   132 s    (quadratic: its layout checks every earlier row)
 *   text, core/format textTable    1.7 s    2.3 s    3.0 s   (linear; mostly Node start-up and planning)
 *   plan --json                    2.1 s    2.9 s    2.7 s
 */
import '../core/polyfills';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { steps: { type: 'string', default: '2500,5000,10000' }, repeat: { type: 'string', default: '3' } },
});
const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');

/**
 * quickstart.json with one variant, one repeat and `steps` steps: ceil(steps/100) workloads of up to 100 thread counts.
 */
function specOf(steps: number): object {
  const base = JSON.parse(readFileSync(join(REPO, 'experiments', 'quickstart.json'), 'utf8')) as Record<
    string,
    unknown
  > & { variants: unknown[] };
  const workloads = Array.from({ length: Math.ceil(steps / 100) }, (_, w) => ({
    name: `w${w}`,
    test: 'oltp_read_write',
    threads: Array.from({ length: Math.min(100, steps - w * 100) }, (_, k) => k + 1),
  }));
  const { $schema: _schema, ...rest } = base;
  return { ...rest, name: `plan-scale-${steps}`, repeats: 1, variants: [base.variants[0]], workloads };
}

function seconds(args: string[]): number {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`aurora-bench ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const work = mkdtempSync(join(tmpdir(), 'plan-scale-'));
try {
  const repeat = Number(values.repeat);
  console.log('steps    text plan s   plan --json s   text s per 1,000 steps');
  for (const steps of values.steps.split(',').map(Number)) {
    const file = join(work, `spec-${steps}.json`);
    writeFileSync(file, JSON.stringify(specOf(steps)));
    const text = median(Array.from({ length: repeat }, () => seconds(['plan', file])));
    const json = median(Array.from({ length: repeat }, () => seconds(['plan', file, '--json'])));
    console.log(
      `${String(steps).padStart(6)}   ${text.toFixed(2).padStart(11)}   ${json.toFixed(2).padStart(13)}   ` +
        ((text / steps) * 1000).toFixed(3).padStart(22),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
