/**
 * The cloud pooler's rolling restart, in process: the control channel's protocol and refusals
 * (lib/pooler-host/control.ts against the runner's client, lib/aws/pooler-agent-client.ts), the
 * command sequence of a roll per product (lib/pooler-host/roll.ts: PgBouncer's second generation,
 * PgDoorman's binary upgrade) on a fake host, the host's systemd side (sudo systemctl start of the
 * other generation's unit, pid files, the socket answering), and the runner's side
 * (lib/runner/pooler-roll.ts): each pooler of the group's targets rolled process by process, the
 * agent's events at the agent's times. The real thing against PgBouncer: test/integration/pooler-roll.test.ts.
 */
import { expect } from '@jest/globals';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { rollPoolerProcess } from '../../lib/aws/pooler-agent-client';
import type { EventSink } from '../../lib/exec/disruption-probe';
import { controlChannel } from '../../lib/pooler-host/control';
import { rollProcess, systemdRollHost, type RollHost } from '../../lib/pooler-host/roll';
import {
  CONTROL_MAX_LINE,
  controlKey,
  controlToken,
  tokenMatches,
  type RollEvent,
} from '../../lib/poolers/control';
import { pgbouncerDriver } from '../../lib/poolers/pgbouncer/driver';
import { pgdoormanDriver } from '../../lib/poolers/pgdoorman/driver';
import { poolerPaths } from '../../lib/poolers/pgbouncer/host';
import { cloudDisruptionWorld } from '../../lib/runner/disruptions';
import { poolersOfSteps, rollPoolers } from '../../lib/runner/pooler-roll';
import type { PlannedStep } from '../../lib/suite/expand';
import { ledgerTarget } from '../helpers/cloud-disruption-fixtures';
import { poolerEndpoint } from '../helpers/pooler-endpoint';
import { scratchDir } from '../helpers/scratch';

const KEY = controlKey('the-admin-password', 'bouncer');

/** A host whose processes are numbers: what the roll did, in order. */
function fakeHost(first: number[]): RollHost & { calls: string[]; running: Set<number> } {
  const running = new Set(first);
  const serving = [...first];
  const calls: string[] = [];
  let nextPid = 500;
  const leftovers = new Map<number, number>();
  return {
    calls,
    running,
    servingPid: (i) => serving[i] ?? null,
    leftoverPid: (i) => {
      const pid = leftovers.get(i);
      return pid !== undefined && running.has(pid) ? pid : null;
    },
    startOther: (i) => {
      const pid = nextPid++;
      calls.push(`start generation of process ${i}: pid ${pid}`);
      running.add(pid);
      leftovers.set(i, serving[i] as number);
      serving[i] = pid;
      return Promise.resolve(pid);
    },
    alive: (pid) => running.has(pid),
    signal: (pid, sig) => {
      calls.push(`${sig} → ${pid}`);
      // the old process leaves on its shutdown signal (no client holds it here)
      if (sig !== 'SIGUSR2') running.delete(pid);
      else {
        const pid2 = nextPid++;
        running.add(pid2);
        setTimeout(() => running.delete(pid), 0);
      }
    },
    successor: (_i, old) => [...running].find((p) => p !== old && p >= 500) ?? null,
    adopt: (i, pid) => {
      calls.push(`adopt ${pid} as process ${i}`);
      serving[i] = pid;
    },
    live: () => poolerPaths('bouncer', '/x'),
  };
}

function clock() {
  let t = Date.parse('2026-11-28T10:00:00.000Z');
  return {
    now: () => new Date(t),
    sleep: (ms: number) => {
      t += ms;
      return new Promise<void>((r) => setImmediate(r));
    },
  };
}

