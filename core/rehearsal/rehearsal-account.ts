/**
 * One account that several AWS rehearsals use in turn, as a deployed stack's executions share its account.
 * moto is reset before the first rehearsal only, and the standing infrastructure is kept.
 * The Task functions keep their execution environments while bundles and environment stay the same.
 * A Lambda function does the same.
 * See Lambda Developer Guide, "Understanding the Lambda execution environment lifecycle".
 * Rehearsals take the account one at a time. A test file shares one between its rehearsals.
 */
import type { AwsBackendConfig } from '../backends/aws/config';
import type { LambdaSandbox, SdkAnswer, SdkCall } from './lambda-sandbox';

/** What a sandbox's functions reach while a rehearsal holds the account. */
export interface SandboxRoute {
  readonly sdk: (name: string, call: SdkCall) => Promise<SdkAnswer>;
  readonly onLog: (name: string, line: string) => void;
}

export class RehearsalAccount {
  /** The standing infrastructure's configuration, by what it was created for. */
  private readonly configs = new Map<string, AwsBackendConfig>();
  private warm: { readonly key: string; readonly sandbox: LambdaSandbox } | undefined;
  private route: SandboxRoute | undefined;
  private held = false;
  private used = false;

  /**
   * @param motoEndpoint the account's moto server, started and stopped by the owner
   * @param dir a folder for the sandbox. Every folder above it must let others through,
   * because as root its environments run as nobody.
   */
  constructor(
    readonly motoEndpoint: string,
    readonly dir: string,
  ) {}

  /** Takes the account for one rehearsal, and says whether it is the first. */
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
   * The sandbox of the functions `key` names.
   * An earlier rehearsal's is kept when the key is the same. Otherwise `create` makes a new one.
   * Its functions reach `route` until release().
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

  /** Ends a rehearsal's hold. The functions stay warm, their calls unanswered until the next one. */
  release(): void {
    this.route = undefined;
    this.held = false;
  }

  /** The owner stops the moto server. */
  async dispose(): Promise<void> {
    const warm = this.warm;
    this.warm = undefined;
    this.route = undefined;
    await warm?.sandbox.dispose();
  }
}
