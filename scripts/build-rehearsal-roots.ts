/**
 * Builds (or finds cached) the Debian roots the AWS rehearsal boots its instances on
 * (core/rehearsal/instance-root.ts): the clean base and the client and server package layers.
 * scripts/setup.sh --test runs it, so that the first rehearsal test on a clean machine does not spend
 * its own time limit in debootstrap and dpkg. Cached under ${XDG_CACHE_HOME:-~/.cache}/aurora-bench.
 *   node dist/scripts/build-rehearsal-roots.js
 * With --arm64 it builds the arm64 base and client layer instead, under qemu-user-static (the
 * nightly's c6g clients; test/integration/client-boot-arm64.test.ts boots them when they are cached).
 * Not part of setup: under emulation debootstrap and dpkg take tens of minutes.
 */
import '../core/polyfills';
import { renderedBootUserData } from '../lib/client-user-data';
import {
  ensureBaseRoot,
  ensurePackageLayer,
  foreignArchUnavailable,
  rootsUnavailable,
} from '../core/rehearsal/instance-root';

async function main(): Promise<void> {
  const unavailable = rootsUnavailable();
  if (unavailable !== undefined) {
    // The rehearsal refuses to start with the same reason; its tests skip with it.
    console.log(`rehearsal roots: not built (${unavailable})`);
    return;
  }
  const log = (line: string): void => console.log(`rehearsal roots: ${line}`);
  // The package lists do not depend on the bucket or the region the user data names.
  const boot = renderedBootUserData({ bucket: 'unused', region: 'us-east-1' });
  if (process.argv.includes('--arm64')) {
    const foreign = foreignArchUnavailable('arm64');
    if (foreign !== undefined) throw new Error(`the arm64 root cannot be built: ${foreign}`);
    const arm = await ensureBaseRoot({ arch: 'arm64', log });
    await ensurePackageLayer(arm, boot.client.packages, { log });
    log(`arm64 client root ready under ${arm.replace(/\/[^/]+$/, '')}`);
    return;
  }
  const base = await ensureBaseRoot({ log });
  await ensurePackageLayer(base, boot.client.packages, { log });
  await ensurePackageLayer(base, boot.server.packages, { log });
  log(`ready under ${base.replace(/\/[^/]+$/, '')}`);
}

main().catch((e: unknown) => {
  console.error(`rehearsal roots: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
