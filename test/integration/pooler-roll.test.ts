/**
 * A cloud pooler rolling restart on a stand-in host agent, for real: the pooler agent
 * (lib/pooler-host/agent.ts) with its control channel in-process, the host's roll
 * (lib/pooler-host/roll.ts systemdRollHost: generation files, pid files, the socket answering) over
 * two real PgBouncer processes of the current release (test/helpers/pgbouncer-versions.ts) sharing
 * one port with so_reuseport, their ini files rendered for the host's paths of both generations
 * under a temporary root. Only systemd is stood in for: "sudo systemctl start <unit>" starts that
 * unit's PgBouncer directly (as the `postgres` OS user: PgBouncer refuses root). The runner's client
 * (lib/aws/pooler-agent-client.ts) rolls process 0, then process 1, while clients keep connecting
 * through the port and querying; the agent's stats and admin relays then follow the new processes.
 *
 * Linux resets connections queued on a closed SO_REUSEPORT listener unless net.ipv4.tcp_migrate_req
 * is 1 (lib/local/pgbouncer-processes.ts reuseportCloseBehaviour): as in local-disruptions.test.ts,
 * the integration run turns migration on where it may (test/helpers/listener-migration.ts), so "no
 * refused connection" is PgBouncer's claim alone.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { fetchPoolerCpu, rollPoolerProcess } from '../../lib/aws/pooler-agent-client';
import { resolveRunAs, startServer, type RunAs, type ServerProcess } from '../../lib/exec/process';
import { findBinaries } from '../../lib/local/binaries';
import { findFreePort } from '../../lib/local/ports-free';
import { BENCH_DB, BENCH_USER, startPostgres, type PostgresCluster } from '../../lib/local/postgres';
import { startPoolerAgent, type PoolerAgent } from '../../lib/pooler-host/agent';
import { systemdRollHost } from '../../lib/pooler-host/roll';
import { controlKey, type RollEvent } from '../../lib/poolers/control';
import { renderPgbouncerIni } from '../../lib/poolers/pgbouncer/config';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';
import { poolerPaths } from '../../lib/poolers/pgbouncer/host';
import { rollingStopSignal } from '../../lib/poolers/pgbouncer/signals';
import { lookUp } from '../helpers/looked-up';
import { pgbouncerModern } from '../helpers/pgbouncer-versions';
import { pgdataTemplate } from '../helpers/pg-template';
import { listenerMigrates } from '../helpers/listener-migration';

const FILE = 'test/integration/pooler-roll.test.ts';
const found = lookUp(() => pgbouncerModern(FILE));
let modern: { file: string; version: string };
const KEY = controlKey('admin-pw-of-the-stand-in', 'bouncer');
const PROCESSES = 2;

const migrating = listenerMigrates();

let base: string;
let runAs: RunAs | null;
let pg: PostgresCluster;
let agent: PoolerAgent | null = null;
let dataPort: number;
let adminPorts: number[] = [];
const servers: ServerProcess[] = [];

/** The unit name → which process and generation ("proxylab-pgbouncer@bouncer-1r.service"). */
function unitOf(args: readonly string[]): { i: number; rolled: boolean } {
  const m = /^proxylab-pgbouncer@bouncer-(\d+)(r?)\.service$/.exec(args[args.length - 1] ?? '');
  if (!m) throw new Error(`not a unit of this pooler: ${args.join(' ')}`);
  return { i: Number(m[1]), rolled: m[2] === 'r' };
}

function startUnit(i: number, rolled: boolean): void {
  const g = poolerPaths('bouncer', base, rolled);
  // systemd's RuntimeDirectory: made (owned by the unit's user) at every start
  fs.mkdirSync(g.socketDir(i), { recursive: true, mode: 0o755 });
  if (runAs) fs.chownSync(g.socketDir(i), runAs.uid, runAs.gid);
  servers.push(
    startServer(`pgbouncer ${i}${rolled ? 'r' : ''}`, modern.file, [g.iniFile(i)], {
      runAs,
      logFile: path.join(base, `stdout-${i}${rolled ? 'r' : ''}.log`),
      cwd: base,
    }),
  );
}

