/**
 * SQL through the `mariadb` command-line client, with a long-lived session for the metrics sampler.
 * The SQL goes to stdin and settings come from an option file, since every user sees a command line.
 * For the same reason an error message never quotes a password literal, since errors reach logs and the lake.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Where a server's admin connection settings are: a [client] option file. */
export interface SqlTarget {
  readonly client: string;
  readonly clientDefaultsFile: string;
}

/** One result row: column values as text, and SQL NULL as null. */
export type Row = (string | null)[];

/** @internal exported for its tests */
export class SqlError extends Error {
  override readonly name = 'SqlError';
  constructor(
    message: string,
    /** MariaDB's error number, when the client printed one. */
    readonly errno?: number,
  ) {
    super(message);
  }
}

/** A statement of a long-lived session got no answer within its deadline, so the server hangs. */
class SqlTimeoutError extends SqlError {}

/**
 * Batch mode escapes tab, newline, backslash and NUL inside values, so splitting on tabs is exact.
 * A value that is the text "NULL" cannot be told from SQL NULL. Nothing here selects one.
 */
function parseBatchOutput(stdout: string): Row[] {
  if (stdout === '') return [];
  // Every row ends with a newline. An empty line is a row of one empty string.
  const lines = stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map(parseBatchLine);
}

function parseBatchLine(line: string): Row {
  return line.split('\t').map((v) => (v === 'NULL' ? null : unescapeBatchValue(v)));
}

function unescapeBatchValue(v: string): string {
  if (!v.includes('\\')) return v;
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c === '0' ? '\0' : c));
}

/**
 * The string literals of `sql` that hold passwords, as written in the SQL text with quotes and escapes.
 * They follow IDENTIFIED BY, MASTER_PASSWORD = and PASSWORD( in MariaDB's syntax.
 * @internal exported for its tests
 */
export function passwordLiterals(sql: string): string[] {
  const literal = String.raw`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"`;
  const re = new RegExp(
    String.raw`(?:IDENTIFIED\s+BY(?:\s+PASSWORD)?|MASTER_PASSWORD\s*=|PASSWORD\s*\()\s*(${literal})`,
    'gi',
  );
  return [...sql.matchAll(re)].map((m) => m[1]!);
}

/**
 * `text` with each password literal of `sql` replaced by '***'.
 * Both the quoted and the bare form go, since the server echoes the statement near a syntax error.
 * @internal exported for its tests
 */
export function redactSql(text: string, sql: string = text): string {
  let out = text;
  for (const lit of passwordLiterals(sql)) {
    out = out.split(lit).join("'***'");
    const inner = lit.slice(1, -1);
    if (inner.length >= 3) out = out.split(inner).join('***');
  }
  return out;
}

function errorFromStderr(stderr: string, sql: string): SqlError {
  const text = stderr.trim();
  const errno = /ERROR (\d+)/.exec(text)?.[1];
  const shortSql = sql.length > 200 ? sql.slice(0, 200) + '...' : sql;
  return new SqlError(
    redactSql(`${text || 'mariadb client failed'} (running: ${shortSql})`, sql),
    errno !== undefined ? Number(errno) : undefined,
  );
}

/** Runs the client with `args`, the SQL on its stdin. Resolves with stdout. */
function runClient(
  target: SqlTarget,
  args: readonly string[],
  sql: string,
  options: { timeoutMs: number; maxBuffer: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      target.client,
      [`--defaults-file=${target.clientDefaultsFile}`, ...args],
      { timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: options.maxBuffer, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) resolve(stdout);
        // Killed at the deadline, so the server did not answer. The client's own message would not say so.
        else if (error.killed)
          reject(errorFromStderr(`the server did not answer within ${options.timeoutMs / 1000} s`, sql));
        else reject(errorFromStderr(stderr || error.message, sql));
      },
    );
    // EPIPE when the client died before reading everything. The callback reports it.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(sql.endsWith('\n') ? sql : sql + '\n');
  });
}

export function sqlString(value: string): string {
  return "'" + value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0').replace(/\n/g, '\\n') + "'";
}

/** Runs `sql` through stdin and returns the rows of every result, in order. */
export async function query(target: SqlTarget, sql: string, options: { timeoutMs?: number } = {}): Promise<Row[]> {
  const stdout = await runClient(target, ['--batch', '--skip-column-names', '--connect-timeout=5'], sql, {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return parseBatchOutput(stdout);
}

/** Name and value rows, as SHOW GLOBAL STATUS gives them, as a map. */
export function rowsToMap(rows: readonly Row[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const r of rows) if (r[0] !== null && r[0] !== undefined) map.set(r[0], r[1] ?? '');
  return map;
}

/** SHOW SLAVE STATUS and similar vertical results need column names, so each row becomes an object. */
export async function queryObjects(target: SqlTarget, sql: string): Promise<Record<string, string | null>[]> {
  const stdout = await runClient(target, ['--batch', '--connect-timeout=5'], sql, {
    timeoutMs: 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [header, ...rows] = parseBatchOutput(stdout);
  if (!header) return [];
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h ?? `col${i}`, r[i] ?? null])));
}

/**
 * One long-lived `mariadb` client process reading statements from stdin.
 * A marker SELECT follows each query, so its rows can be cut out of the output stream.
 * --force keeps the session alive after an SQL error, which stderr reports.
 */
