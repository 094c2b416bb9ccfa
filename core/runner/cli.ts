/**
 * The entry of client/runner.js (scripts/build-runner.ts bundles it): `node client/runner.js ARGS`.
 * The bundle sits in client/, next to lua/ (the report hook and the server-config dump).
 */
import { RunnerExitCode } from '../sysbench/runner-argv';
import { runRunner } from './main';

// The SDK warns on stderr on every Node older than the one its next major versions will need; the
// bundle pins its SDK and the clients run Debian 12's Node 18 (scripts/build-runner.ts), so the
// warning says nothing actionable and would land in every job's stderr (SSM's StandardErrorContent).
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

runRunner(process.argv.slice(2), process.env, __dirname).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`runner: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(RunnerExitCode.Setup);
  },
);
