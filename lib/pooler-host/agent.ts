/**
 * The pooler agent (`node /opt/proxylab/pooler.js agent --config FILE`, a systemd service beside
 * the pooler's processes, whatever the product: the driver names the sockets and pid files):
 *
 * - admin relays: TCP `adminPortOf(i)` → process i's unix socket, so a runner reaches the admin
 *   console of EACH process (the data port's so_reuseport would hand it to any one of them). The
 *   relay passes bytes only: PgBouncer itself authenticates the admin user.
 * - stats: `POOLER_STATS_PORT` answers one JSON line and closes:
 *   `{ "at": iso, "clockTicksPerSecond": n, "processes": [{ "index": i, "pid": p, "cpuTicks": utime+stime }] }`
 *   read from /proc/<pid>/stat of each process (pid from its pid file; a process not running is
 *   left out).
 * - control (with `control`): `POOLER_CONTROL_PORT` takes one authenticated request to restart one
 *   process the way its product documents (./control.ts, ./roll.ts); the relays and the stats then
 *   follow the generation that serves each process (`control.host.live(i)`).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import { InfrastructureError } from '../core/errors';
import type { PoolerCpuSnapshot } from '../engine/pooler-metrics';
import type { PoolerHostLayout } from '../poolers/driver';
import { adminPortOf, POOLER_CONTROL_PORT, POOLER_STATS_PORT } from '../poolers/endpoint';
import type { PoolerHostConfig } from '../poolers/host-config';
import { poolerDriver } from '../poolers/registry';
import { LINUX_CLOCK_TICKS_PER_SECOND, processCpuTicks } from '../core/proc-stat';
import { controlChannel, type ControlChannelOptions } from './control';
import type { RollHost } from './roll';

/** The control channel's part of the agent: what rolls a process, and with which key. */
export interface AgentControl {
  /** The control key (hex); null: the host has none, every request is refused. */
  readonly key: string | null;
  readonly host: RollHost;
  /** The pinned release (which restart and which signals). */
  readonly version: string;
  /** Test-only. @default POOLER_CONTROL_PORT */
  readonly port?: number;
  /** Test-only timeouts. */
  readonly timeouts?: Pick<
    ControlChannelOptions,
    'lineTimeoutMs' | 'rollTimeoutMs' | 'startTimeoutMs' | 'drainWaitMs'
  >;
}

export interface PoolerAgentOptions {
  readonly config: Pick<PoolerHostConfig, 'name' | 'product' | 'processes' | 'listenAddr' | 'workerThreads'>;
  /** @default the driver's host.layout(config.name) */
  readonly paths?: PoolerHostLayout;
  /** Test-only overrides. */
  readonly dataPort?: number;
  readonly adminPort?: (i: number) => number;
  readonly statsPort?: number;
  readonly readFile?: (file: string) => string;
  /** Thread ids of a process (/proc/<pid>/task). */
  readonly listThreads?: (pid: number) => readonly number[];
  readonly now?: () => Date;
  readonly log?: (line: string) => void;
  /** The host's vCPUs (a multithreaded pooler's worker threads when the config leaves them open). */
  readonly cpus?: number;
  /** The control channel; absent: none (the agent only relays and reports). */
  readonly control?: AgentControl;
}

export interface PoolerAgent {
  readonly adminPorts: readonly number[];
  readonly statsPort: number;
  /** null: no control channel. */
  readonly controlPort: number | null;
  stop(): Promise<void>;
}

/** Thread ids of `pid` from /proc/<pid>/task; [] when it cannot be read. */
function procThreads(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .filter((t) => Number.isInteger(t) && t > 0);
  } catch {
    return [];
  }
}

type ProcessCpu = PoolerCpuSnapshot['processes'][number];

/**
 * Per-process CPU ticks now, from the pid files and /proc; with `threads`, each thread's ticks and
 * name too (/proc/<pid>/task/<tid>/stat and comm: PgDoorman's workers are `worker-pg-doorm`).
 */
export function readPoolerCpu(
  processes: number,
  paths: PoolerHostLayout,
  readFile: (file: string) => string = (f) => fs.readFileSync(f, 'utf8'),
  now: () => Date = () => new Date(),
  threads: {
    readonly list: (pid: number) => readonly number[];
    readonly coresPerProcess: number;
  } | null = null,
): PoolerCpuSnapshot {
  const out: ProcessCpu[] = [];
  for (let i = 0; i < processes; i++) {
    try {
      const pid = Number.parseInt(readFile(paths.pidFile(i)).trim(), 10);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      const ticks = processCpuTicks(readFile(`/proc/${pid}/stat`));
      if (ticks === null) continue;
      out.push({
        index: i,
        pid,
        cpuTicks: ticks,
        ...(threads ? { threads: readThreads(pid, threads.list, readFile) } : {}),
      });
    } catch {
      /* not running (no pid file, or the pid is gone): left out */
    }
  }
  return {
    at: now().toISOString(),
    clockTicksPerSecond: LINUX_CLOCK_TICKS_PER_SECOND,
    ...(threads ? { coresPerProcess: threads.coresPerProcess } : {}),
    processes: out,
  };
}

