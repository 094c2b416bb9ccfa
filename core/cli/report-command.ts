/** `aurora-bench report [RUN]`: the study's report from the local lake (core/report/report.ts does the work). */
export { reportCommand } from '../report/report';
export type { ReportOptions } from '../report/report';
