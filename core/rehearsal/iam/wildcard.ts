/** IAM's wildcards in Action, Resource and the *Like condition operators. See IAM JSON policy element reference. */

/** Matches a policy pattern, where * is any run of characters and ? any one character. */
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