describe('the control key and token', () => {
  test('one key per pooler from the admin password; a token is good for one nonce, op and index', () => {
    expect(KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(KEY).not.toContain('the-admin-password');
    expect(controlKey('the-admin-password', 'other')).not.toBe(KEY);
    const token = controlToken(KEY, 'a'.repeat(32), 'roll', 1);
    expect(tokenMatches(KEY, 'a'.repeat(32), 'roll', 1, token)).toBe(true);
    expect(tokenMatches(KEY, 'b'.repeat(32), 'roll', 1, token)).toBe(false);
    expect(tokenMatches(KEY, 'a'.repeat(32), 'roll', 0, token)).toBe(false);
    expect(tokenMatches(controlKey('wrong', 'bouncer'), 'a'.repeat(32), 'roll', 1, token)).toBe(false);
  });
});

describe('rollProcess: the command sequence per product', () => {
  test('PgBouncer 1.25.2: the other generation started, then the old one sent SIGTERM, and it exits', async () => {
    // GIVEN process 1 runs as pid 101
    const host = fakeHost([100, 101]);
    const events: RollEvent[] = [];
    // WHEN it is rolled
    const out = await rollProcess(
      1,
      pgbouncerDriver.lifecycle.restart('1.25.2'),
      pgbouncerDriver.immediateStopSignals('1.25.2'),
      host,
      { ...clock(), emit: (e) => events.push(e) },
    );
    // THEN
    expect(host.calls).toEqual(['start generation of process 1: pid 500', 'SIGTERM → 101']);
    expect(events.map((e) => [e.event, e.pid, e.signal ?? null])).toEqual([
      ['started-new', 500, null],
      ['signalled-old', 101, 'SIGTERM'],
      ['old-exited', 101, null],
    ]);
    expect(out).toEqual({ oldPid: 101, newPid: 500, oldExited: true });
  });

  test('PgBouncer 1.18.0: SIGINT; a process of the other generation still draining is stopped at once first', async () => {
    const host = fakeHost([100]);
    const opts = { ...clock(), emit: (): void => undefined };
    const restart = pgbouncerDriver.lifecycle.restart('1.18.0');
    const stop = pgbouncerDriver.immediateStopSignals('1.18.0');
    await rollProcess(0, restart, stop, host, opts);
    // the first roll's old process did not leave (a client still on it)
    host.running.add(100);
    const events: RollEvent[] = [];
    await rollProcess(0, restart, stop, host, { ...opts, emit: (e) => events.push(e) });
    expect(host.calls).toEqual([
      'start generation of process 0: pid 500',
      'SIGINT → 100',
      'SIGTERM → 100',
      'start generation of process 0: pid 501',
      'SIGINT → 500',
    ]);
    expect(events[0]).toMatchObject({ event: 'stopped-leftover', pid: 100, signal: 'SIGTERM' });
  });

  test('an old process its clients keep: reported still draining, not killed', async () => {
    const host = fakeHost([100]);
    host.signal = (pid, sig) => host.calls.push(`${sig} → ${pid}`);
    const events: RollEvent[] = [];
    const out = await rollProcess(0, pgbouncerDriver.lifecycle.restart('1.25.2'), ['SIGQUIT'], host, {
      ...clock(),
      drainWaitMs: 1000,
      emit: (e) => events.push(e),
    });
    expect(out.oldExited).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: 'old-still-draining', pid: 100 });
    expect(host.calls).not.toContain('SIGQUIT → 100');
  });

  test('PgDoorman 3.10.7: SIGUSR2 to the running process, its successor found and adopted, the old one drains away', async () => {
    const host = fakeHost([100]);
    const events: RollEvent[] = [];
    const out = await rollProcess(
      0,
      pgdoormanDriver.lifecycle.restart('3.10.7'),
      pgdoormanDriver.immediateStopSignals('3.10.7'),
      host,
      { ...clock(), emit: (e) => events.push(e) },
    );
    expect(host.calls).toEqual(['SIGUSR2 → 100', 'adopt 500 as process 0']);
    expect(events.map((e) => e.event)).toEqual(['signalled-old', 'started-new', 'old-exited']);
    expect(events[0]?.detail).toMatch(/binary upgrade \(idle clients migrate\)/);
    expect(out).toEqual({ oldPid: 100, newPid: 500, oldExited: true });
  });

  test('no process running: refused with the process named', async () => {
    const host = fakeHost([]);
    await expect(
      rollProcess(0, pgbouncerDriver.lifecycle.restart('1.25.2'), ['SIGQUIT'], host, {
        ...clock(),
        emit: () => undefined,
      }),
    ).rejects.toThrow(/process 1 is not running/);
  });
});

