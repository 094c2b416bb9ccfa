/**
 * The budget check as a plan note (a refused note, or null within budget or without one): a
 * TaskDeps preflight for the local workflow tests that refuses what core/plan/cost.ts checkBudget
 * refuses. On AWS the account preflight's budget check does this (core/backends/aws/preflight.ts).
 */
import { BudgetExceededError, bundledPrices, checkBudget, type PriceTable } from '../../core/plan/cost';
import type { Spec } from '../../core/experiment/schema';
import type { Plan, PlanNote } from '../../core/plan/types';

export function budgetRefusal(
  plan: Plan,
  budget: Spec['budget'],
  table: PriceTable = bundledPrices(),
): PlanNote | null {
  try {
    checkBudget(plan, budget, table);
    return null;
  } catch (e) {
    if (e instanceof BudgetExceededError) return { level: 'refused', path: 'budget.maxUsd', message: e.message };
    throw e;
  }
}
