/** `aurora-bench parse FILE` parses a raw sysbench log or a runner output directory into one ParsedOutput. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseSysbenchOutput } from './parser';
import type { ParsedOutput, RunnerResult } from './types';
import { AuroraBenchError } from '../errors';
import { MIB, readUserText, UserFileError } from '../user-file';

/** The most bytes of an output.log or a raw log. A day of 1-s intervals is about 20 MiB. */
const MAX_LOG_BYTES = 256 * MIB;

/** A regular file of at most `maxBytes`, or a ParseInputError naming it. */
function readInput(path: string, maxBytes: number): string {
  try {
    return readUserText(path, maxBytes);
  } catch (e) {
    if (e instanceof UserFileError) throw new ParseInputError(e.message, { source: path });
    throw e;
  }
}

class ParseInputError extends AuroraBenchError {
  override readonly name = 'ParseInputError';
}

function readResult(path: string): RunnerResult {
  let value: unknown;
  const text = readInput(path, MIB);
  try {
    value = JSON.parse(text);
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
    return parseSysbenchOutput(readInput(dirOrFile, MAX_LOG_BYTES), opts);
  }
  const logPath = join(dirOrFile, 'output.log');
  if (!existsSync(logPath)) throw new ParseInputError(`${dirOrFile}: not a runner output directory (no output.log)`);
  const resultPath = join(dirOrFile, 'result.json');
  const result = existsSync(resultPath) ? readResult(resultPath) : undefined;
  const parsed = parseSysbenchOutput(readInput(logPath, MAX_LOG_BYTES), {
    ...opts,
    ...(result ? { exitCode: result.exitCode } : {}),
  });
  if (result === undefined && parsed.status === 'ok') {
    return { ...parsed, status: 'failed', error: 'runner did not finish (no result.json)' };
  }
  return parsed;
}