/** Each thread's ticks and name; a thread gone between the listing and the read is left out. */
export function readThreads(
  pid: number,
  list: (pid: number) => readonly number[],
  readFile: (file: string) => string,
): NonNullable<ProcessCpu['threads']> {
  const out: Array<{ tid: number; name: string; cpuTicks: number }> = [];
  for (const tid of list(pid)) {
    try {
      const ticks = processCpuTicks(readFile(`/proc/${pid}/task/${tid}/stat`));
      if (ticks === null) continue;
      out.push({ tid, name: readFile(`/proc/${pid}/task/${tid}/comm`).trim(), cpuTicks: ticks });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startPoolerAgent(opts: PoolerAgentOptions): Promise<PoolerAgent> {
  const { config } = opts;
  const driver = poolerDriver(config.product);
  const layout = opts.paths ?? driver.host.layout(config.name);
  const control = opts.control;
  // after a rolling restart process i's socket and pid file are its new generation's
  const paths: PoolerHostLayout = control
    ? {
        ...layout,
        pidFile: (i) => control.host.live(i).pidFile(i),
        socketFile: (i, port) => control.host.live(i).socketFile(i, port),
      }
    : layout;
  const dataPort = opts.dataPort ?? driver.host.dataPort;
  const adminPort = opts.adminPort ?? adminPortOf;
  const statsPort = opts.statsPort ?? POOLER_STATS_PORT;
  const log = opts.log ?? (() => undefined);
  // A multithreaded product: its threads too, and how many cores a process can use.
  const threads = driver.capabilities(null).singleThreaded
    ? null
    : {
        list: opts.listThreads ?? procThreads,
        coresPerProcess: driver.coresPerProcess(config.workerThreads ?? opts.cpus ?? os.cpus().length),
      };
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const stop = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
  };
  try {
    for (let i = 0; i < config.processes; i++) {
      const relay = net.createServer((client) => {
        const socketFile = paths.socketFile(i, dataPort);
        track(client);
        const upstream = net.connect(socketFile);
        track(upstream);
        client.pipe(upstream);
        upstream.pipe(client);
        const close = (): void => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', close);
        upstream.on('error', (err) => {
          log(`admin relay ${i + 1}: ${socketFile}: ${err.message}`);
          close();
        });
        client.on('close', close);
        upstream.on('close', close);
      });
      servers.push(relay);
      await listen(relay, adminPort(i), config.listenAddr);
    }
    const stats = net.createServer((client) => {
      track(client);
      client.on('error', () => client.destroy());
      const snap = readPoolerCpu(config.processes, paths, opts.readFile, opts.now, threads);
      client.end(JSON.stringify(snap) + '\n');
    });
    servers.push(stats);
    await listen(stats, statsPort, config.listenAddr);
    if (control) {
      const ctl = net.createServer(
        controlChannel({
          key: control.key,
          processes: config.processes,
          restart: driver.lifecycle.restart(control.version),
          immediateStop: driver.immediateStopSignals(control.version),
          host: control.host,
          log,
          ...(opts.now ? { now: opts.now } : {}),
          ...control.timeouts,
        }),
      );
      ctl.on('connection', track);
      servers.push(ctl);
      await listen(ctl, control.port ?? POOLER_CONTROL_PORT, config.listenAddr);
    }
  } catch (err) {
    await stop();
    throw new InfrastructureError(
      `pooler agent ${config.name}: could not listen: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  log(
    `pooler agent ${config.name}: admin relays on ${Array.from({ length: config.processes }, (_, i) => adminPort(i)).join(', ')}, stats on ${statsPort}${control ? `, control on ${control.port ?? POOLER_CONTROL_PORT}${control.key === null ? ' (no control key: requests refused)' : ''}` : ''}`,
  );
  return {
    adminPorts: Array.from({ length: config.processes }, (_, i) => adminPort(i)),
    statsPort,
    controlPort: control ? (control.port ?? POOLER_CONTROL_PORT) : null,
    stop,
  };
}
