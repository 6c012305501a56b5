/**
 * The rolling restart of one process on a pooler host, as the product's driver says it is done
 * (`lifecycle.restart(version)`), driven by the agent's control channel (./control.ts):
 *
 * - `reuseport-rolling` (PgBouncer): the process of the other GENERATION is started beside the
 *   running one on the same port (so_reuseport), then the old one is sent the signal its version
 *   documents (`stopOldWith`: SIGTERM ≥ 1.23, SIGINT before). Each process index has two generations
 *   (the driver's `host.rollingGeneration`): two instances of the same template unit (`<name>-<i>`
 *   and `<name>-<i>r`), each with its own RuntimeDirectory (socket, pid file) and ini file, so
 *   systemd supervises the new process as it did the old one (Restart=on-failure, its own cgroup:
 *   the agent restarting never takes it down), and a roll never makes a process systemd does not
 *   know. The agent (the pooler's unprivileged system user) may start exactly those units: the
 *   bootstrap's sudoers drop-in lists `systemctl start <unit>` for each (./bootstrap.ts), nothing
 *   else. It signals the old process itself (same user). The old unit ends when its process exits
 *   (PgBouncer exits 0 after a shutdown signal, so Restart=on-failure leaves it down); only
 *   generation 0 is enabled, so a reboot starts generation 0 again. A process of the generation
 *   to start that still drains from an earlier roll is stopped at once first (the driver's
 *   immediate-stop signals), said as `stopped-leftover`.
 * - `binary-upgrade` (PgDoorman): the running process is sent its upgrade signal (SIGUSR2 ≥ 3.3.1);
 *   it starts its successor itself (same unit: NotifyAccess=exec lets it take MAINPID over), found
 *   by its command line (the same configuration file, another pid: ../poolers/processes.ts), whose
 *   pid the agent writes into the pid file the stats read.
 *
 * Every step is an event with the agent's time; the runner puts them on the run's clock.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { InfrastructureError } from '../core/errors';
import type { PoolerHostLayout, PoolerRestart, PoolerDriver } from '../poolers/driver';
import type { RollEvent } from '../poolers/control';
import { upgradedPid, type ProcEntry } from '../poolers/processes';
import { pidAlive, readProcs, reuseportCloseBehaviour } from '../exec/procfs';
import type { CommandRunner } from './bootstrap';

/** What a roll does on the host: systemd and /proc on a pooler host, child processes in tests. */
export interface RollHost {
  /** The pid serving process i now; null: none running. */
  servingPid(i: number): number | null;
  /** reuseport-rolling: the other generation's process i, still running (draining) from an earlier roll; null: none. */
  leftoverPid(i: number): number | null;
  /** reuseport-rolling: start process i's other generation; resolves with its pid once it accepts on its socket. */
  startOther(i: number, timeoutMs: number): Promise<number>;
  alive(pid: number): boolean;
  signal(pid: number, signal: NodeJS.Signals): void;
  /** binary-upgrade: the process that took over from process i's `old` pid; null: none (yet). */
  successor(i: number, old: number): number | null;
  /** binary-upgrade: from now on `pid` is process i's (its pid file). */
  adopt(i: number, pid: number): void;
  /** The layout of the generation serving process i (the agent's relay and stats follow it). */
  live(i: number): Pick<PoolerHostLayout, 'pidFile' | 'socketFile'>;
  /** reuseport-rolling: what the kernel does with the retired listener's queue (said with the signal); absent: nothing to say. */
  listenerNote?(): string;
}

export interface RollOptions {
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /** How long the replacement may take to accept. @default 20 000 */
  readonly startTimeoutMs?: number;
  /** How long the roll waits for the old process to leave before it reports it still draining. @default 10 000 */
  readonly drainWaitMs?: number;
  /** How long a leftover may take to stop after the immediate-stop signals. @default 5 000 */
  readonly leftoverStopMs?: number;
  readonly emit: (e: RollEvent) => void;
}