describe('systemdRollHost: the host side of a PgBouncer roll', () => {
  test('sudo systemctl start of the other generation, its pid file and socket awaited; then it serves', async () => {
    // GIVEN generation 0 of process 0 running as pid 4242 (this test's own pid stands for a live one)
    const root = scratchDir('roll-host');
    const g0 = poolerPaths('bouncer', root);
    const g1 = poolerPaths('bouncer', root, true);
    for (const d of [g0.socketDir(0), g1.socketDir(0)]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(g0.pidFile(0), '4242\n');
    const live = new Set([4242]);
    const calls: string[] = [];
    const servers: net.Server[] = [];
    const host = systemdRollHost({
      name: 'bouncer',
      driver: pgbouncerDriver,
      dataPort: 6432,
      root,
      alive: (pid) => live.has(pid),
      // WHEN systemd starts the unit, the new PgBouncer writes its pid file and listens
      run: async (file, args) => {
        calls.push([file, ...args].join(' '));
        fs.writeFileSync(g1.pidFile(0), '4343\n');
        live.add(4343);
        const srv = net.createServer((s) => s.destroy());
        servers.push(srv);
        await new Promise<void>((r) => srv.listen(g1.socketFile(0, 6432), r));
        return { code: 0, stdout: '', stderr: '' };
      },
    });
    try {
      expect(host.servingPid(0)).toBe(4242);
      expect(host.leftoverPid(0)).toBeNull();
      const pid = await host.startOther(0, 5000);
      // THEN
      expect(calls).toEqual(['sudo -n /usr/bin/systemctl start proxylab-pgbouncer@bouncer-0r.service']);
      expect(pid).toBe(4343);
      expect(host.servingPid(0)).toBe(4343);
      expect(host.leftoverPid(0)).toBe(4242);
      expect(host.live(0).socketFile(0, 6432)).toBe(
        path.join(root, 'run/proxylab-pgb/bouncer-0r/.s.PGSQL.6432'),
      );
    } finally {
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    }
  });

  test('a refused sudo names the command and its stderr', async () => {
    const root = scratchDir('roll-host');
    const host = systemdRollHost({
      name: 'bouncer',
      driver: pgbouncerDriver,
      dataPort: 6432,
      root,
      run: () => Promise.resolve({ code: 1, stdout: '', stderr: 'sudo: a password is required\n' }),
    });
    await expect(host.startOther(0, 1000)).rejects.toThrow(
      /sudo -n \/usr\/bin\/systemctl start proxylab-pgbouncer@bouncer-0r\.service failed \(exit 1\): sudo: a password is required/,
    );
  });
});

/** The control channel on a free port of 127.0.0.1 with `host`; its port and a stop. */
async function channel(host: RollHost, key: string | null = KEY, lineTimeoutMs = 2000) {
  const srv = net.createServer(
    controlChannel({
      key,
      processes: 2,
      restart: pgbouncerDriver.lifecycle.restart('1.25.2'),
      immediateStop: ['SIGQUIT'],
      host,
      lineTimeoutMs,
    }),
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  return { port, stop: () => new Promise((r) => srv.close(r)) };
}

/** Sends `line` (after the hello) and reads every line the agent answers until it closes. */
function rawExchange(port: number, line: string | null): Promise<string[]> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      if (text === '' && line !== null) sock.write(line);
      text += d;
    });
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(text.trim().split('\n')));
  });
}