export class SqlSession {
  /** A server that does not answer a statement within this is taken as hung. */
  static readonly DEFAULT_QUERY_TIMEOUT_MS = 15_000;
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly queryTimeoutMs: number;
  private stdoutBuffer = '';
  private stderrBuffer = '';
  private pendingRows: Row[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private current:
    { marker: string; resolve: (rows: Row[]) => void; reject: (e: Error) => void; sql: string } | undefined;
  private counter = 0;
  private closedError: Error | undefined;

  constructor(target: SqlTarget, options: { queryTimeoutMs?: number } = {}) {
    this.queryTimeoutMs = options.queryTimeoutMs ?? SqlSession.DEFAULT_QUERY_TIMEOUT_MS;
    this.proc = spawn(
      target.client,
      [
        `--defaults-file=${target.clientDefaultsFile}`,
        '--batch',
        '--skip-column-names',
        '--unbuffered',
        '--force',
        '--connect-timeout=5',
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.proc.stdout.setEncoding('utf8');
    this.proc.stderr.setEncoding('utf8');
    this.proc.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.proc.stderr.on('data', (chunk: string) => {
      this.stderrBuffer += chunk;
      // The server is gone. With --force the client carries on and fails to reconnect for the marker too.
      // So the marker never comes, and the session ends here instead.
      const cur = this.current;
      if (cur && /^ERROR 20(02|03|06|13) /m.test(this.stderrBuffer)) {
        this.current = undefined;
        this.closedError = new SqlError(
          `lost the connection to the server: ${redactSql(this.stderrBuffer.trim().split('\n')[0]!, cur.sql)}`,
        );
        cur.reject(this.closedError);
        this.proc.kill('SIGKILL');
      }
    });
    this.proc.stdin.on('error', () => undefined); // EPIPE when the client died. 'close' reports it.
    this.proc.on('close', (code) => {
      this.closedError ??= new SqlError(
        `mariadb client session ended ` +
          `(exit ${code ?? 'signal'}): ${redactSql(this.stderrBuffer.trim() || 'no message', this.current?.sql ?? '')}`,
      );
      this.current?.reject(this.closedError);
      this.current = undefined;
    });
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  private onStdout(chunk: string): void {
    this.stdoutBuffer += chunk;
    let nl: number;
    while ((nl = this.stdoutBuffer.indexOf('\n')) >= 0) {
      const line = this.stdoutBuffer.slice(0, nl);
      this.stdoutBuffer = this.stdoutBuffer.slice(nl + 1);
      const cur = this.current;
      if (cur && line === cur.marker) {
        const rows = this.pendingRows;
        this.pendingRows = [];
        // stderr and stdout are separate pipes. An error line written just before the marker
        // gets the chance to arrive before the statement counts as a success.
        setImmediate(() => {
          if (this.current !== cur) return;
          this.current = undefined;
          const err = this.stderrBuffer;
          this.stderrBuffer = '';
          if (/ERROR \d+/.test(err)) cur.reject(errorFromStderr(err, cur.sql));
          else cur.resolve(rows);
        });
      } else if (cur) {
        this.pendingRows.push(parseBatchLine(line));
      }
    }
  }

  /** Runs one statement. Statements run one at a time, in order. */
  query(sql: string): Promise<Row[]> {
    const run = () =>
      new Promise<Row[]>((resolve, reject) => {
        if (this.closedError) {
          reject(this.closedError);
          return;
        }
        const marker = `__aurora_bench_end_${process.pid}_${++this.counter}__`;
        // A server that stops answering never sends the marker.
        // So past the deadline the session ends, and no caller waits on it for ever.
        const timer = setTimeout(() => {
          if (this.current?.marker !== marker) return;
          this.current = undefined;
          this.closedError = new SqlTimeoutError(
            `the server did not answer within ${this.queryTimeoutMs / 1000} s ` +
              `(running: ${redactSql(sql.length > 200 ? sql.slice(0, 200) + '...' : sql)})`,
          );
          reject(this.closedError);
          this.proc.kill('SIGKILL');
        }, this.queryTimeoutMs);
        timer.unref();
        const settle =
          <T>(f: (v: T) => void) =>
          (v: T) => {
            clearTimeout(timer);
            f(v);
          };
        this.current = { marker, resolve: settle(resolve), reject: settle(reject), sql };
        this.pendingRows = [];
        this.stderrBuffer = '';
        this.proc.stdin.write(`${sql.replace(/;\s*$/, '')};\nSELECT '${marker}';\n`);
      });
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Whether the session ended because the server did not answer a statement within its deadline. */
  get timedOut(): boolean {
    return this.closedError instanceof SqlTimeoutError;
  }

  /** Ends the session, at once when a statement is still in flight. Idempotent. */
  async close(): Promise<void> {
    if (this.closedError) return;
    if (this.current) {
      // A hung server may never answer the statement in flight, so the client is not waited for.
      this.closedError = new SqlError('the session was closed with a statement in flight');
      this.current.reject(this.closedError);
      this.current = undefined;
      this.proc.kill('SIGKILL');
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.proc.kill('SIGKILL');
        resolve();
      }, 5_000);
      this.proc.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.proc.stdin.end();
    });
  }
}
