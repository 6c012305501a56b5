/**
 * Linux resets the connections queued on a closed SO_REUSEPORT listener unless
 * `net.ipv4.tcp_migrate_req` is 1 (lib/exec/procfs.ts). The integration files that retire a listener
 * (local-disruptions, pooler-roll) want "no client sees an error" to be the pooler's claim alone, so
 * where the tests may write the sysctl (root), migration is turned on ONCE for the whole jest run
 * (./integration-setup.ts) and the value put back after the last file (./integration-teardown.ts).
 * Each file turning it on and putting it back itself raced: one file's afterAll set 0 while another
 * file's roll ran (CI saw `tcp_migrate_req = 0` in a test that had just set 1). Elsewhere the
 * kernel's resets are allowed, and only those.
 */
import * as fs from 'node:fs';
import { TCP_MIGRATE_REQ } from '../../lib/exec/procfs';

/** The value before the run turned migration on (env: inherited by the workers, read by the teardown). */
const BEFORE_ENV = 'PROXYLAB_TEST_TCP_MIGRATE_REQ_BEFORE';

/** globalSetup: migration on where the sysctl can be written; what it was, remembered. */
export function enableListenerMigrationForRun(): void {
  try {
    const before = fs.readFileSync(TCP_MIGRATE_REQ, 'utf8').trim();
    if (before !== '1') {
      fs.writeFileSync(TCP_MIGRATE_REQ, '1');
      process.env[BEFORE_ENV] = before;
    }
  } catch {
    // not Linux ≥ 5.14, or not allowed to write it: the tests allow the kernel's resets
  }
}

/** globalTeardown: the value from before the run, when the setup changed it. */
export function restoreListenerMigration(): void {
  const before = process.env[BEFORE_ENV];
  if (before === undefined) return;
  try {
    fs.writeFileSync(TCP_MIGRATE_REQ, before);
  } catch {
    // nothing more to do: the setup could write it, so this should not happen
  }
}

/** Whether the kernel migrates a closed listener's queue now (the files read it; they never write it). */
export function listenerMigrates(): boolean {
  try {
    return fs.readFileSync(TCP_MIGRATE_REQ, 'utf8').trim() === '1';
  } catch {
    return false;
  }
}
