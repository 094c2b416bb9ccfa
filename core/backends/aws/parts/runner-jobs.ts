/** Runner jobs through SSM Run Command. */
import { RunCommandJobs, type RunCommandJobsOptions } from '../jobs';
import type { BackendOperations } from './compose';

export function runnerJobsPart(
  options: RunCommandJobsOptions,
): Pick<BackendOperations, 'startJobs' | 'checkJobs' | 'stopJobs'> {
  const jobs = new RunCommandJobs(options);
  return {
    startJobs: (run, cell, resources, planned) => jobs.startJobs(run, cell, resources, planned),
    checkJobs: (run, handles) => jobs.checkJobs(run, handles),
    stopJobs: (run, handles) => jobs.stopJobs(run, handles),
  };
}
