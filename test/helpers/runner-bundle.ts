/**
 * Jest globalSetup of the layers that run the client runner (every layer but unit): builds
 * client/runner.js from core/runner/ as scripts/setup.sh does, so that a test runs the bundle a
 * client gets, built from the sources under test, never a stale one.
 */
import { join } from 'node:path';
import { buildRunner } from '../../scripts/build-runner';

/** The bundle the runner tests and the local backend run. */
export const RUNNER_JS = join(__dirname, '..', '..', 'client', 'runner.js');

/**
 * The node the runner tests run the bundle with: this one, or AURORA_BENCH_RUNNER_NODE (a Node 18
 * binary, to run them as Debian 12's nodejs runs the bundle on a client).
 */
export const RUNNER_NODE = process.env['AURORA_BENCH_RUNNER_NODE'] || process.execPath;

export default async function buildRunnerBundle(): Promise<void> {
  await buildRunner(join(__dirname, '..', '..'));
}
