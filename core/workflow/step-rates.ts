/**
 * A rate step's offered rate and whether it runs, decided from the cell's earlier steps when it starts.
 *  - rateOfCapacity takes a multiple of the capacity probe's achieved transactions/s, split over the clients.
 *  - stopAtOverload skips higher rates once a lower rate overloaded.
 *    Past capacity they only measure the same plateau, and on AWS they would be paid for.
 * Starting and collecting a step decide from the same rows, so they agree on the rate recorded.
 */
import type { CellPlan, StepPlan } from '../plan/types';

/** What a decision needs of an earlier step: its clients' rows. */
export interface EarlierStepRows {
  readonly stepId: string;
  readonly rows: readonly { readonly status: string; readonly tps: number | null; readonly rate: number }[];
}

export type StepDecision =
  | { readonly run: true; readonly step: StepPlan }
  | { readonly run: false; readonly step: StepPlan; readonly reason: string };

const sameSweep = (a: StepPlan, b: StepPlan): boolean =>
  a.workload === b.workload && a.threads === b.threads && a.target === b.target;

/** The earlier steps whose rows a decision about `step` reads. */
export function stepsToConsult(cell: Pick<CellPlan, 'steps'>, step: StepPlan): StepPlan[] {
  if (step.rateOfCapacity === undefined && step.stopAtOverload !== true) return [];
  return cell.steps.filter((s) => s.index < step.index && sameSweep(s, step));
}

/**
 * Decide `step` given the rows of the steps stepsToConsult named.
 * A step missing from `earlier` wrote no rows.
 * When a capacity probe measured nothing, its multiples are skipped with the reason.
 */
export function decideStep(
  cell: Pick<CellPlan, 'steps'>,
  step: StepPlan,
  earlier: readonly EarlierStepRows[],
): StepDecision {
  const before = stepsToConsult(cell, step);
  const rowsOf = (id: string): EarlierStepRows['rows'] => earlier.find((e) => e.stepId === id)?.rows ?? [];
  let rate = step.rate;
  if (step.rateOfCapacity !== undefined) {
    const probe = before.filter((s) => s.rate === 0 && s.rateOfCapacity === undefined).pop();
    if (probe === undefined)
      return {
        run: false,
        step,
        reason: `no capacity probe (${step.workload} at ${step.threads} threads, rate 0) runs before this step`,
      };
    const measured = rowsOf(probe.stepId).filter((r) => r.status === 'ok' && r.tps !== null);
    const capacity = measured.reduce((a, r) => a + r.tps!, 0);
    if (measured.length === 0 || !(capacity > 0)) {
      return {
        run: false,
        step,
        reason:
          `the capacity probe ${probe.stepId} measured no throughput, so ${step.rateOfCapacity}x its ` +
          `rate is unknown`,
      };
    }
    rate = Math.max(1, Math.round((step.rateOfCapacity * capacity) / Math.max(1, step.clients)));
  }
  const resolved: StepPlan = { ...step, rate };
  if (step.stopAtOverload === true && rate > 0) {
    const overloaded = before.find((s) =>
      rowsOf(s.stepId).some((r) => r.status === 'overloaded' && r.rate > 0 && r.rate <= rate),
    );
    if (overloaded !== undefined) {
      const at = rowsOf(overloaded.stepId).find((r) => r.status === 'overloaded')!.rate;
      return {
        run: false,
        step: resolved,
        reason:
          `skipped (stopAtOverload): ${overloaded.stepId} already overloaded at ${at}/s per client, ` +
          `below this step's ${rate}/s`,
      };
    }
  }
  return { run: true, step: resolved };
}
