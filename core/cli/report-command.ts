/**
 * `aurora-bench report [RUN]` reports a run of the local lake, or with --aws from Athena.
 * It warns when the run is marked running but its aurora-bench is gone.
 */
import { resolve } from 'node:path';
import { printOut } from './terminal';
import type { CliContext } from './cli-context';

export interface ReportFlags {
  readonly html?: string;
  readonly prices?: string;
  readonly lake: string;
  readonly aws?: boolean;
  readonly stack: string;
  readonly includeSaturated?: boolean;
  readonly json?: boolean;
}

export async function reportAction(
  run: string | undefined,
  opts: ReportFlags,
  context: Pick<CliContext, 'repoRoot' | 'runRoot'>,
): Promise<void> {
  const common = {
    ...(opts.json ? { json: true } : {}),
    ...(run ? { runId: run } : {}),
    repoRoot: context.repoRoot,
    ...(opts.html ? { html: resolve(opts.html) } : {}),
    ...(opts.prices ? { prices: resolve(opts.prices) } : {}),
    ...(opts.includeSaturated ? { includeSaturated: true } : {}),
  };
  if (opts.aws) {
    const { athenaReportText } = await import('./report-aws');
    printOut(await athenaReportText({ ...common, stackName: opts.stack }));
    return;
  }
  const { reportCommand } = await import('../report/report');
  const { ownerGoneNote } = await import('./results-command');
  const { defaultRunRoot } = await import('../backends/local/registry');
  const note = await ownerGoneNote(resolve(opts.lake), context.runRoot ?? defaultRunRoot(), run);
  printOut(note + (await reportCommand({ ...common, lakeDir: resolve(opts.lake) })));
}
