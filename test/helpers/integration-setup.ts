/**
 * jest globalSetup of the integration project (jest.config.js): once per jest run, in jest's own
 * process, before the workers start (they inherit its environment).
 *
 * - botocore's data directory, as for the unit project (./global-setup.ts).
 * - One moto_server for the run (./moto.ts "One server per jest run"): only the directory the test
 *   files share it through is made here ($PROXYLAB_TEST_MOTO_DIR); the first file that calls
 *   startMoto() starts the server, so a run without such a file starts none.
 *   ./integration-teardown.ts stops it after the last file.
 * - net.ipv4.tcp_migrate_req on for the run where it can be written (./listener-migration.ts), put
 *   back by the teardown.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import botocoreSetup from './global-setup';
import { enableListenerMigrationForRun } from './listener-migration';
import { SHARED_MOTO_DIR_ENV } from './moto';

export default function integrationSetup(): void {
  botocoreSetup();
  enableListenerMigrationForRun();
  process.env[SHARED_MOTO_DIR_ENV] = fs.mkdtempSync(path.join(os.tmpdir(), 'proxylab-moto-'));
}
