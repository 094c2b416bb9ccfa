/**
 * A statement on a Trino server over its client REST protocol. See Trino documentation, "Client protocol".
 * It POSTs the statement, then GETs each nextUri until there is none. Every value comes as JSON.
 */

interface TrinoColumn {
  readonly name: string;
  /** Trino's type signature, such as varchar, array(varchar) or timestamp(3). */
  readonly type: string;
}

export interface TrinoResult {
  readonly columns: readonly TrinoColumn[];
  readonly rows: readonly (readonly unknown[])[];
}

export interface TrinoSession {
  readonly catalog?: string;
  readonly schema?: string;
  /** Session properties sent as X-Trino-Session. */
  readonly properties?: Readonly<Record<string, string>>;
}

interface StatementPage {
  readonly nextUri?: string;
  readonly columns?: readonly TrinoColumn[];
  readonly data?: readonly (readonly unknown[])[];
  readonly error?: { readonly message: string; readonly errorName?: string };
}

/** A statement Trino refused or failed, with its message and the statement's first line. */
export class TrinoQueryError extends Error {
  override readonly name = 'TrinoQueryError';
  constructor(
    readonly trinoMessage: string,
    readonly errorName: string | undefined,
    sql: string,
  ) {
    super(`Trino: ${trinoMessage} (in: ${sql.split('\n')[0]!.slice(0, 200)})`);
  }
}

export async function runTrino(endpoint: string, sql: string, session: TrinoSession = {}): Promise<TrinoResult> {
  const headers: Record<string, string> = { 'X-Trino-User': 'aurora-bench-rehearsal' };
  if (session.catalog) headers['X-Trino-Catalog'] = session.catalog;
  if (session.schema) headers['X-Trino-Schema'] = session.schema;
  const props = Object.entries(session.properties ?? {});
  if (props.length > 0) headers['X-Trino-Session'] = props.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join(',');
  let res = await fetch(`${endpoint}/v1/statement`, { method: 'POST', headers, body: sql });
  let columns: readonly TrinoColumn[] = [];
  const rows: (readonly unknown[])[] = [];
  for (;;) {
    if (!res.ok) throw new Error(`Trino at ${endpoint} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    const page = (await res.json()) as StatementPage;
    if (page.error) throw new TrinoQueryError(page.error.message, page.error.errorName, sql);
    if (page.columns) columns = page.columns;
    if (page.data) rows.push(...page.data);
    if (!page.nextUri) return { columns, rows };
    res = await fetch(page.nextUri, { headers });
  }
}

/** The server's version from GET /v1/info, or undefined when nothing answers there. */
export async function trinoVersion(endpoint: string): Promise<{ version: string; starting: boolean } | undefined> {
  try {
    const res = await fetch(`${endpoint}/v1/info`, { signal: AbortSignal.timeout(3_000) });
    if (!res.ok) return undefined;
    const info = (await res.json()) as { nodeVersion?: { version?: string }; starting?: boolean };
    const version = info.nodeVersion?.version;
    return version === undefined ? undefined : { version, starting: info.starting === true };
  } catch {
    return undefined;
  }
}
