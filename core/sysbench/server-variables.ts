/** The server's global variables as printed after prepare. This is the configuration that really runs. */

export interface ServerVariables {
  /** Lower-case variable name -> value as the server reports it. */
  readonly variables: ReadonlyMap<string, string>;
  /** PostgreSQL only. The unit each value is in, from pg_settings.unit. */
  readonly units?: ReadonlyMap<string, string>;
  /** Why the variables could not be read. Null when read. */
  readonly error: string | null;
}

const PREFIX = '{"aurora_bench_variable":';

export function parseServerVariables(text: string | undefined): ServerVariables {
  if (text === undefined) return { variables: new Map(), error: 'the runner left no server_variables.jsonl' };
  const variables = new Map<string, string>();
  const units = new Map<string, string>();
  const problems: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith(PREFIX)) {
      try {
        const v = (JSON.parse(line) as { aurora_bench_variable?: { name?: unknown; value?: unknown; unit?: unknown } })
          .aurora_bench_variable;
        if (typeof v?.name === 'string' && typeof v.value === 'string') {
          variables.set(v.name.toLowerCase(), v.value);
          if (typeof v.unit === 'string' && v.unit !== '') units.set(v.name.toLowerCase(), v.unit);
        }
      } catch {
        // a line cut short, and the others still count
      }
    } else if (line.startsWith('FATAL: ') || line.startsWith('aurora-bench runner: ')) {
      problems.push(line.replace(/^(FATAL|aurora-bench runner): /, ''));
    }
  }
  if (variables.size > 0) return { variables, ...(units.size > 0 ? { units } : {}), error: null };
  return {
    variables,
    error: problems.length > 0 ? problems.slice(0, 2).join('; ') : 'server_variables.jsonl holds no variables',
  };
}
