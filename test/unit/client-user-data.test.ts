/**
 * The client and server user data (lib/client-user-data.ts): the order and paths of their steps (the
 * whole boot runs in test/integration/client-boot.test.ts), and the dead-man's switch run by bash: the instance
 * metadata is a local HTTP server answering like IMDSv2 (there is none outside EC2), and `shutdown` is a shell
 * function recording its arguments (the real one would stop this machine); the not-ready report by curl before apt,
 * signed with the metadata's credentials, to a fake S3 on the same server.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  clientInstallCommands,
  clientUserDataCommands,
  deadMansSwitchCommands,
  MAX_CLIENT_LIFETIME_HOURS,
  SERVER_INSTALL_PACKAGES,
  serverUserDataCommands,
} from '../../lib/client-user-data';
import { EXPIRES_AT_TAG } from '../../lib/handler-environment';
import { validateSpec } from '../../core/experiment/validate';

const run = promisify(execFile);
let server: Server;
let imds: string;
let dir: string;
/** The value the fake metadata serves for the expires-at tag; undefined answers 404 (tag not there). */
let expiresAt: string | undefined;
const requests: string[] = [];
/** The PUTs the fake S3 (under /s3/ of the same server) received: path, headers, body. */
const s3Puts: { path: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} token=${String(req.headers['x-aws-ec2-metadata-token'] ?? '')}`);
    if (req.method === 'PUT' && req.url === '/latest/api/token') return void res.end('tok-1');
    if (req.method === 'PUT' && req.url?.startsWith('/s3/')) {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        s3Puts.push({ path: req.url!, headers: req.headers, body });
        res.end();
      });
      return;
    }
    // IMDSv2 as EC2 answers it (EC2 User Guide, "Retrieve security credentials from instance metadata").
    const meta = req.headers['x-aws-ec2-metadata-token'] === 'tok-1' ? req.url : undefined;
    if (meta === '/latest/meta-data/instance-id') return void res.end('i-0test0000000001');
    if (meta === '/latest/meta-data/iam/security-credentials/') return void res.end('client-role');
    if (meta === '/latest/meta-data/iam/security-credentials/client-role')
      return void res.end(
        '{\n  "Code" : "Success",\n  "Type" : "AWS-HMAC",\n  "AccessKeyId" : "ASIATESTKEY",\n' +
          '  "SecretAccessKey" : "test/secret+key",\n  "Token" : "IQoJtoken/+=",\n' +
          '  "Expiration" : "2026-12-02T20:00:00Z"\n}',
      );
    if (
      req.method === 'GET' &&
      req.url === `/latest/meta-data/tags/instance/${EXPIRES_AT_TAG}` &&
      req.headers['x-aws-ec2-metadata-token'] === 'tok-1' &&
      expiresAt !== undefined
    )
      return void res.end(expiresAt);
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  imds = `http://127.0.0.1:${(server.address() as AddressInfo).port}/latest`;
  dir = mkdtempSync(join(tmpdir(), 'aurora-bench-deadman-'));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the switch; returns the arguments `shutdown` was called with. */
async function scheduledShutdown(): Promise<string> {
  const recorded = join(dir, `shutdown-${requests.length}`);
  const script = [
    'set -euo pipefail',
    `IMDS='${imds}'`,
    `shutdown() { echo "$*" > '${recorded}'; }`,
    ...deadMansSwitchCommands(EXPIRES_AT_TAG),
  ].join('\n');
  writeFileSync(join(dir, 'switch.sh'), script);
  await run('bash', [join(dir, 'switch.sh')]);
  return readFileSync(recorded, 'utf8').trim();
}

describe("clients' dead-man's switch", () => {
  it("shuts down at the run's expires-at tag, read with an IMDSv2 token", async () => {
    // Arrange
    expiresAt = new Date(Date.now() + 3 * 3600_000).toISOString();

    // Act
    const args = await scheduledShutdown();

    // Assert
    expect(args).toBe('-h +180');
    expect(requests).toContain(`GET /latest/meta-data/tags/instance/${EXPIRES_AT_TAG} token=tok-1`);
  });

  it('never later than the longest time to live a spec allows', async () => {
    // Arrange
    expiresAt = new Date(Date.now() + 30 * 24 * 3600_000).toISOString();

    // Act
    const args = await scheduledShutdown();

    // Assert
    expect(args).toBe(`-h +${MAX_CLIENT_LIFETIME_HOURS * 60}`);
  });

  it('falls back to the longest time to live when the tag cannot be read', async () => {
    // Arrange
    expiresAt = undefined;

    // Act
    const args = await scheduledShutdown();

    // Assert
    expect(args).toBe(`-h +${MAX_CLIENT_LIFETIME_HOURS * 60}`);
  });

  it("uses the spec schema's largest ttlHours as that longest time", () => {
    // Arrange
    const spec = (ttlHours: number) => ({
      name: 'ttl',
      region: 'us-east-1',
      engine: { version: '3.04.0' },
      variants: [{ name: 'v', instanceClass: 'db.r6g.large' }],
      data: { tables: 1, tableSize: 10 },
      workloads: [{ name: 'w', test: 'oltp_read_only', threads: [1] }],
      ttlHours,
    });

    // Act
    const atMax = () => validateSpec(spec(MAX_CLIENT_LIFETIME_HOURS));
    const overMax = () => validateSpec(spec(MAX_CLIENT_LIFETIME_HOURS + 1));

    // Assert
    expect(atMax).not.toThrow();
    expect(overMax).toThrow(/ttlHours/);
  });
});

