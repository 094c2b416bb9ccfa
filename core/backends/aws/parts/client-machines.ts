/** The cell's client instances (startClients, checkClientsReady): client-fleet.ts. */
import { ClientFleet, type ClientFleetOptions } from '../client-fleet';
import type { BackendOperations } from './compose';

export function clientMachinesPart(
  options: ClientFleetOptions,
): Pick<BackendOperations, 'startClients' | 'checkClientsReady'> {
  const fleet = new ClientFleet(options);
  return {
    startClients: (run, cell, resources) => fleet.startClients(run, cell, resources),
    checkClientsReady: (run, cell, resources) => fleet.checkClientsReady(run, cell, resources),
  };
}
