/**
 * `aurora-bench preflight SPEC --aws` checks the flags, then prints the account checks and exits with their code.
 * It is a module of its own, so a usage error loads no AWS SDK client.
 */
import { resolve } from 'node:path';
import { UsageError } from '../errors';
import { printOut } from './terminal';
import type { CliContext } from './cli-context';

export interface PreflightFlags {
  readonly aws?: boolean;
  readonly stack: string;
  readonly region?: string;
  readonly prices?: string;
}

export async function preflightAction(
  file: string,
  opts: PreflightFlags,
  context: Pick<CliContext, 'repoRoot'>,
): Promise<number> {
  if (!opts.aws)
    throw new UsageError(
      'preflight checks an AWS account: pass --aws (a local run checks its own tools when it starts)',
    );
  const { preflightOnAws } = await import('./preflight-aws');
  const { code, text } = await preflightOnAws({
    specFile: file,
    repoRoot: context.repoRoot,
    stackName: opts.stack,
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.prices ? { prices: resolve(opts.prices) } : {}),
  });
  printOut(text + '\n');
  return code;
}
