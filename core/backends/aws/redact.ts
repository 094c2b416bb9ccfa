/** Never let a secret into the lake or a log line through an error detail. */
export function redact(text: string): string {
  return text.replace(/(password[^=\s:]*[=:]\s*)\S+/gi, '$1***').replace(/("password"\s*:\s*)"[^"]*"/gi, '$1"***"');
}
