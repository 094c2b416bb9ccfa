/**
 * `aurora-bench preflight SPEC --aws` runs the account checks against the deployed stack.
 * It prints every problem at once, and creates nothing. `run --aws` runs the same checks first.
 */
import { join } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../backends/aws/clients';
import { preflightRefused, runAwsPreflight, type PreflightReport } from '../backends/aws/preflight';
import { preparePlanFromFile } from '../plan/prepare';
import type { Plan } from '../plan/types';
import { loadPrices } from '../plan/cost';
import type { Spec } from '../experiment/schema';
import { readDeployment } from './aws-stack';

export interface AwsAccountOptions {
  readonly stackName: string;
  /** Region of the stack and the checks. The default is the spec's region. */
  readonly region?: string;
  /** SDK clients to use, such as a test's moto endpoint. */
  readonly clients?: AwsClients;
  readonly cfn?: CloudFormationClient;
}

export interface PreflightOnAwsOptions extends AwsAccountOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  /** A price file merged over prices/aws-prices.json for the budget check. */
  readonly prices?: string;
}

const VERDICT_LABEL = { ok: 'ok', warn: 'warn', refuse: 'REFUSE' } as const;

export function renderPreflightReport(report: PreflightReport, specName: string): string {
  const out: string[] = [];
  out.push(
    `Preflight of "${specName}" on AWS ` +
      `(${report.region}${report.stackName !== undefined ? `, stack ${report.stackName}` : ''}): read-only ` +
      `checks, nothing is created`,
  );
  const width = Math.max(...report.checks.map((c) => c.title.length));
  for (const c of report.checks) {
    out.push(`  ${VERDICT_LABEL[c.verdict].padEnd(6)}  ${c.title.padEnd(width)}  ${c.summary}`);
    for (const n of c.notes)
      out.push(`          - ${n.level === 'refused' ? 'refused' : n.level}: ${n.path}: ${n.message}`);
  }
  const refused = report.checks.filter((c) => c.verdict === 'refuse').length;
  const warned = report.checks.filter((c) => c.verdict === 'warn').length;
  const counts = `${refused} refused, ${warned} with warnings, ${report.checks.length - refused - warned} ok`;
  out.push(
    refused > 0
      ? `${counts}: fix what is refused above; nothing was created`
      : `${counts}: the account can run this experiment`,
  );
  return out.join('\n');
}

/** The checks for an already planned experiment, so `run --aws` plans once. */
export async function preflightPlan(
  plan: Plan,
  spec: Spec,
  options: AwsAccountOptions & { readonly repoRoot: string; readonly prices?: string },
): Promise<PreflightReport> {
  const region = options.region ?? plan.region;
  const clients = options.clients ?? makeAwsClients({ region });
  const cfn = options.cfn ?? new CloudFormationClient({ region });
  try {
    const deployment = await readDeployment(cfn, options.stackName);
    return await runAwsPreflight({
      plan,
      spec,
      clients,
      deployment,
      prices: loadPrices(options.repoRoot, options.prices),
    });
  } finally {
    if (!options.clients) destroyAwsClients(clients);
    if (!options.cfn) cfn.destroy();
  }
}

/** The report text and the exit code, which is 1 when anything is refused. */
export async function preflightOnAws(
  options: PreflightOnAwsOptions,
): Promise<{ code: number; text: string; report: PreflightReport }> {
  const { spec, plan, notes } = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), {
    backend: 'aws',
  });
  const report = await preflightPlan(plan, spec, options);
  const planNotes = notes.map((n) => `[${n.level}] ${n.path}: ${n.message}`);
  const text = [...planNotes, renderPreflightReport(report, spec.name)].join('\n');
  return { code: preflightRefused(report) ? 1 : 0, text, report };
}
