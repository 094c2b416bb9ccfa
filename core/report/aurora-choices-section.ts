/**
 * The Aurora choices a run answers, together: provisioned against Aurora Serverless v2
 * (serverless-section.ts), Aurora Standard against I/O-Optimized (storage-section.ts) and what the
 * run cost (bill-section.ts), over the usage the lake holds (aurora-usage.ts). The report wires each
 * in sections.ts; this is the three at once for their tests.
 */
import type { ReportSection } from './model';
import type { Context } from './context';
import { NO_AURORA_USAGE, type AuroraUsage } from './aurora-usage';
import { analyzeServerless, renderServerless } from './serverless-section';
import { analyzeStorage, renderStorage } from './storage-section';
import { analyzeBill, renderBill } from './bill-section';

export { scalingLagS, type UsagePoint } from './aurora-usage';

/** Every Aurora-choices section that applies, in reading order. @internal exported for its tests (a test seam) */
export function auroraChoicesSections(ctx: Context, usage: AuroraUsage = NO_AURORA_USAGE): ReportSection[] {
  const serverless = analyzeServerless(ctx, usage);
  const storage = analyzeStorage(ctx, usage);
  const bill = analyzeBill(ctx, usage);
  return [
    serverless && renderServerless(serverless, ctx),
    storage && renderStorage(storage, ctx),
    bill && renderBill(bill, ctx),
  ].filter((s): s is ReportSection => s !== null);
}
