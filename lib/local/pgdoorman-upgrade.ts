/**
 * PgDoorman's restart as it documents it (operations/signals.md, lib/poolers/pgdoorman/driver.ts
 * PGDOORMAN_LIFECYCLE): the running process is sent SIGUSR2 (≥ 3.3.1; SIGINT before), starts a new
 * process of the same binary and configuration that takes over the listening socket (and, since
 * 3.5.0, its idle clients), and drains for at most its shutdown timeout before it exits. The new
 * process is not our child: it is found by its command line (the same configuration file, another
 * pid) in /proc, and from then on the pooler's pid is its; its end is seen by the stack's liveness
 * check (the watch's /proc look), not by an exit event.
 */
import { InfrastructureError } from '../core/errors';
import type { ServerProcess } from '../exec/process';
import { pgdoormanDriver } from '../poolers/pgdoorman/driver';
import { upgradedPid, type ProcEntry } from '../poolers/processes';
import { pidAlive, readProcs } from '../exec/procfs';

export { upgradedPid, type ProcEntry } from '../poolers/processes';

const alive = pidAlive;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(f: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (f()) return true;
    await sleep(50);
  }
  return f();
}

export interface BinaryUpgrade {
  /** The pid serving now (the first process's until an upgrade took over). */
  pid(): number;
  /** An upgrade was started: the first process's exit is expected. */
  upgrading(): boolean;
  /** Signal the serving process and wait for its successor; `event` names each moment. */
  start(event: (name: string, detail: string) => void): Promise<void>;
  /** After the window: the old process gone (sent SIGTERM if it still drains). */
  settle(): Promise<void>;
  /** Stop whichever process serves (and the first one's process group). */
  stop(signal: NodeJS.Signals, graceMs: number): Promise<void>;
}

export function binaryUpgrade(
  server: ServerProcess,
  configFile: string,
  version: string,
  procs: () => ProcEntry[] = readProcs,
): BinaryUpgrade {
  let current = server.pid;
  let started = false;
  const retired: number[] = [];
  return {
    pid: () => current,
    upgrading: () => started,
    async start(event) {
      const how = pgdoormanDriver.lifecycle.restart(version);
      if (how.kind !== 'binary-upgrade')
        throw new InfrastructureError(`PgDoorman ${version}: no binary upgrade to restart it with`);
      const old = current;
      const known = new Set([
        old,
        ...retired,
        ...procs()
          .filter((p) => p.pid !== old)
          .map((p) => p.pid),
      ]);
      started = true;
      process.kill(old, how.signal);
      event(
        'old-process-signalled',
        `pid ${old} sent ${how.signal}: binary upgrade (a new process takes the listener${how.migratesIdleClients ? ' and the idle clients' : ''}; the old one drains for at most ${(how.drainTimeoutMs ?? 0) / 1000} s)`,
      );
      const seen: { pid: number | null } = { pid: null };
      await until(() => (seen.pid = upgradedPid(procs(), configFile, known)) !== null, 15000);
      const next = seen.pid;
      if (next === null)
        throw new InfrastructureError(`PgDoorman (${configFile}): no new process 15 s after ${how.signal}`);
      current = next;
      retired.push(old);
      event('new-process-up', `pid ${next}`);
      void until(() => !alive(old), (how.drainTimeoutMs ?? 10000) + 5000).then(
        (gone) => gone && event('old-process-exited', `pid ${old}`),
      );
    },
    async settle() {
      const drain = pgdoormanDriver.lifecycle.restart(version);
      for (const pid of retired.splice(0)) {
        if (
          await until(
            () => !alive(pid),
            (drain.kind === 'binary-upgrade' ? drain.drainTimeoutMs : null) ?? 10000,
          )
        )
          continue;
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
    },
    async stop(signal, graceMs) {
      if (current !== server.pid) {
        try {
          process.kill(current, signal);
        } catch {
          /* gone */
        }
        if (!(await until(() => !alive(current), graceMs)))
          try {
            process.kill(current, 'SIGKILL');
          } catch {
            /* gone */
          }
      }
      await server.stop(signal, graceMs);
    },
  };
}
