/**
 * The Trino server the rehearsal's Athena runs on (scripts/trino.sh) for a test file: the one the test
 * run started (AURORA_BENCH_TRINO, scripts/test.sh) when it answers, else one of its own, stopped
 * afterwards. No skipping: when Trino cannot be started the suite fails with the script's message.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { synthesisCacheDir } from '../../bin/aws-rehearsal';
import type { AnsweredQuery } from '../../core/rehearsal/athena-on-trino';
import { synthesizeTemplateCached, type TemplateJson } from '../../lib/synthesized-workflow';
import { REGION } from './fixtures';

export interface TrinoServer {
  readonly endpoint: string;
  stop(): void;
}

const root = path.resolve(__dirname, '../..');
const script = path.join(root, 'scripts', 'trino.sh');

function shared(): string | undefined {
  const endpoint = process.env['AURORA_BENCH_TRINO'];
  if (!endpoint || !/^http:\/\/127\.0\.0\.1:\d+$/.test(endpoint)) return undefined;
  try {
    // Started early by scripts/test.sh, it may still be starting: wait for it rather than start another.
    execFileSync(
      'bash',
      [
        '-c',
        'for i in $(seq 1 600); do curl -sf "$0/v1/info" | grep -q \'"starting":false\' && exit 0; ' +
          'sleep 0.5; done; exit 1',
        endpoint,
      ],
      { stdio: 'ignore', timeout: 310_000 },
    );
    return endpoint;
  } catch {
    return undefined;
  }
}

export function startTrino(): TrinoServer {
  const endpoint = shared();
  if (endpoint) return { endpoint, stop: () => undefined };
  let out: string;
  try {
    out = execFileSync('bash', [script, 'start'], {
      encoding: 'utf8',
      timeout: 600_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`Trino could not be started by scripts/trino.sh: ${err.stderr?.trim() || err.message}`, {
      cause: e,
    });
  }
  const own = /TRINO_ENDPOINT=(\S+)/.exec(out)?.[1];
  const pid = /TRINO_PID=(\d+)/.exec(out)?.[1];
  const dir = /TRINO_DIR=(\S+)/.exec(out)?.[1];
  if (!own || !pid || !dir) throw new Error(`scripts/trino.sh start printed no endpoint/pid:\n${out}`);
  return {
    endpoint: own,
    stop: () => execFileSync('bash', [script, 'stop', pid, dir], { stdio: 'ignore', timeout: 30_000 }),
  };
}

/** The synthesized stack's template (its Glue tables, its roles), as the rehearsal synthesizes it. */
export function stackTemplate(): TemplateJson {
  return synthesizeTemplateCached({ projectRoot: root, region: REGION }, synthesisCacheDir());
}

/** The IAM actions the role of the template's function `<logicalIdPrefix>...` is allowed (its inline policies). */
function roleActions(template: TemplateJson, logicalIdPrefix: string): string[] {
  const resources = Object.entries(template.Resources);
  const fn = resources.find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(logicalIdPrefix));
  if (!fn) throw new Error(`no function ${logicalIdPrefix}* in the template`);
  const role = (fn[1].Properties['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return resources
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
    .filter(([, r]) => (r.Properties['Roles'] as { Ref?: string }[]).some((x) => x.Ref === role))
    .flatMap(
      ([, r]) => (r.Properties['PolicyDocument'] as { Statement: { Effect: string; Action: unknown }[] }).Statement,
    )
    .filter((st) => st.Effect === 'Allow')
    .flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]) as string[]);
}

/**
 * Whether an IAM action pattern allows the action: * matches any characters, case-insensitively
 * (IAM User Guide, "IAM JSON policy elements: Action").
 */
const allows = (patterns: readonly string[], action: string): boolean =>
  patterns.some((p) =>
    new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action),
  );

/**
 * The Glue and S3 actions Trino made for the queries it ran as sent (not the translated UNLOAD and ALTER
 * TABLE, whose actions are Trino's stand-ins, not Athena's) that the role of the function does not
 * allow, each named with its query. An action-level check: resources and conditions are not evaluated.
 */
export function deniedActions(answered: readonly AnsweredQuery[], functionLogicalIdPrefix: string): string[] {
  const allowed = roleActions(stackTemplate(), functionLogicalIdPrefix);
  return answered
    .filter((q) => !q.translated)
    .flatMap((q) =>
      q.actions.filter((a) => !allows(allowed, a)).map((a) => `${a} (${q.sql.replace(/\s+/g, ' ').slice(0, 80)})`),
    );
}
