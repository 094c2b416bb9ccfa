/**
 * One account that several AWS rehearsals use in turn, as the executions of one deployed stack use
 * its account: the moto server is reset before the first rehearsal only, the standing
 * infrastructure (standing-infrastructure.ts, and what the verdicts use) is created once per Region
 * and kept, and the Task functions keep their execution environments between rehearsals while the
 * bundles and their environment stay the same, as a Lambda function keeps its environments between
 * invocations (Lambda Developer Guide, "Understanding the Lambda execution environment lifecycle":
 * an environment is reused for later invocations). Each function's first invocation then loads its
 * bundle and the SDK clients once per account rather than once per rehearsal.
 *
 * Rehearsals take the account one at a time (take() refuses a second one meanwhile). The CLI's
 * rehearsal uses none (one run per process); a test file shares one between its rehearsals.
 */
import type { AwsBackendConfig } from '../backends/aws/config';
import type { LambdaSandbox, SdkAnswer, SdkCall } from './lambda-sandbox';

/** What a sandbox's functions reach while a rehearsal holds the account: its SDK clients and its log. */
export interface SandboxRoute {
  readonly sdk: (name: string, call: SdkCall) => Promise<SdkAnswer>;
  readonly onLog: (name: string, line: string) => void;
}

export class RehearsalAccount {
  /** The standing infrastructure's configuration, by what it was created for (standing-config.ts's key). */
  private readonly configs = new Map<string, AwsBackendConfig>();
  private warm: { readonly key: string; readonly sandbox: LambdaSandbox } | undefined;
  private route: SandboxRoute | undefined;
  private held = false;
  private used = false;

  /**
   * @param motoEndpoint the account's moto server (started and stopped by the owner)
   * @param dir a folder for the sandbox (its execution environments run as nobody when this runs as root,
   * so every folder above it must let others through)
   */
  constructor(
    readonly motoEndpoint: string,
    readonly dir: string,
  ) {}

  /** Takes the account for one rehearsal; whether it is the account's first (its moto server to reset). */
  take(): { readonly first: boolean } {
    if (this.held) throw new Error('the rehearsal account is in use by another rehearsal');
    this.held = true;
    const first = !this.used;
    this.used = true;
    return { first };
  }

  /** The configuration created for `key` by an earlier rehearsal, or `create`'s, kept for the next ones. */
  async standing(key: string, create: () => Promise<AwsBackendConfig>): Promise<AwsBackendConfig> {
    const known = this.configs.get(key);
    if (known) return known;
    const config = await create();
    this.configs.set(key, config);
    return config;
  }

  /**
   * The sandbox of the functions `key` names (their bundles and environments): the one kept from an
   * earlier rehearsal when the key is the same, else a new one from `create` (the previous one
   * disposed). Its functions reach `route` until release().
   */
  async sandbox(
    key: string,
    create: (route: SandboxRoute) => LambdaSandbox,
    route: SandboxRoute,
  ): Promise<LambdaSandbox> {
    this.route = route;
    if (this.warm?.key === key) return this.warm.sandbox;
    const previous = this.warm;
    this.warm = undefined;
    await previous?.sandbox.dispose();
    const sandbox = create({
      sdk: (name, call) =>
        this.route
          ? this.route.sdk(name, call)
          : Promise.resolve({
              ok: false,
              error: { name: 'Error', message: 'no rehearsal holds the account: the call has no answer', fields: {} },
            }),
      onLog: (name, line) => this.route?.onLog(name, line),
    });
    this.warm = { key, sandbox };
    return sandbox;
  }

  /** Ends a rehearsal's hold: the functions stay warm, their calls unanswered until the next one. */
  release(): void {
    this.route = undefined;
    this.held = false;
  }

  /** Stops the functions' environments (the owner stops the moto server). */
  async dispose(): Promise<void> {
    const warm = this.warm;
    this.warm = undefined;
    this.route = undefined;
    await warm?.sandbox.dispose();
  }
}
