/**
 * awsCliPath: which directory the AWS rehearsal's clients find `aws` in. A pyenv shim is replaced by
 * the directory of the executable it would run (`pyenv which aws`), since every call through the
 * shim pays for a `pyenv exec` first; an ordinary `aws` on PATH is kept as it is.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { awsCliPath } from '../../core/rehearsal/aws-cli';

let root: string;

function executable(path: string, body: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ab-aws-cli-path-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('awsCliPath', () => {
  it('puts the directory of the aws a pyenv shim runs before PATH', () => {
    // Arrange: a shim directory and a pyenv that names the version's executable
    const real = join(root, 'versions', '3.11.7', 'bin', 'aws');
    executable(real, 'exit 0');
    executable(join(root, 'shims', 'aws'), 'exec pyenv exec aws "$@"');
    executable(join(root, 'bin', 'pyenv'), `[ "$1 $2" = "which aws" ] && echo ${real}`);
    const env = { PATH: [join(root, 'shims'), join(root, 'bin'), '/usr/bin', '/bin'].join(':') };
    // Act / Assert
    expect(awsCliPath(env)).toEqual([join(root, 'versions', '3.11.7', 'bin')]);
  });

  it('keeps the shim when pyenv names no executable, and an ordinary aws as it is', () => {
    // Arrange
    executable(join(root, 'shims', 'aws'), 'exit 0');
    executable(join(root, 'bin', 'pyenv'), 'echo "pyenv: aws: command not found" >&2; exit 127');
    executable(join(root, 'usr', 'aws'), 'exit 0');
    // Act / Assert
    expect(awsCliPath({ PATH: [join(root, 'shims'), join(root, 'bin'), '/usr/bin', '/bin'].join(':') })).toEqual([]);
    expect(awsCliPath({ PATH: [join(root, 'usr'), '/usr/bin', '/bin'].join(':') })).toEqual([]);
  });

  it('falls back to the AWS CLI setup installs in the cache directory; says how to get one if none', () => {
    // Arrange
    const cache = join(root, 'cache');
    const env = { PATH: join(root, 'empty'), XDG_CACHE_HOME: cache };
    // Act / Assert
    expect(() => awsCliPath(env)).toThrow(/need the AWS CLI .*bash scripts\/setup\.sh --test/);
    executable(join(cache, 'aurora-bench', 'awscli-venv', 'bin', 'aws'), 'exit 0');
    expect(awsCliPath(env)).toEqual([join(cache, 'aurora-bench', 'awscli-venv', 'bin')]);
  });
});