describe('the user data install steps', () => {
  const commands = clientUserDataCommands({
    runnerS3Uri: 's3://lake/runner/',
    bucketS3Uri: 's3://lake/',
    region: 'eu-west-1',
    expiresAtTag: EXPIRES_AT_TAG,
  });
  const script = commands.join('\n');

  // That the shell expands it (no single quotes around it) is shown by test/integration/client-ready.test.ts,
  // which runs these commands under a temp AURORA_BENCH_HOME; the whole boot runs in
  // test/integration/client-boot.test.ts.
  it('puts every client path under ${AURORA_BENCH_HOME:-/opt/aurora-bench}', () => {
    expect(script.split('/opt/aurora-bench').length - 1).toBe(
      script.split('${AURORA_BENCH_HOME:-/opt/aurora-bench}').length - 1,
    );
  });

  it("installs Debian's packages, runner, SSM agent, then proves sysbench works with the trap cleared", () => {
    // Arrange
    const at = (line: string) => commands.findIndex((c) => c.includes(line));

    // Assert
    expect(commands.slice(-2)).toEqual([
      'trap - EXIT',
      '"${AURORA_BENCH_HOME:-/opt/aurora-bench}/client/client-ready.sh" --marker-uri "$ready_marker_uri"',
    ]);
    expect(script).toContain('Acquire::Retries=5 install -y --no-install-recommends sysbench awscli nodejs');
    // The trap is set before apt-get: an apt failure is reported at once (by curl, before the AWS CLI is there).
    expect(at('trap report_not_ready EXIT')).toBeLessThan(at('apt-get -q -o DPkg::Lock::Timeout=900'));
    expect(at('ready_marker_uri="s3://')).toBeLessThan(at('apt-get -q -o DPkg::Lock::Timeout=900'));
    expect(at('apt-get -q -o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 install')).toBeLessThan(
      at('aws s3 cp --only-show-errors --recursive'),
    );
    expect(at('aws s3 cp --only-show-errors --recursive')).toBeLessThan(at('dpkg -i /tmp/amazon-ssm-agent.deb'));
    expect(script).toContain('ready_marker_uri="s3://lake/clients/${instance_id}/ready.json"');
    expect(script).not.toMatch(/\bdnf\b|install-sysbench/);
  });

  it("reports a failure before apt's AWS CLI with curl: SigV4 with the instance profile's keys and token", async () => {
    // Arrange: no runner under this home; the step that fails is the first after the trap.
    s3Puts.length = 0;
    const home = join(dir, 'home-before-apt');
    const quoted = String.raw`apt said "no" \ and	a tab`;
    const script = [
      'set -euo pipefail',
      `IMDS='${imds}'`,
      "export AWS_DEFAULT_REGION='eu-west-1'",
      `export AWS_ENDPOINT_URL_S3='${imds.replace(/\/latest$/, '/s3')}'`,
      ...clientInstallCommands({ runnerS3Uri: 's3://lake/runner/', bucketS3Uri: 's3://lake/' }, [
        `not_ready_by_curl '${quoted}'`,
        'false',
      ]),
    ].join('\n');
    writeFileSync(join(dir, 'before-apt.sh'), script);

    // Act
    const r = await run('bash', [join(dir, 'before-apt.sh')], { env: { ...process.env, AURORA_BENCH_HOME: home } })
      .then(() => 0)
      .catch((e: unknown) => (e as { code: number }).code);

    // Assert: the direct call, then the trap's; both the marker's JSON, path-style to the endpoint.
    expect(r).toBe(1);
    expect(s3Puts.map((p) => p.path)).toEqual([
      '/s3/lake/clients/i-0test0000000001/ready.json',
      '/s3/lake/clients/i-0test0000000001/ready.json',
    ]);
    const [direct, trapped] = s3Puts.map((p) => JSON.parse(p.body) as Record<string, unknown>);
    expect(direct).toMatchObject({ ready: false, reason: 'apt said "no" \\ and a tab', hostname: expect.any(String) });
    expect(trapped).toMatchObject({ ready: false, reason: expect.stringMatching(/^user data failed \(exit 1\): /) });
    const headers = s3Puts[1]!.headers;
    expect(headers['authorization']).toMatch(
      new RegExp(
        /^AWS4-HMAC-SHA256 Credential=ASIATESTKEY\/\d{8}\/eu-west-1\/s3\/aws4_request, /.source +
          /SignedHeaders=\S*x-amz-security-token/.source,
      ),
    );
    expect(headers['x-amz-security-token']).toBe('IQoJtoken/+=');
    expect(headers['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    expect(headers['content-type']).toBe('application/json');
  });

  // EC2 User Guide, "Retrieve security credentials from instance metadata"; curl's --aws-sigv4 for S3.
  it("uploads a failure before the AWS CLI is there with curl, signed with the instance profile's keys", () => {
    expect(script).toContain('"$IMDS/meta-data/iam/security-credentials/$role"');
    expect(script).toContain('--aws-sigv4 "aws:amz:$AWS_DEFAULT_REGION:s3"');
    expect(script).toContain('header = "x-amz-security-token: %s"');
    expect(script).toContain('endpoint=${AWS_ENDPOINT_URL_S3:-${AWS_ENDPOINT_URL:-}}');
    expect(script).toContain('url="https://$bucket.s3.$AWS_DEFAULT_REGION.amazonaws.com/$key"');
    // client-ready.sh once it is there; curl when it is not, or when it could not upload (its exit 4).
    expect(script).toMatch(/client-ready\.sh" --marker-uri "\$ready_marker_uri" --not-ready "\$reason"/);
    expect(script).toContain('if [ "$ready_rc" -eq 4 ]; then');
  });

  it('waits for a dpkg lock apt-daily holds and retries a failed fetch, in the update and the install', () => {
    const apt = commands.filter((c) => c.startsWith('apt-get'));

    expect(apt).toHaveLength(2);
    for (const line of apt) expect(line).toMatch(/^apt-get -q -o DPkg::Lock::Timeout=\d+ -o Acquire::Retries=\d+ /);
  });

  // Systems Manager User Guide, agent-install-deb: the agent's .deb from the region's public bucket.
  it("fetches the SSM agent's Debian package from the region's public bucket for the machine's architecture", () => {
    expect(script).toContain(
      'aws s3 cp --only-show-errors --no-sign-request ' +
        '"s3://amazon-ssm-${AWS_DEFAULT_REGION}/latest/debian_$(dpkg --print-architecture)/amazon-ssm-agent.deb" ' +
        '/tmp/amazon-ssm-agent.deb',
    );
    expect(commands).toContain('systemctl enable --now amazon-ssm-agent');
    expect(commands.indexOf("export AWS_DEFAULT_REGION='eu-west-1'")).toBeLessThan(
      commands.findIndex((c) => c.includes('amazon-ssm-${AWS_DEFAULT_REGION}')),
    );
  });
});

describe('the self-managed server user data', () => {
  const commands = serverUserDataCommands({
    runnerS3Uri: 's3://lake/runner/',
    region: 'eu-west-1',
    expiresAtTag: EXPIRES_AT_TAG,
  });

  it('installs the AWS CLI, bundle and SSM agent before server-install.sh, and the metrics agent last', () => {
    // Arrange
    const at = (line: string) => commands.findIndex((c) => c.includes(line));

    // Assert
    expect(
      at('apt-get -q -o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 install -y --no-install-recommends awscli jq'),
    ).toBeLessThan(at('aws s3 cp --only-show-errors --recursive'));
    expect(at('aws s3 cp --only-show-errors --recursive')).toBeLessThan(at('dpkg -i /tmp/amazon-ssm-agent.deb'));
    expect(at('dpkg -i /tmp/amazon-ssm-agent.deb')).toBeLessThan(at('/client/server-install.sh"'));
    expect(commands[commands.length - 1]).toBe(
      '"${AURORA_BENCH_HOME:-/opt/aurora-bench}/client/server-metrics-agent.sh"',
    );
  });

  it('names in SERVER_INSTALL_PACKAGES what server-install.sh installs (the rehearsal caches that layer)', () => {
    // Arrange
    const text = readFileSync(join(__dirname, '..', '..', 'client', 'server-install.sh'), 'utf8');

    // Act
    const installed = /install -y --no-install-recommends ([a-z0-9 -]+?) >>/.exec(text)?.[1]?.split(' ');

    // Assert
    expect(installed).toEqual([...SERVER_INSTALL_PACKAGES]);
  });
});
