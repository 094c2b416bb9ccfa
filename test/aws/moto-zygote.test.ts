/**
 * scripts/moto.sh zygote: a server forked from it answers like one moto.sh starts itself, stops when
 * stopped (reaped, not a zombie), and does not share ids with its siblings; with no zygote listening,
 * start falls back to a server of its own.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import { MOTO_CREDENTIALS } from '../../core/rehearsal/moto-server';

const script = join(__dirname, '..', '..', 'scripts', 'moto.sh');

interface Started {
  readonly endpoint: string;
  readonly pid: number;
}

function start(zygote: string): Started {
  const out = execFileSync('bash', [script, 'start'], {
    encoding: 'utf8',
    env: { ...process.env, AURORA_BENCH_MOTO_ZYGOTE: zygote },
    timeout: 120_000,
  });
  return { endpoint: /MOTO_ENDPOINT=(\S+)/.exec(out)![1]!, pid: Number(/MOTO_PID=(\d+)/.exec(out)![1]) };
}

function stop(server: Started): void {
  execFileSync('bash', [script, 'stop', String(server.pid)], { timeout: 30_000 });
}

/** The command line of a process; undefined once it is gone (a zombie still has a /proc entry). */
function commandLine(pid: number): string | undefined {
  const file = `/proc/${pid}/cmdline`;
  return existsSync(file) ? readFileSync(file, 'utf8').replaceAll('\0', ' ') : undefined;
}

async function vpcId(server: Started): Promise<string> {
  const ec2 = new EC2Client({ endpoint: server.endpoint, region: 'us-east-1', credentials: MOTO_CREDENTIALS });
  const { Vpc } = await ec2.send(new CreateVpcCommand({ CidrBlock: '10.1.0.0/16' }));
  ec2.destroy();
  return Vpc!.VpcId!;
}

describe('scripts/moto.sh zygote', () => {
  let zygote: ChildProcess;
  let address: string;

  beforeAll(async () => {
    const port = execFileSync('bash', [script, 'free-port'], { encoding: 'utf8' }).trim();
    address = `127.0.0.1:${port}`;
    zygote = spawn('bash', [script, 'zygote', port], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      zygote.stdout!.setEncoding('utf8').on('data', (d: string) => d.includes('listening') && resolve());
      zygote.once('exit', (code) => reject(new Error(`the zygote exited (${code}) before listening`)));
    });
  }, 120_000);

  afterAll(() => {
    zygote.kill();
  });

  it('forks servers that answer, get ids of their own, and are gone once stopped', async () => {
    // Act
    const first = start(address);
    const second = start(address);
    const forked = [commandLine(first.pid), commandLine(second.pid)];
    const ids = [await vpcId(first), await vpcId(second)];
    stop(first);
    stop(second);

    // Assert: forked from the zygote (its command line), then stopped and reaped
    expect(forked).toEqual([expect.stringContaining('--zygote'), expect.stringContaining('--zygote')]);
    expect(ids[0]).toMatch(/^vpc-/);
    expect(ids[1]).not.toBe(ids[0]);
    expect(commandLine(first.pid)).toBeUndefined();
    expect(commandLine(second.pid)).toBeUndefined();
  }, 120_000);

  it('starts a server of its own when no zygote listens there', async () => {
    // Act
    const server = start('127.0.0.1:1');
    const cmd = commandLine(server.pid);
    const id = await vpcId(server);
    stop(server);

    // Assert
    expect(cmd).toContain('moto_server.py -H 127.0.0.1');
    expect(id).toMatch(/^vpc-/);
    expect(commandLine(server.pid)).toBeUndefined();
  }, 120_000);
});
