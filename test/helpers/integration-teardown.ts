/**
 * jest globalTeardown of the integration project (jest.config.js): after the last test file, stop
 * the run's shared moto_server, if a file started one (./integration-setup.ts, ./moto.ts), wait for
 * it to exit and remove its directory.
 *
 * With $JEST_CPU_LOG (bench/jest-cpu-env.js), the server's CPU is added to that log as a line of its
 * own: it is no test file's child by then, and the figures would otherwise leave it out.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { restoreListenerMigration } from './listener-migration';
import { SHARED_MOTO_DIR_ENV, stopSharedMoto } from './moto';

export default async function integrationTeardown(): Promise<void> {
  restoreListenerMigration();
  const dir = process.env[SHARED_MOTO_DIR_ENV];
  if (!dir) return;
  const stopped = await stopSharedMoto(dir);
  const log = process.env.JEST_CPU_LOG;
  if (!log || stopped?.cpu == null) return;
  appendFileSync(
    log,
    JSON.stringify({
      file: "(the integration run's shared moto_server)",
      project: 'integration',
      wall: stopped.wallSec,
      ...stopped.cpu,
      load1: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
    }) + '\n',
  );
}
