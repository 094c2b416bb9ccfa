/**
 * The collect-late-metrics Task on Lambda: core/workflow/task-registry.ts TASKS['collect-late-
 * metrics'] with the AWS deps. It imports that Task alone, not the registry, so that its bundle holds
 * only its own Task's code.
 */
import { collectCellOrDuetLateMetrics } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('collect-late-metrics', collectCellOrDuetLateMetrics);
