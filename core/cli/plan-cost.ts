/** The cost lines under `aurora-bench plan` (core/report/cost.ts does the work). */
export { planCostLines } from '../report/cost';
