import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node.js the rehearsal runs the Lambda functions on.
 * scripts/setup.sh links .node/bin/node to the functions' runtime major. Otherwise the running one serves.
 */
export function lambdaNode(projectRoot: string): string {
  const linked = join(projectRoot, '.node', 'bin', 'node');
  return existsSync(linked) ? linked : process.execPath;
}

/** A Node.js executable's version and the flags it accepts in NODE_OPTIONS. */
export interface NodeProbe {
  readonly path: string;
  readonly version: string;
  readonly major: number;
  readonly flags: ReadonlySet<string>;
}

/** Asks the executable itself, so a sandbox never assumes its children run on this process's Node.js. */
export function probeNode(path: string): NodeProbe {
  const script = 'JSON.stringify([process.versions.node, [...process.allowedNodeEnvironmentFlags]])';
  const r = spawnSync(path, ['-p', script], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`Node.js at ${path} does not run: ${(r.stderr || String(r.error)).trim()}`);
  const [version, flags] = JSON.parse(r.stdout) as [string, string[]];
  return { path, version, major: Number(version.split('.')[0]), flags: new Set(flags) };
}

/** The Lambda runtime identifier of a Node.js major. See Lambda Developer Guide, "Lambda runtimes". */
export function lambdaRuntimeOf(major: number): string {
  return `nodejs${major}.x`;
}
