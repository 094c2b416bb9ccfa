/** The collect-late-metrics Task on Lambda: core/workflow/task-registry.ts TASKS['collect-late-metrics'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { collectCellOrDuetLateMetrics } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('collect-late-metrics', collectCellOrDuetLateMetrics);
