/**
 * Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: fd 3 in,
 * fd 4 out, NUL-terminated JSON), so tests can open a page, read console errors, exceptions and
 * network requests, evaluate expressions and take screenshots with no extra package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function findChromium(): string | undefined {
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p));
}

interface Pending {
  resolve: (v: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

export interface PageEvents {
  readonly consoleErrors: string[];
  readonly exceptions: string[];
  readonly logErrors: string[];
  /** URLs the page requested (its own file:// URL included). */
  readonly requests: string[];
}

export class Chromium {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners: ((method: string, params: Record<string, unknown>, sessionId?: string) => void)[] = [];
  private buffer = '';

  private constructor(
    private readonly proc: ChildProcess,
    private readonly input: Writable,
    output: Readable,
    readonly stderr: string[],
  ) {
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const text = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        const msg = JSON.parse(text) as {
          id?: number;
          result?: Record<string, unknown>;
          error?: { message: string };
          method?: string;
          params?: Record<string, unknown>;
          sessionId?: string;
        };
        if (msg.id !== undefined) {
          const p = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error) p?.reject(new Error(msg.error.message));
          else p?.resolve(msg.result ?? {});
        } else if (msg.method) {
          for (const l of this.listeners) l(msg.method, msg.params ?? {}, msg.sessionId);
        }
      }
    });
  }

  static async launch(binary: string, userDataDir: string): Promise<Chromium> {
    const proc = spawn(
      binary,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-default-apps',
        '--disable-extensions',
        '--disable-sync',
        '--no-first-run',
        '--hide-scrollbars',
        '--mute-audio',
        `--user-data-dir=${userDataDir}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    const stderr: string[] = [];
    proc.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
    const browser = new Chromium(proc, proc.stdio[3] as Writable, proc.stdio[4] as Readable, stderr);
    await new Promise<void>((resolve, reject) => {
      proc.once('error', reject);
      proc.once('spawn', () => resolve());
    });
    await browser.send('Browser.getVersion');
    return browser;
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const message = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.input.write(message + '\0');
    });
  }

  /** Open `url` in a new page, wait for its load event, and return what happened plus the session. */
  async open(url: string, viewport = { width: 1200, height: 900 }): Promise<{ sessionId: string; events: PageEvents }> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    const events: PageEvents = { consoleErrors: [], exceptions: [], logErrors: [], requests: [] };
    let loaded: () => void = () => undefined;
    const loadedPromise = new Promise<void>((r) => (loaded = r));
    this.listeners.push((method, params, sid) => {
      if (sid !== sessionId) return;
      if (method === 'Runtime.consoleAPICalled' && (params['type'] === 'error' || params['type'] === 'assert')) {
        events.consoleErrors.push(JSON.stringify(params['args']));
      } else if (method === 'Runtime.exceptionThrown') {
        events.exceptions.push(JSON.stringify(params['exceptionDetails']));
      } else if (method === 'Log.entryAdded') {
        const entry = params['entry'] as { level: string; text: string; url?: string };
        if (entry.level === 'error') events.logErrors.push(`${entry.text} ${entry.url ?? ''}`);
      } else if (method === 'Network.requestWillBeSent') {
        events.requests.push((params['request'] as { url: string }).url);
      } else if (method === 'Page.loadEventFired') {
        loaded();
      }
    });
    for (const domain of ['Page', 'Runtime', 'Log', 'Network']) await this.send(`${domain}.enable`, {}, sessionId);
    await this.send(
      'Emulation.setDeviceMetricsOverride',
      { width: viewport.width, height: viewport.height, deviceScaleFactor: 1, mobile: false },
      sessionId,
    );
    await this.send('Page.navigate', { url }, sessionId);
    await loadedPromise;
    return { sessionId, events };
  }

  async evaluate<T>(sessionId: string, expression: string): Promise<T> {
    const result = (await this.send(
      'Runtime.evaluate',
      { expression, returnByValue: true, awaitPromise: true },
      sessionId,
    )) as {
      result: { value: T };
      exceptionDetails?: unknown;
    };
    if (result.exceptionDetails) throw new Error(`evaluate failed: ${JSON.stringify(result.exceptionDetails)}`);
    return result.result.value;
  }

  /** A PNG of the whole page. */
  async screenshot(sessionId: string): Promise<Buffer> {
    const { data } = (await this.send(
      'Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: true },
      sessionId,
    )) as { data: string };
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    try {
      await Promise.race([this.send('Browser.close'), exited]);
    } catch {
      // the pipe may close before the reply: the exit below is what matters
    }
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