describe('the control channel', () => {
  test('a roll: the hello, the events as they happen, the result; the runner client checks each line', async () => {
    const host = fakeHost([100, 101]);
    const ch = await channel(host);
    try {
      const events: RollEvent[] = [];
      const result = await rollPoolerProcess('127.0.0.1', ch.port, KEY, 1, (e) => events.push(e));
      expect(result).toMatchObject({ result: 'ok', index: 1, oldPid: 101, newPid: 500, oldExited: true });
      expect(events.map((e) => e.event)).toEqual(['started-new', 'signalled-old', 'old-exited']);
      expect(events.every((e) => !Number.isNaN(Date.parse(e.at)))).toBe(true);
    } finally {
      await ch.stop();
    }
  });

  test.each([
    ['a token made with another key', 'wrong-key', 0, /token does not match/],
    ['an index the pooler does not have', KEY, 2, /index 2 is not a process of this pooler \(0–1\)/],
  ])('refused: %s', async (_what, key, index, why) => {
    const host = fakeHost([100, 101]);
    const ch = await channel(host);
    try {
      const result = await rollPoolerProcess('127.0.0.1', ch.port, controlKey(key, 'bouncer'), index, () => {
        throw new Error('no event expected');
      });
      // refused before anything is done on the host (the index is checked before the token)
      expect(result.result).toBe('refused');
      expect(result.result !== 'ok' && result.error).toMatch(why);
      expect(host.calls).toEqual([]);
    } finally {
      await ch.stop();
    }
  });

  test.each([
    ['not JSON', 'roll 1 please\n', /request is not JSON/],
    ['another op', '{"op":"shutdown","index":0,"token":"' + 'a'.repeat(64) + '"}\n', /bad request: op: /],
    [
      'an extra field',
      '{"op":"roll","index":0,"token":"' + 'a'.repeat(64) + '","run":"x"}\n',
      /bad request: .*run/,
    ],
    [
      'a line longer than the limit',
      `{"op":"roll","pad":"${'x'.repeat(CONTROL_MAX_LINE + 10)}"}\n`,
      /longer than 1024 bytes/,
    ],
    ['a line that never ends', 'x'.repeat(CONTROL_MAX_LINE + 10), /longer than 1024 bytes/],
  ])('a hostile line refused: %s', async (_what, line, why) => {
    const host = fakeHost([100, 101]);
    const ch = await channel(host);
    try {
      const lines = await rawExchange(ch.port, line);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ hello: 'proxylab-pooler-control', version: 1 });
      expect(lines).toHaveLength(2);
      const answer = JSON.parse(lines[1] as string) as { result: string; error: string };
      expect(answer.result).toBe('refused');
      expect(answer.error).toMatch(why);
      expect(host.calls).toEqual([]);
    } finally {
      await ch.stop();
    }
  });

  test('no line in time, and a host without a key: refused', async () => {
    const host = fakeHost([100, 101]);
    const quiet = await channel(host, KEY, 200);
    const keyless = await channel(host, null);
    try {
      const lines = await rawExchange(quiet.port, null);
      expect(JSON.parse(lines[1] as string)).toMatchObject({
        result: 'refused',
        error: 'no request line within 200 ms',
      });
      const r = await rollPoolerProcess('127.0.0.1', keyless.port, KEY, 0, () => undefined);
      expect(r.result !== 'ok' && r.error).toMatch(/no control key .* redeploy/);
      expect(host.calls).toEqual([]);
    } finally {
      await quiet.stop();
      await keyless.stop();
    }
  });

  test('one roll at a time: a second request while one runs is refused', async () => {
    const host = fakeHost([100, 101]);
    let release: () => void = () => undefined;
    const start = host.startOther.bind(host);
    host.startOther = (i, t) => new Promise((r) => (release = () => void start(i, t).then(r)));
    const ch = await channel(host);
    try {
      const first = rollPoolerProcess('127.0.0.1', ch.port, KEY, 0, () => undefined);
      await new Promise((r) => setTimeout(r, 100));
      const second = await rollPoolerProcess('127.0.0.1', ch.port, KEY, 1, () => undefined);
      expect(second.result !== 'ok' && second.error).toMatch(/another roll is running on this host/);
      release();
      expect((await first).result).toBe('ok');
    } finally {
      await ch.stop();
    }
  });
});