export interface RollOutcome {
  readonly oldPid: number;
  readonly newPid: number;
  readonly oldExited: boolean;
}

async function until(o: RollOptions, f: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = o.now().getTime() + timeoutMs;
  while (o.now().getTime() < end) {
    if (f()) return true;
    await o.sleep(50);
  }
  return f();
}

/** Roll process `i` the way `restart` says; the driver's immediate-stop signals end a leftover. */
export async function rollProcess(
  i: number,
  restart: PoolerRestart,
  immediateStop: readonly NodeJS.Signals[],
  host: RollHost,
  o: RollOptions,
): Promise<RollOutcome> {
  const at = (): string => o.now().toISOString();
  const old = host.servingPid(i);
  if (old === null)
    throw new InfrastructureError(`process ${i + 1} is not running (no live pid in its pid file)`);
  let next: number;
  let signal: NodeJS.Signals;
  if (restart.kind === 'reuseport-rolling') {
    const leftover = host.leftoverPid(i);
    if (leftover !== null) {
      for (const sig of immediateStop) if (host.alive(leftover)) host.signal(leftover, sig);
      const gone = await until(o, () => !host.alive(leftover), o.leftoverStopMs ?? 5000);
      if (!gone) host.signal(leftover, 'SIGKILL');
      o.emit({
        event: 'stopped-leftover',
        index: i,
        pid: leftover,
        signal: gone ? immediateStop.join('+') : 'SIGKILL',
        at: at(),
        detail: `the other generation's process from an earlier roll was still draining: stopped at once`,
      });
    }
    next = await host.startOther(i, o.startTimeoutMs ?? 20_000);
    o.emit({
      event: 'started-new',
      index: i,
      pid: next,
      at: at(),
      detail: 'on the same port (so_reuseport)',
    });
    signal = restart.stopOldWith[0] ?? 'SIGTERM';
    host.signal(old, signal);
    const note = host.listenerNote?.();
    o.emit({
      event: 'signalled-old',
      index: i,
      pid: old,
      signal,
      at: at(),
      detail: `sent ${signal}${note ? `; ${note}` : ''}`,
    });
  } else {
    signal = restart.signal;
    host.signal(old, signal);
    o.emit({
      event: 'signalled-old',
      index: i,
      pid: old,
      signal,
      at: at(),
      detail: `sent ${signal}: binary upgrade${restart.migratesIdleClients ? ' (idle clients migrate)' : ''}`,
    });
    const seen: { pid: number | null } = { pid: null };
    const found = await until(
      o,
      () => (seen.pid = host.successor(i, old)) !== null,
      o.startTimeoutMs ?? 20_000,
    );
    if (!found || seen.pid === null)
      throw new InfrastructureError(
        `process ${i + 1}: no new process ${o.startTimeoutMs ?? 20_000} ms after ${signal}`,
      );
    next = seen.pid;
    host.adopt(i, next);
    o.emit({ event: 'started-new', index: i, pid: next, at: at(), detail: 'took over the listening socket' });
  }
  const drainWait =
    restart.kind === 'binary-upgrade' && restart.drainTimeoutMs !== null
      ? Math.max(o.drainWaitMs ?? 10_000, restart.drainTimeoutMs + 1000)
      : (o.drainWaitMs ?? 10_000);
  const exited = await until(o, () => !host.alive(old), drainWait);
  o.emit(
    exited
      ? { event: 'old-exited', index: i, pid: old, at: at(), detail: `after ${signal}` }
      : {
          event: 'old-still-draining',
          index: i,
          pid: old,
          at: at(),
          detail: `still running ${drainWait} ms after ${signal} (its clients are connected); it leaves with them`,
        },
  );
  return { oldPid: old, newPid: next, oldExited: exited };
}

