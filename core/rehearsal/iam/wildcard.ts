/** IAM's wildcards in Action, Resource and the *Like condition operators (IAM JSON policy element reference). */

/** A policy pattern with * (any run of characters) and ? (any one character) against a value. */
export function wildcardMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  const body = pattern
    .split('*')
    .map((part) =>
      part
        .split('?')
        .map((q) => q.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
        .join('.'),
    )
    .join('.*');
  return new RegExp(`^${body}$`, ignoreCase ? 'is' : 's').test(value);
}
