/** The entry of client/runner.js. The bundle sits in client/, next to lua/. */
import { RunnerExitCode } from '../sysbench/runner-argv';
import { runRunner } from './main';

// The SDK warns on stderr on every Node older than its next majors need.
// The bundle pins its SDK and the clients run Debian 12's Node 18, so the warning is not actionable.
// It would land in every job's stderr.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

runRunner(process.argv.slice(2), process.env, __dirname).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`runner: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(RunnerExitCode.Setup);
  },
);
