/**
 * A run's ETA, from the plan's time assumptions applied to what is left.
 * Started items keep the time they have used.
 * The rest are scheduled greedily onto maxConcurrency lanes, as the workflow's Map starts them.
 * It is planned again at every event, so a slow step moves the ETA by what it actually took.
 */
import { BACKEND_TIMES } from './plan';
import type { CellPlan, Plan } from './types';

type EtaPlan = Pick<Plan, 'backend' | 'cells' | 'maxConcurrency' | 'duets'>;

interface Item {
  /** Seconds of each step in run order. A duet takes its slowest member's. */
  readonly stepS: readonly number[];
}

interface ItemState {
  readonly startedAtMs: number;
  stepsDone: number;
  lastStepAtMs: number;
  finished: boolean;
}

export class RunEta {
  private readonly items = new Map<string, Item>();
  private readonly state = new Map<string, ItemState>();
  private readonly times: (typeof BACKEND_TIMES)[keyof typeof BACKEND_TIMES];
  private readonly lanes: number;

  constructor(plan: EtaPlan) {
    this.times = BACKEND_TIMES[plan.backend];
    this.lanes = Math.max(1, plan.maxConcurrency);
    const stepTimes = (c: CellPlan): number[] => {
      const prepareS = Math.ceil((c.data.tables * c.data.tableSize) / this.times.rowsPerS);
      return c.steps.map((s) => s.warmupS + s.durationS + this.times.stepOverheadS + (s.prepare ? prepareS : 0));
    };
    const byId = new Map(plan.cells.map((c) => [c.cellId, c]));
    if (plan.duets !== undefined && plan.duets.length > 0) {
      for (const d of plan.duets) {
        const members = d.members
          .map((id) => byId.get(id))
          .filter((c): c is CellPlan => c !== undefined)
          .map(stepTimes);
        const count = Math.max(0, ...members.map((m) => m.length));
        this.items.set(d.cellId, {
          stepS: Array.from({ length: count }, (_, i) => Math.max(0, ...members.map((m) => m[i] ?? 0))),
        });
      }
    } else {
      for (const c of plan.cells) this.items.set(c.cellId, { stepS: stepTimes(c) });
    }
  }

  /** A cell or duet began provisioning. Ids not in the plan are ignored. */
  itemStarted(id: string, atMs: number): void {
    if (!this.items.has(id) || this.state.has(id)) return;
    this.state.set(id, { startedAtMs: atMs, stepsDone: 0, lastStepAtMs: atMs, finished: false });
  }

  /** One of its steps was collected. */
  stepDone(id: string, atMs: number): void {
    const s =
      this.state.get(id) ??
      (this.items.has(id) ? { startedAtMs: atMs, stepsDone: 0, lastStepAtMs: atMs, finished: false } : undefined);
    if (s === undefined) return;
    s.stepsDone++;
    s.lastStepAtMs = atMs;
    this.state.set(id, s);
  }

  /** It was torn down, done, failed or stopped. */
  itemFinished(id: string): void {
    const s = this.state.get(id);
    if (s) s.finished = true;
    else if (this.items.has(id)) this.state.set(id, { startedAtMs: 0, stepsDone: 0, lastStepAtMs: 0, finished: true });
  }

  /** Steps done and planned, over all items. */
  stepCounts(): { done: number; planned: number } {
    let planned = 0;
    let done = 0;
    for (const [id, item] of this.items) {
      planned += item.stepS.length;
      done += Math.min(item.stepS.length, this.state.get(id)?.stepsDone ?? 0);
    }
    return { done, planned };
  }

  /** Seconds until the last item is torn down, as of `nowMs`. */
  remainingS(nowMs: number): number {
    const setUpS = this.times.provisionS - this.times.teardownS;
    const running: number[] = [];
    const queued: number[] = [];
    for (const [id, item] of this.items) {
      const s = this.state.get(id);
      if (s?.finished) continue;
      const sum = (from: number): number => item.stepS.slice(from).reduce((a, b) => a + b, 0);
      if (s === undefined) {
        queued.push(this.times.provisionS + sum(0));
        continue;
      }
      const sinceS = (ms: number): number => Math.max(0, (nowMs - ms) / 1000);
      if (s.stepsDone === 0) {
        // Still setting up, or in its first step, so what is left of both.
        running.push(
          Math.max(0, setUpS + (item.stepS[0] ?? 0) - sinceS(s.startedAtMs)) + sum(1) + this.times.teardownS,
        );
      } else {
        const inFlight = item.stepS[s.stepsDone];
        running.push(
          (inFlight === undefined ? 0 : Math.max(0, inFlight - sinceS(s.lastStepAtMs))) +
            sum(s.stepsDone + 1) +
            this.times.teardownS,
        );
      }
    }
    const lanes = [...running];
    while (lanes.length < this.lanes) lanes.push(0);
    for (const t of queued) {
      const i = lanes.indexOf(Math.min(...lanes));
      lanes[i]! += t;
    }
    return Math.round(Math.max(0, ...lanes));
  }
}

/**
 * "1 h 05 min", "12 min" or "40 s".
 * @internal Exported for its tests.
 */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

/** e.g. "ETA 12 min (about 01:23 UTC), 3 of 8 steps done". */
export function etaText(eta: RunEta, nowMs: number): string {
  const left = eta.remainingS(nowMs);
  const at = new Date(nowMs + left * 1000).toISOString();
  const { done, planned } = eta.stepCounts();
  return (
    `ETA ${durationText(left)} (about ${at.slice(11, 16)} ` +
    `UTC${at.slice(0, 10) !== new Date(nowMs).toISOString().slice(0, 10) ? ` on ${at.slice(0, 10)}` : ''}), ${done} ` +
    `of ${planned} steps done`
  );
}
