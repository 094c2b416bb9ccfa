import type { SSMClient } from '@aws-sdk/client-ssm';
import { CLIENT_HOME } from '../backends/aws/runner-command';
import { interceptClient } from './sdk-intercept';

/**
 * An emulated client runs in its own home only because every client path starts with AURORA_BENCH_HOME.
 * A command naming /opt/aurora-bench another way would run in this machine's /opt, so it is refused.
 */
function bareClientPaths(commands: readonly string[]): string[] {
  return commands.filter((c) => /\/opt\/aurora-bench/.test(c.split(CLIENT_HOME).join('')));
}

/** Such a SendCommand fails before it reaches the emulated agent. */
export function refuseBareClientPaths(ssm: SSMClient): void {
  interceptClient(ssm, 'auroraBenchRehearsalClientHome', async (command, input, forward) => {
    const bare =
      command === 'SendCommand'
        ? bareClientPaths((input['Parameters'] as Record<string, string[]> | undefined)?.['commands'] ?? [])
        : [];
    if (bare.length > 0)
      throw new Error(
        `the rehearsal cannot run a client command that names /opt/aurora-bench ` +
          `outside ${CLIENT_HOME}: ${bare.join(' | ')}`,
      );
    return forward();
  });
}
