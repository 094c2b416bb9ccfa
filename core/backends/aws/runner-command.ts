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

/**
 * AWS-RunShellScript `commands`: one script, run by the SSM agent as root. The copy is repeated per
 * job on purpose: a client always runs the runner of the stack that started the job.
 */
export function ssmRunnerCommands(region: string, runnerS3Uri: string, runnerArgv: readonly string[]): string[] {
  const dir = CLIENT_INSTALL_DIR;
  return [
    'set -eu',
    `export AWS_DEFAULT_REGION=${shellQuote(region)}`,
    `mkdir -p ${dir}`,
    `aws s3 cp --recursive --only-show-errors ${shellQuote(runnerS3Uri)} ${dir}/`,
    `chmod +x ${dir}/runner.sh`,
    `exec ${dir}/runner.sh ${runnerArgv.map(shellQuote).join(' ')}`,
  ];
}
