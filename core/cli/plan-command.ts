/** `aurora-bench plan` shows what `run` would prepare, with time and cost. It exits 1 on a refusal. */
import { resolve } from 'node:path';
import { printErr, printOut } from './terminal';
import type { CliContext } from './cli-context';
import type { Plan } from '../plan/types';
import type { Scale } from '../experiment/scale';
import type { NightlySchedule } from '../plan/nightly-cost';

export interface PlanFlags {
  readonly backend: 'local' | 'aws';
  readonly aws?: boolean;
  readonly json?: boolean;
  readonly scale: Scale;
  readonly prices?: string;
}

/** cdk.json's nightly schedule and the experiment file it runs. */
interface NightlyConfig extends NightlySchedule {
  readonly experiment: string;
}

export interface PlanContext extends CliContext {
  /** Reads cdk.json's nightly config, only for a plan on AWS. */
  readonly nightly: () => Promise<NightlyConfig>;
}

export async function planAction(file: string, opts: PlanFlags, context: PlanContext): Promise<number> {
  const { repoRoot } = context;
  const { preparePlanFromFile } = await import('../plan/prepare');
  const { renderPlan } = await import('./plan-view');
  const { localSpecRefusalsUnder } = await import('../backends/local/preflight');
  const { defaultRunRoot } = await import('../backends/local/registry');
  const backend = opts.aws ? 'aws' : opts.backend;
  // The same preparation as `run`, so its refusals show here.
  const prepared = preparePlanFromFile(file, context.builtinWorkloads, {
    backend,
    scale: opts.scale,
    refusals: 'show',
    ...(backend === 'local' ? { backendRefusals: localSpecRefusalsUnder(context.runRoot ?? defaultRunRoot()) } : {}),
  });
  const plan = { ...prepared.plan, notes: [...prepared.notes] };
  const { planCostLines } = await import('../plan/cost');
  const extra = await planCostLines(prepared.spec, plan, repoRoot, opts.prices ? resolve(opts.prices) : undefined);
  if (backend === 'aws') {
    const { planVcpuLine } = await import('../backends/aws/vcpu-quota');
    const { quietNightShare } = await import('./rounds-plan');
    const quiet = quietNightShare(prepared.spec);
    extra.push(planVcpuLine(plan), ...(await nightlyPlanLines(file, plan, opts.prices, context, quiet)));
    const { roundsPlanLines } = await import('./rounds-plan');
    const { estimatePlanCost, loadPrices } = await import('../plan/cost');
    const table = loadPrices(repoRoot, opts.prices ? resolve(opts.prices) : undefined);
    extra.push(...roundsPlanLines(prepared.spec, plan, estimatePlanCost(plan, table).total));
  }
  printOut(opts.json ? JSON.stringify(plan, null, 2) + '\n' : renderPlan(plan, extra) + '\n');
  // A plan with a refusal is not what `run` would do as written, so scripts see it in the exit code.
  const refused = plan.notes.filter((n) => n.level === 'refused');
  if (refused.length === 0) return 0;
  printErr(
    `aurora-bench: ${file}: ${refused.length} refusal${refused.length === 1 ? '' : 's'} in the plan ` +
      `(${refused.map((n) => n.path).join(', ')}): see [refused] above\n`,
  );
  return 1;
}

/** What the nightly schedule costs a month. */
async function nightlyPlanLines(
  file: string,
  plan: Plan,
  prices: string | undefined,
  context: PlanContext,
  quietShare: number | null,
): Promise<string[]> {
  const nightly = await context.nightly();
  if (resolve(file) !== resolve(context.repoRoot, nightly.experiment)) return [];
  const { estimatePlanCost, formatMoney, loadPrices } = await import('../plan/cost');
  const { nightlyCostLines } = await import('../plan/nightly-cost');
  const cost = estimatePlanCost(plan, loadPrices(context.repoRoot, prices ? resolve(prices) : undefined));
  const format = (v: number) => formatMoney(v, cost.currency);
  return nightlyCostLines(nightly, cost.total, cost.currency, cost.pricesAsOf, format, quietShare);
}
