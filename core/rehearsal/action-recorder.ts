/**
 * An HTTP pass-through between Trino and moto that names the IAM action of each request.
 * So the rehearsal knows what a query needs its caller's role to allow.
 * Athena runs a query with the caller's Glue and S3 permissions.
 * See Athena User Guide, "Configure access to databases and tables in the AWS Glue Data Catalog".
 * Glue's JSON protocol names its operation in X-Amz-Target. See botocore glue service-2.json.
 * An S3 request's action follows from its method and query.
 * See Service Authorization Reference, "Actions defined by Amazon S3".
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The IAM action of one request to Glue or S3, or undefined for anything else. */
/**
 * Glue column-statistics operations that Trino's CREATE TABLE AS calls anyway, answered empty.
 * See AWS Glue API, "UpdateColumnStatisticsForTable". Athena reads none of them.
 */
const COLUMN_STATISTICS: Readonly<Record<string, string>> = {
  'AWSGlue.UpdateColumnStatisticsForTable': '{"Errors":[]}',
  'AWSGlue.UpdateColumnStatisticsForPartition': '{"Errors":[]}',
  'AWSGlue.DeleteColumnStatisticsForTable': '{}',
  'AWSGlue.DeleteColumnStatisticsForPartition': '{}',
};

function requestAction(method: string, url: string, target: string | undefined): string | undefined {
  const glue = /^AWSGlue\.(\w+)$/.exec(target ?? '');
  if (glue) return `glue:${glue[1]}`;
  const [path = '', query = ''] = url.split('?', 2);
  const params = new URLSearchParams(query);
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.length === 0) return 's3:ListAllMyBuckets';
  const onObject = segments.length > 1;
  if (method === 'GET' || method === 'HEAD') {
    if (!onObject) return params.has('location') ? 's3:GetBucketLocation' : 's3:ListBucket';
    return 's3:GetObject';
  }
  if (method === 'PUT') return 's3:PutObject';
  if (method === 'DELETE') return onObject ? 's3:DeleteObject' : 's3:DeleteBucket';
  if (method === 'POST') return params.has('delete') ? 's3:DeleteObject' : 's3:PutObject';
  return undefined;
}

export class ActionRecorder {
  private server: Server | undefined;
  private current: string[] = [];

  constructor(private readonly target: string) {}

  /** The endpoint Trino's catalog is pointed at. */
  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req: IncomingMessage, res) => {
      const action = requestAction(req.method ?? 'GET', req.url ?? '/', req.headers['x-amz-target'] as string);
      if (action !== undefined) this.current.push(action);
      const answered = COLUMN_STATISTICS[String(req.headers['x-amz-target'])];
      if (answered !== undefined) {
        // Answered here, since moto's Glue lacks it and its 500 fails Trino's CREATE TABLE AS.
        req.resume();
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(answered);
        return;
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The actions of the requests made while `run` ran, in order. The caller runs one at a time. */
  async during<T>(run: () => Promise<T>): Promise<{ result: T; actions: string[] }> {
    this.current = [];
    try {
      const result = await run();
      return { result, actions: this.current };
    } finally {
      this.current = [];
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