describe('the runner: pooler-restart on a lab', () => {
  const bouncer = poolerEndpoint({ controlPort: 6438 });
  const doorman = poolerEndpoint({
    name: 'doorman',
    product: 'pgdoorman',
    processes: 1,
    adminPorts: [6440],
    controlPort: 6438,
  });
  const step = (target: string) => ({ target: { name: target } }) as PlannedStep;

  test("the group's poolers: those whose targets its steps probe", () => {
    expect(poolersOfSteps([bouncer, doorman], [step('direct'), step('bouncer-transaction')])).toEqual([
      bouncer,
    ]);
    expect(poolersOfSteps([bouncer, doorman], [step('direct')])).toEqual([]);
  });

  test("every process in turn, each event of the agent at the agent's time, the runner's own at its own", async () => {
    // GIVEN an agent that answers each roll with its events 50 ms apart
    const asked: string[] = [];
    const t0 = Date.parse('2026-11-28T10:00:00.000Z');
    const sink: Array<[string, string, string | null, string | null]> = [];
    const event: EventSink = (name, source, detail = null, at) =>
      sink.push([name, source, detail, at ? at.toISOString() : null]);
    await rollPoolers(
      {
        poolers: [bouncer],
        key: (p) => Promise.resolve(controlKey('pw', p.name)),
        roll: (host, port, key, index, onEvent) => {
          asked.push(
            `${host}:${port} ${index} ${key === controlKey('pw', 'bouncer') ? 'key ok' : 'bad key'}`,
          );
          const at = (ms: number) => new Date(t0 + index * 1000 + ms).toISOString();
          onEvent({
            event: 'started-new',
            index,
            pid: 200 + index,
            at: at(50),
            detail: 'on the same port (so_reuseport)',
          });
          onEvent({
            event: 'signalled-old',
            index,
            pid: 100 + index,
            signal: 'SIGTERM',
            at: at(100),
            detail: 'sent SIGTERM',
          });
          onEvent({ event: 'old-exited', index, pid: 100 + index, at: at(150), detail: 'after SIGTERM' });
          return Promise.resolve({
            result: 'ok',
            index,
            oldPid: 100 + index,
            newPid: 200 + index,
            oldExited: true,
            at: at(160),
          });
        },
      },
      [bouncer],
      event,
      new AbortController().signal,
    );
    // THEN
    expect(asked).toEqual(['10.0.1.5:6438 0 key ok', '10.0.1.5:6438 1 key ok']);
    expect(sink.map(([n, s, , at]) => [n, s, at])).toEqual([
      ['roll-requested', 'pooler-agent', null],
      ['new-process-up', 'pooler-agent', '2026-11-28T10:00:00.050Z'],
      ['old-process-signalled', 'pooler-agent', '2026-11-28T10:00:00.100Z'],
      ['old-process-exited', 'pooler-agent', '2026-11-28T10:00:00.150Z'],
      ['roll-done', 'pooler-agent', '2026-11-28T10:00:00.160Z'],
      ['roll-requested', 'pooler-agent', null],
      ['new-process-up', 'pooler-agent', '2026-11-28T10:00:01.050Z'],
      ['old-process-signalled', 'pooler-agent', '2026-11-28T10:00:01.100Z'],
      ['old-process-exited', 'pooler-agent', '2026-11-28T10:00:01.150Z'],
      ['roll-done', 'pooler-agent', '2026-11-28T10:00:01.160Z'],
    ]);
    expect(sink[2]?.[2]).toBe('PgBouncer bouncer process 1/2: pid 100 SIGTERM: sent SIGTERM');
    expect(sink.some(([, , d]) => (d ?? '').includes(controlKey('pw', 'bouncer')))).toBe(false);
  });

  test('a refused roll ends the group as an infrastructure failure naming the process', async () => {
    await expect(
      rollPoolers(
        {
          poolers: [bouncer],
          key: () => Promise.resolve(KEY),
          roll: () =>
            Promise.resolve({
              result: 'refused',
              error: 'token does not match',
              at: new Date().toISOString(),
            }),
        },
        [bouncer],
        () => undefined,
        new AbortController().signal,
      ),
    ).rejects.toThrow(/PgBouncer bouncer process 1\/2: the agent refused the roll: token does not match/);
  });

  test('the cloud world: pooler-restart opens a pooler session (no AWS call); without poolers it is not available', async () => {
    const spec = {
      kind: 'disruption',
      disruption: { action: 'pooler-restart', shutdown: null },
      intervalMs: 100,
      warmupSec: 5,
      recoverySec: 30,
      clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
    } as const;
    const rolled: number[] = [];
    const base = {
      rds: {} as never,
      database: null,
      proxyNames: [],
      runnerCount: 1,
      ledger: ledgerTarget(),
      now: () => new Date(),
      sleep: () => Promise.resolve(),
    };
    const world = cloudDisruptionWorld({
      ...base,
      poolerRoll: {
        poolers: [bouncer],
        key: () => Promise.resolve(KEY),
        roll: (_h, _p, _k, index) => {
          rolled.push(index);
          return Promise.resolve({
            result: 'ok',
            index,
            oldPid: 1,
            newPid: 2,
            oldExited: true,
            at: new Date().toISOString(),
          });
        },
      },
    });
    expect(world.unavailable(step('bouncer-transaction'), spec)).toBeNull();
    const session = await world.open(
      spec,
      [step('direct'), step('bouncer-transaction')],
      new Map(),
      () => undefined,
    );
    await session.inject(() => undefined, new AbortController().signal);
    await session.restore();
    expect(rolled).toEqual([0, 1]);
    expect(cloudDisruptionWorld(base).unavailable(step('direct'), spec)).toMatch(
      /this lab has none \(poolers: /,
    );
  });
});