function readPid(file: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Resolves when a connection to the unix socket `file` is accepted (then closed), else rejects. */
function accepts(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(file);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface SystemdRollHostOptions {
  readonly name: string;
  readonly driver: PoolerDriver;
  readonly dataPort: number;
  /** `/` on a host. */
  readonly root?: string;
  readonly run: CommandRunner;
  readonly procs?: () => ProcEntry[];
  readonly alive?: (pid: number) => boolean;
  readonly kill?: (pid: number, signal: NodeJS.Signals) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => Date;
}

/**
 * The host's RollHost: generation units started with `sudo -n systemctl start` (the bootstrap's
 * sudoers drop-in allows exactly those), pid files and /proc read, signals sent as the same user.
 * Which generation serves process i: the one this agent last started, else the one whose pid file
 * names a live process (both: the newer pid file).
 */
export function systemdRollHost(o: SystemdRollHostOptions): RollHost {
  const gens: PoolerHostLayout[] = [o.driver.host.layout(o.name, o.root)];
  const rolling = o.driver.host.rollingGeneration;
  if (rolling) gens.push(rolling.layout(o.name, o.root));
  const units = (i: number): string[] => [
    o.driver.host.processUnit(o.name, i),
    ...(rolling ? [rolling.processUnit(o.name, i)] : []),
  ];
  const alive = o.alive ?? pidAlive;
  const kill = o.kill ?? ((pid, sig) => process.kill(pid, sig));
  const sleep = o.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? (() => new Date());
  const chosen = new Map<number, number>();
  const livePid = (g: number, i: number): number | null => {
    const pid = readPid((gens[g] as PoolerHostLayout).pidFile(i));
    return pid !== null && alive(pid) ? pid : null;
  };
  const serving = (i: number): number => {
    const c = chosen.get(i);
    if (c !== undefined) return c;
    const up = gens.map((_, g) => g).filter((g) => livePid(g, i) !== null);
    if (up.length <= 1) return up[0] ?? 0;
    return up.reduce((a, b) =>
      mtime((gens[b] as PoolerHostLayout).pidFile(i)) > mtime((gens[a] as PoolerHostLayout).pidFile(i))
        ? b
        : a,
    );
  };
  const other = (i: number): number => (serving(i) + 1) % gens.length;
  return {
    servingPid: (i) => livePid(serving(i), i),
    leftoverPid: (i) => (gens.length > 1 ? livePid(other(i), i) : null),
    async startOther(i, timeoutMs) {
      if (gens.length < 2)
        throw new InfrastructureError(`${o.driver.displayName} has no second generation to roll to`);
      const g = other(i);
      const unit = units(i)[g] as string;
      const res = await o.run('sudo', ['-n', '/usr/bin/systemctl', 'start', unit]);
      if (res.code !== 0)
        throw new InfrastructureError(
          `sudo -n /usr/bin/systemctl start ${unit} failed (exit ${res.code ?? 'signal'}): ${res.stderr.trim().split('\n').slice(-2).join(' ')}`,
        );
      const layout = gens[g] as PoolerHostLayout;
      const end = now().getTime() + timeoutMs;
      while (now().getTime() < end) {
        const pid = livePid(g, i);
        if (pid !== null && (await accepts(layout.socketFile(i, o.dataPort)))) {
          chosen.set(i, g);
          return pid;
        }
        await sleep(100);
      }
      throw new InfrastructureError(
        `${unit} started but did not accept on ${layout.socketFile(i, o.dataPort)} within ${timeoutMs} ms`,
      );
    },
    alive,
    signal: (pid, sig) => {
      try {
        kill(pid, sig);
      } catch {
        /* gone meanwhile */
      }
    },
    successor: (i, old) =>
      upgradedPid((o.procs ?? readProcs)(), gens[0]?.configFile(i) ?? '', new Set([old])),
    adopt: (i, pid) => fs.writeFileSync((gens[serving(i)] as PoolerHostLayout).pidFile(i), `${pid}\n`),
    live: (i) => gens[serving(i)] as PoolerHostLayout,
    listenerNote: () => reuseportCloseBehaviour(),
  };
}
