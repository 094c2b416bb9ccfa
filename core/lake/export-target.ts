/**
 * Where `results --sql --export` may write. Inside the lake a file would be read as lake data.
 * Both paths are compared with `..` and links resolved, so no link gets a file into the lake.
 * The file is created exclusively, so a link in its place is never followed.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** `path` with its existing part's links resolved. The part that does not exist yet stays as written. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPath(parent), basename(path));
  }
}

/** Whether `path` is `dir` or inside it. */
function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

/** Why `file` may not be an export's target, or undefined when it may. */
export function exportIntoLakeProblem(file: string, lakeDir: string): string | undefined {
  const target = resolve(file);
  const targets = [target, join(realPath(dirname(target)), basename(target))];
  const lakes = [resolve(lakeDir), realPath(resolve(lakeDir))];
  if (!targets.some((t) => lakes.some((lake) => within(lake, t)))) return undefined;
  return (
    `--export ${file}: it is inside the results lake ${lakeDir}, where it would be read as lake data: ` +
    `choose a file outside it`
  );
}
