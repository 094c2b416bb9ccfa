/**
 * The shell commands SSM Run Command (AWS-RunShellScript) executes on a client to run one job:
 * fetch client/ from the runner S3 location, then exec client/runner.sh with the argv that
 * core/sysbench/command.ts `runnerArgs` builds (shared CLI contract, notes/HELPERS.md). Only the
 * secret's ARN travels (--password-secret), never a password.
 */

/** POSIX single-quote quoting: safe for any byte sequence except NUL. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}

/** Where the runner is installed on a client. */
export const CLIENT_INSTALL_DIR = '/opt/aurora-bench/client';

/** Written last by the client's user data (lib/client-user-data.ts) once sysbench is built and smoke-tested. */
export const CLIENT_READY_MARKER = '/opt/aurora-bench/ready';

/**
 * How long a job waits for the marker: the SSM agent is Online minutes before the user data has
 * built sysbench, so the first job of a fresh client must wait rather than fail.
 */
export const CLIENT_READY_WAIT_S = 20 * 60;

/** Exit code when the client never became ready (the runner's own setup-error code). */
export const CLIENT_NOT_READY_EXIT = 3;

/**
 * AWS-RunShellScript `commands`: one script, run by the SSM agent as root. The copy is repeated per
 * job on purpose: a client always runs the runner of the stack that started the job.
 */
export function ssmRunnerCommands(region: string, runnerS3Uri: string, runnerArgv: readonly string[]): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    'set -eu',
    `export AWS_DEFAULT_REGION=${shellQuote(region)}`,
    `waited=0; while [ ! -f ${CLIENT_READY_MARKER} ]; do if [ "$waited" -ge ${CLIENT_READY_WAIT_S} ]; then echo "client not ready after ${CLIENT_READY_WAIT_S} s: the user data did not finish installing sysbench (see /var/log/cloud-init-output.log)" >&2; exit ${CLIENT_NOT_READY_EXIT}; fi; sleep 5; waited=$((waited + 5)); done`,
    `mkdir -p ${dir}`,
    `aws s3 cp --recursive --only-show-errors ${shellQuote(runnerS3Uri)} ${dir}/`,
    `chmod +x ${dir}/runner.sh`,
    `exec ${dir}/runner.sh ${runnerArgv.map(shellQuote).join(' ')}`,
  ];
}
