import type { SSMClient } from '@aws-sdk/client-ssm';
import { CLIENT_HOME } from '../backends/aws/runner-command';
import { interceptClient } from './sdk-intercept';

/**
 * Every client path the stack and the backend write is ${AURORA_BENCH_HOME:-/opt/aurora-bench}/...
 * (core/backends/aws/runner-command.ts CLIENT_HOME): an emulated client runs in its own home only
 * because of that. A command naming /opt/aurora-bench any other way would run outside it (on this
 * machine, in its /opt), so the rehearsal refuses it instead.
 */
function bareClientPaths(commands: readonly string[]): string[] {
  return commands.filter((c) => /\/opt\/aurora-bench/.test(c.split(CLIENT_HOME).join('')));
}

/** On the handlers' SSM client: such a SendCommand fails before it reaches the emulated agent. */
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
