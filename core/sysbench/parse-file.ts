/**
 * `aurora-bench parse FILE`: parse a raw sysbench log, or a runner output directory (output.log +
 * result.json, as client/runner.js writes it), into one ParsedOutput.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseSysbenchOutput } from './parser';
import type { ParsedOutput, RunnerResult } from './types';
import { AuroraBenchError } from '../errors';

class ParseInputError extends AuroraBenchError {
  override readonly name = 'ParseInputError';
}

function readResult(path: string): RunnerResult {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ParseInputError(`${path}: not valid JSON`, { cause: e, source: path });
  }
  const exitCode = (value as { exitCode?: unknown } | null)?.exitCode;
  if (typeof exitCode !== 'number' || !Number.isInteger(exitCode)) {
    throw new ParseInputError(`${path}: field "exitCode" must be an integer, got ${JSON.stringify(exitCode)}`);
  }
  return value as RunnerResult;
}

export function parseRunnerOutput(dirOrFile: string, opts: { percentile?: number } = {}): ParsedOutput {
  if (!existsSync(dirOrFile)) throw new ParseInputError(`${dirOrFile}: no such file or directory`);
  if (!statSync(dirOrFile).isDirectory()) {
    return parseSysbenchOutput(readFileSync(dirOrFile, 'utf8'), opts);
  }
  const logPath = join(dirOrFile, 'output.log');
  if (!existsSync(logPath)) throw new ParseInputError(`${dirOrFile}: not a runner output directory (no output.log)`);
  const resultPath = join(dirOrFile, 'result.json');
  const result = existsSync(resultPath) ? readResult(resultPath) : undefined;
  const parsed = parseSysbenchOutput(readFileSync(logPath, 'utf8'), {
    ...opts,
    ...(result ? { exitCode: result.exitCode } : {}),
  });
  if (result === undefined && parsed.status === 'ok') {
    return { ...parsed, status: 'failed', error: 'runner did not finish (no result.json)' };
  }
  return parsed;
}
