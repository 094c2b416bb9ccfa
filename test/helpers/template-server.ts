/**
 * One MariaDB writer started the way the local backend starts its servers (from the cached template
 * datadir, core/backends/local/template.ts), under `dir`, for tests of what talks to a server.
 */
import { join } from 'node:path';
import { startServerFromTemplate, type ServerInfo } from '../../core/backends/local/mariadb-server';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import { ensureTemplate, LOCAL_LOGINS } from '../../core/backends/local/template';

export async function startTemplateWriter(dir: string, instanceId: string): Promise<ServerInfo> {
  const versions = await checkLocalDependencies();
  const template = await ensureTemplate(versions.tools, versions.serverVersion);
  const started = await startServerFromTemplate(template.datadir, {
    tools: versions.tools,
    instanceId,
    role: 'writer',
    serverId: 1,
    dir: join(dir, 'w'),
    options: {},
    admin: LOCAL_LOGINS.admin,
  });
  return started.info;
}