beforeAll(async () => {
  modern = found.get();
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'plroll-'));
  fs.chmodSync(base, 0o755);
  runAs = resolveRunAs();
  pg = await startPostgres({
    bins: findBinaries({ install: false }),
    baseDir: base,
    runAs,
    dataTemplate: pgdataTemplate(),
    maxConnections: 40,
    superuserReservedConnections: 3,
  });
  dataPort = await findFreePort(new Set([pg.port]));
  // the host's files of both generations (as renderPgbouncerHostFiles lays them out), trust auth
  const g0 = poolerPaths('bouncer', base);
  for (const d of [g0.confDir, path.dirname(g0.logFile(0))]) {
    fs.mkdirSync(d, { recursive: true, mode: 0o755 });
    if (runAs) fs.chownSync(d, runAs.uid, runAs.gid);
  }
  fs.writeFileSync(g0.userlist, `"${BENCH_USER}" ""\n`);
  for (const rolled of [false, true]) {
    const g = poolerPaths('bouncer', base, rolled);
    for (let i = 0; i < PROCESSES; i++) {
      const dirs = Array.from({ length: PROCESSES }, (_, j) => (j === i ? g.socketDir(j) : g0.socketDir(j)));
      fs.writeFileSync(
        g.iniFile(i),
        renderPgbouncerIni({
          version: modern.version,
          processIndex: i,
          processes: PROCESSES,
          listenAddr: '127.0.0.1',
          listenPort: dataPort,
          socketDirs: dirs,
          server: { host: '127.0.0.1', port: pg.port, dbname: BENCH_DB },
          poolModes: ['transaction'],
          defaultPoolSize: 4,
          maxPreparedStatements: null,
          authType: 'trust',
          authFile: g0.userlist,
          adminUsers: [BENCH_USER],
          statsUsers: [BENCH_USER],
          serverTlsSslmode: 'disable',
          clientTls: null,
          logFile: g.logFile(i),
          pidFile: g.pidFile(i),
          maxClientConnections: 200,
          reusePort: true,
        }),
      );
    }
  }
  for (let i = 0; i < PROCESSES; i++) startUnit(i, false);
  const host = systemdRollHost({
    name: 'bouncer',
    driver: pgbouncerDriver,
    dataPort,
    root: base,
    // systemd stood in for: the unit's PgBouncer started directly
    run: (file, args) => {
      expect([file, ...args.slice(0, 3)]).toEqual(['sudo', '-n', '/usr/bin/systemctl', 'start']);
      const u = unitOf(args);
      startUnit(u.i, u.rolled);
      return Promise.resolve({ code: 0, stdout: '', stderr: '' });
    },
  });
  const ports = new Set([pg.port, dataPort]);
  const free = async (): Promise<number> => {
    const p = await findFreePort(ports);
    ports.add(p);
    return p;
  };
  adminPorts = [await free(), await free()];
  const statsPort = await free();
  const controlPort = await free();
  // generation 0 answers before the agent starts relaying to it
  for (let i = 0; i < PROCESSES; i++) {
    const deadline = Date.now() + 15_000;
    while (host.servingPid(i) === null || !fs.existsSync(g0.socketFile(i, dataPort))) {
      if (Date.now() > deadline) throw new Error(`PgBouncer ${i} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  agent = await startPoolerAgent({
    config: { name: 'bouncer', product: 'pgbouncer', processes: PROCESSES, listenAddr: '127.0.0.1' },
    paths: g0,
    dataPort,
    adminPort: (i) => adminPorts[i] as number,
    statsPort,
    control: { key: KEY, host, version: modern.version, port: controlPort, timeouts: { drainWaitMs: 5000 } },
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await Promise.all(servers.map((s) => s.stop('SIGKILL', 2000)));
  await pg?.stop();
  if (base) fs.rmSync(base, { recursive: true, force: true });
});

/** Clients connecting, querying and closing through the data port until `stop`; each failure's message. */
function keepQuerying(stop: { done: boolean }): Promise<{ ok: number; failures: string[] }> {
  const failures: string[] = [];
  let ok = 0;
  const one = async (): Promise<void> => {
    while (!stop.done) {
      const c = new Client({
        host: '127.0.0.1',
        port: dataPort,
        user: BENCH_USER,
        database: BENCH_DB,
        connectionTimeoutMillis: 5000,
      });
      try {
        await c.connect();
        await c.query('SELECT 1');
        ok++;
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      } finally {
        await c.end().catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return Promise.all([one(), one(), one()]).then(() => ({ ok, failures }));
}

test('a roll of 2 processes while clients keep querying through the port: what the version documents, on the agent’s clock', async () => {
  // GIVEN clients querying through the shared port, and the processes serving now
  const stats = defined(agent).statsPort;
  const before = await fetchPoolerCpu('127.0.0.1', stats);
  expect(before.processes.map((p) => p.index)).toEqual([0, 1]);
  const stop = { done: false };
  const load = keepQuerying(stop);
  await new Promise((r) => setTimeout(r, 500));
  // WHEN the runner's client rolls process 0, then process 1
  const events: RollEvent[] = [];
  const results = [];
  for (let i = 0; i < PROCESSES; i++)
    results.push(
      await rollPoolerProcess('127.0.0.1', defined(defined(agent).controlPort), KEY, i, (e) =>
        events.push(e),
      ),
    );
  await new Promise((r) => setTimeout(r, 500));
  stop.done = true;
  const { ok, failures } = await load;
  // THEN each roll: the new process up, the old one sent the version's signal, then gone
  const { signal } = rollingStopSignal(modern.version);
  expect(results.map((r) => r.result)).toEqual(['ok', 'ok']);
  for (let i = 0; i < PROCESSES; i++) {
    const mine = events.filter((e) => e.index === i);
    expect(mine.map((e) => e.event)).toEqual(['started-new', 'signalled-old', 'old-exited']);
    expect(mine[1]).toMatchObject({ pid: before.processes[i]?.pid, signal });
    // the host kernel's part, said with the signal
    expect(mine[1]?.detail).toMatch(migrating ? /net\.ipv4\.tcp_migrate_req = 1/ : /kernel:/);
    const at = mine.map((e) => Date.parse(e.at));
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  }
  expect(ok).toBeGreaterThan(20);
  // ≥ 1.23 (SIGTERM: the old process stops listening at once): no client refused or reset, with the
  // kernel moving queued connections; before 1.23 the old one keeps listening while it shuts down
  if (signal === 'SIGTERM' && migrating) expect(failures).toEqual([]);
  // AND each old process exited with status 0: under systemd's Restart=on-failure its unit stays down
  for (const r of results) {
    const old = servers.find((s) => r.result === 'ok' && s.pid === r.oldPid);
    expect(await defined(old).exit).toBe(0);
  }
  // AND the agent follows the new processes: stats name their pids, each relay reaches its own
  const after = await fetchPoolerCpu('127.0.0.1', stats);
  expect(after.processes.map((p) => p.pid)).toEqual(results.map((r) => (r.result === 'ok' ? r.newPid : -1)));
  for (let i = 0; i < PROCESSES; i++)
    expect(await conffileThroughRelay(i)).toBe(poolerPaths('bouncer', base, true).iniFile(i));
}, 90_000);

test('a request with a token of another key is refused and nothing is restarted', async () => {
  const stats = defined(agent).statsPort;
  const before = await fetchPoolerCpu('127.0.0.1', stats);
  const r = await rollPoolerProcess(
    '127.0.0.1',
    defined(defined(agent).controlPort),
    controlKey('not-the-admin-password', 'bouncer'),
    0,
    () => {
      throw new Error('no event expected');
    },
  );
  expect(r).toMatchObject({ result: 'refused', error: expect.stringMatching(/token does not match/) });
  expect((await fetchPoolerCpu('127.0.0.1', stats)).processes.map((p) => p.pid)).toEqual(
    before.processes.map((p) => p.pid),
  );
});

/** SHOW CONFIG's conffile through the agent's admin relay of process i (which process answers). */
async function conffileThroughRelay(i: number): Promise<string | undefined> {
  const c = new Client({
    host: '127.0.0.1',
    port: adminPorts[i],
    user: BENCH_USER,
    database: 'pgbouncer',
    connectionTimeoutMillis: 5000,
  });
  await c.connect();
  try {
    const rows = (await c.query<{ key: string; value: string }>('SHOW CONFIG')).rows;
    return rows.find((r) => r.key === 'conffile')?.value;
  } finally {
    await c.end();
  }
}

function defined<T>(v: T | null | undefined): T {
  if (v === null || v === undefined) throw new Error('not set up');
  return v;
}
