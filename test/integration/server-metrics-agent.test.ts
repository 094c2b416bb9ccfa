/**
 * client/server-metrics-agent.sh (run by a self-managed server's user data after server-install.sh):
 * it starts the CloudWatch agent with the repo's client/cloudwatch-agent.json through
 * amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s -c file:<path> (CloudWatch User Guide,
 * install-CloudWatch-Agent-commandline-fleet.md), and whatever goes wrong, it never fails the server:
 * it exits 0 and writes the reason to metrics-agent-failed. The control script is a stand-in that
 * records its arguments (AURORA_BENCH_CWAGENT_CTL); the real agent needs an EC2 instance.
 */
import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const CLIENT_DIR = join(__dirname, '..', '..', 'client');
const SCRIPT = join(CLIENT_DIR, 'server-metrics-agent.sh');

let work: string;
/** A PATH with only the tools the script uses, so there is no dpkg on it wherever the test runs. */
let toolsPath: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'metrics-agent-'));
  toolsPath = join(work, 'bin');
  mkdirSync(toolsPath);
  for (const tool of ['bash', 'mkdir', 'rm', 'dirname', 'tail', 'tr', 'date']) {
    const { stdout } = await execFileAsync('bash', ['-c', `command -v ${tool}`]);
    symlinkSync(stdout.trim(), join(toolsPath, tool));
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A stand-in amazon-cloudwatch-agent-ctl that writes its arguments to `argsFile` and exits with `code`. */
function fakeCtl(name: string, code: number): { ctl: string; argsFile: string } {
  const ctl = join(work, name);
  const argsFile = join(work, `${name}.args`);
  writeFileSync(ctl, `#!/bin/bash\nprintf '%s\\n' "$@" > '${argsFile}'\necho 'ctl output line'\nexit ${code}\n`);
  chmodSync(ctl, 0o755);
  return { ctl, argsFile };
}

async function runScript(home: string, ctl: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await execFileAsync(join(toolsPath, 'bash'), [SCRIPT], {
      env: { PATH: toolsPath, AURORA_BENCH_HOME: home, AURORA_BENCH_CWAGENT_CTL: ctl },
    });
    return { code: 0, stderr };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
}

describe('server-metrics-agent.sh', () => {
  it("starts the agent with the repo's config: fetch-config in ec2 mode, -s, the absolute file: path", async () => {
    // Arrange
    const home = join(work, 'ok');
    const { ctl, argsFile } = fakeCtl('ctl-ok', 0);
    // Act
    const result = await runScript(home, ctl);
    // Assert
    expect(result.code).toBe(0);
    expect(readFileSync(argsFile, 'utf8').trim().split('\n')).toEqual([
      '-a',
      'fetch-config',
      '-m',
      'ec2',
      '-s',
      '-c',
      `file:${join(CLIENT_DIR, 'cloudwatch-agent.json')}`,
    ]);
    expect(existsSync(join(home, 'metrics-agent-started'))).toBe(true);
    expect(existsSync(join(home, 'metrics-agent-failed'))).toBe(false);
  });

  it('a failing agent does not fail the server: exit 0, the reason in metrics-agent-failed', async () => {
    // Arrange
    const home = join(work, 'failing');
    const { ctl } = fakeCtl('ctl-failing', 3);
    // Act
    const result = await runScript(home, ctl);
    // Assert
    expect(result.code).toBe(0);
    expect(readFileSync(join(home, 'metrics-agent-failed'), 'utf8')).toMatch(
      /^amazon-cloudwatch-agent-ctl -a fetch-config failed: ctl output line/,
    );
    expect(result.stderr).toMatch(/not started \(the server goes on without memory metrics\)/);
    expect(existsSync(join(home, 'metrics-agent-started'))).toBe(false);
  });

  it('no agent and no dpkg to install it (not Debian): exit 0, the reason noted', async () => {
    // Arrange: a control script that is not there, and a PATH without dpkg.
    const home = join(work, 'absent');
    // Act
    const result = await runScript(home, join(work, 'no-such-ctl'));
    // Assert
    expect(result.code).toBe(0);
    expect(readFileSync(join(home, 'metrics-agent-failed'), 'utf8')).toMatch(
      /no .*no-such-ctl and no dpkg to install amazon-cloudwatch-agent with/,
    );
  });

  it(
    'the config publishes mem_available once a minute with InstanceId as its only dimension (what ' +
      'core/backends/aws/metrics.ts queries)',
    () => {
      // Act
      const config = JSON.parse(readFileSync(join(CLIENT_DIR, 'cloudwatch-agent.json'), 'utf8')) as {
        agent: { omit_hostname: boolean; metrics_collection_interval: number };
        metrics: {
          namespace: string;
          append_dimensions: Record<string, string>;
          metrics_collected: Record<string, { measurement: string[] }>;
        };
      };
      // Assert
      expect(config.agent).toMatchObject({ omit_hostname: true, metrics_collection_interval: 60 });
      expect(config.metrics.namespace).toBe('CWAgent');
      expect(config.metrics.append_dimensions).toEqual({ InstanceId: '${aws:InstanceId}' });
      expect(config.metrics.metrics_collected).toEqual({
        mem: expect.objectContaining({ measurement: ['mem_available'] }),
      });
    },
  );
});
