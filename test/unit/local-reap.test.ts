/**
 * Which leftover `proxylab-local-*` directories are reaped, on a fake machine: alive owner, kept
 * stack, reused pid, fresh ownerless dir, and what a reap signals and removes. The liveness check
 * on a real zombie process is in test/integration/local-reap.test.ts.
 */
import { parseProcStartTicks } from '../../lib/core/proc-stat';
import { decideReap, reapOrphanedStacks, type ReapSystem, type StackOwner } from '../../lib/local/reap';

const DIR = '/tmp/proxylab-local-abc123';
const HOST = 'lab-host';

interface FakeProc {
  startTicks: number;
  cmd: string;
}

function owner(over: Partial<StackOwner> = {}): StackOwner {
  return {
    schemaVersion: 1,
    pid: 4242,
    procStartTicks: 1000,
    hostname: HOST,
    createdAt: '2026-11-21T12:00:00.000Z',
    kept: false,
    runAsUser: 'postgres',
    postgres: { pid: 5001, dataDir: `${DIR}/pg/data` },
    pgbouncer: {
      pid: 5002,
      pidFile: `${DIR}/pgbouncer/pgbouncer.pid`,
      iniFile: `${DIR}/pgbouncer/pgbouncer.ini`,
    },
    ...over,
  };
}

/** A machine with the given processes; servers die on the first signal unless `stubborn`. */
function fakeSystem(opts: {
  ownerText: string | null;
  procs: Record<number, FakeProc>;
  ageMs?: number;
  stubborn?: number[];
  /** Signals a process ignores (PgBouncer before 1.23 ignores SIGQUIT). */
  ignores?: Record<number, NodeJS.Signals[]>;
  entries?: string[];
}) {
  const procs = new Map(Object.entries(opts.procs).map(([k, v]) => [Number(k), v]));
  const signals: Array<[number, NodeJS.Signals]> = [];
  const removed: string[] = [];
  const sys: ReapSystem = {
    listStackDirs: () => [DIR],
    readOwnerFile: () => opts.ownerText,
    dirAgeMs: () => opts.ageMs ?? 10 * 60_000,
    dirEntries: () => opts.entries ?? ['pg', 'pgbouncer', 'pgbench'],
    isAlive: (pid) => procs.has(pid),
    procStartTicks: (pid) => procs.get(pid)?.startTicks ?? null,
    hostname: () => HOST,
    commandLine: (pid) => procs.get(pid)?.cmd ?? null,
    processesMentioning: (needle) =>
      [...procs.entries()].filter(([, p]) => p.cmd.includes(needle)).map(([pid]) => pid),
    readPidFile: (file) => (file.endsWith('postmaster.pid') && procs.has(5001) ? 5001 : null),
    kill: (pid, signal) => {
      signals.push([pid, signal]);
      const target = Math.abs(pid);
      if (!procs.has(target)) throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
      if ((opts.ignores?.[target] ?? []).includes(signal)) return;
      if (!(opts.stubborn ?? []).includes(target) || signal === 'SIGKILL') procs.delete(target);
    },
    removeDir: (dir) => removed.push(dir),
    sleep: () => Promise.resolve(),
  };
  return { sys, signals, removed, procs };
}

const servers: Record<number, FakeProc> = {
  5001: { startTicks: 2000, cmd: `/usr/lib/postgresql/15/bin/postgres -D ${DIR}/pg/data -c port=21000` },
  5002: { startTicks: 2001, cmd: `/usr/sbin/pgbouncer ${DIR}/pgbouncer/pgbouncer.ini` },
};

describe('decideReap', () => {
  test.each([
    [
      'owner alive (same start time)',
      JSON.stringify(owner()),
      { 4242: { startTicks: 1000, cmd: 'node scripts/proxylab.js local' }, ...servers },
      undefined,
      'owner-alive',
      null,
    ],
    ['kept with --keep, owner gone', JSON.stringify(owner({ kept: true })), servers, undefined, 'kept', null],
    [
      'written on another host',
      JSON.stringify(owner({ hostname: 'elsewhere' })),
      servers,
      undefined,
      'other-host',
      null,
    ],
    ['no owner file, 10 s old', null, {}, 10_000, 'fresh', null],
    ['no owner file, old, a server still names the dir', null, servers, undefined, 'in-use', null],
    ['unparseable owner file, 10 s old', '{"schemaVer', {}, 10_000, 'fresh', null],
    [
      'no owner file, old, holding files a stack never has',
      null,
      {},
      undefined,
      'not-a-stack',
      ['pg', 'manifest.json'],
    ],
  ] as const)(
    '%s → untouched',
    (_name, ownerText, procs, ageMs, reason, entries: readonly string[] | null) => {
      // GIVEN a stack directory in that state
      const { sys } = fakeSystem({
        ownerText,
        procs: { ...procs },
        ageMs,
        entries: entries ? [...entries] : undefined,
      });
      // WHEN the reaper looks at it
      const d = decideReap(DIR, sys);
      // THEN it is left alone, for that reason
      expect(d).toEqual({ action: 'skip', dir: DIR, reason });
    },
  );

  test.each<[string, Record<number, FakeProc>]>([
    ['owner pid dead', {}],
    ['owner pid reused by another process (other start time)', { 4242: { startTicks: 9999, cmd: 'bash' } }],
  ])('%s → reaped with both live servers', (_name, ownerProcs) => {
    const { sys } = fakeSystem({ ownerText: JSON.stringify(owner()), procs: { ...ownerProcs, ...servers } });
    const d = decideReap(DIR, sys);
    expect(d.action).toBe('reap');
    expect(d.action === 'reap' && d.servers).toEqual([
      { kind: 'PostgreSQL', pid: 5001 },
      { kind: 'PgBouncer', product: 'pgbouncer', pid: 5002 },
    ]);
  });

  test('a recorded server pid now used by an unrelated process is not a server of the stack', () => {
    const { sys } = fakeSystem({
      ownerText: JSON.stringify(owner()),
      procs: { 5002: { startTicks: 7, cmd: 'sleep 100' } },
    });
    const d = decideReap(DIR, sys);
    expect(d).toEqual({ action: 'reap', dir: DIR, owner: owner(), servers: [] });
  });

  test('an old directory without owner file and no process naming it is reaped', () => {
    const { sys } = fakeSystem({
      ownerText: null,
      procs: { 77: { startTicks: 1, cmd: 'postgres -D /tmp/proxylab-local-other/pg/data' } },
    });
    expect(decideReap(DIR, sys)).toEqual({ action: 'reap', dir: DIR, owner: null, servers: [] });
  });
});

describe('reapOrphanedStacks', () => {
  test('stops PgBouncer then PostgreSQL (SIGQUIT to both), removes the dir and says so in one line', async () => {
    // GIVEN a stack whose owner 4242 is dead and whose servers still run
    const { sys, signals, removed, procs } = fakeSystem({
      ownerText: JSON.stringify(owner()),
      procs: { ...servers },
    });
    const lines: string[] = [];
    // WHEN reaping
    const outcomes = await reapOrphanedStacks({ sys, log: (l) => lines.push(l) });
    // THEN
    // (SIGQUIT: PgBouncer ≥ 1.23's immediate shutdown; its SIGTERM would wait for clients)
    expect(signals).toEqual([
      [5002, 'SIGQUIT'],
      [5001, 'SIGQUIT'],
    ]);
    expect(procs.size).toBe(0);
    expect(removed).toEqual([DIR]);
    expect(outcomes.map((o) => o.removed)).toEqual([true]);
    expect(lines).toEqual([
      `Cleaned up a stack left by proxylab pid 4242 (dir ${DIR}): stopped PgBouncer pid 5002, PostgreSQL pid 5001`,
    ]);
  });

  test('a PgBouncer before 1.23 ignores SIGQUIT: it gets SIGTERM (its immediate shutdown) at once, no SIGKILL', async () => {
    // GIVEN PgBouncer 5002 ignores SIGQUIT, as Debian's 1.18.0 does
    const { sys, signals, removed } = fakeSystem({
      ownerText: JSON.stringify(owner()),
      procs: { ...servers },
      ignores: { 5002: ['SIGQUIT'] },
    });
    // WHEN reaping
    await reapOrphanedStacks({ sys, log: () => undefined });
    // THEN
    expect(signals).toEqual([
      [5002, 'SIGQUIT'],
      [5002, 'SIGTERM'],
      [5001, 'SIGQUIT'],
    ]);
    expect(removed).toEqual([DIR]);
  });

  test('a server that ignores its first signal gets SIGKILL to its process group', async () => {
    const { sys, signals, removed } = fakeSystem({
      ownerText: JSON.stringify(owner()),
      procs: { ...servers },
      stubborn: [5001],
    });
    await reapOrphanedStacks({ sys });
    expect(signals).toContainEqual([-5001, 'SIGKILL']);
    expect(removed).toEqual([DIR]);
  });

  test('nothing is signalled or removed while the owner lives', async () => {
    const { sys, signals, removed } = fakeSystem({
      ownerText: JSON.stringify(owner()),
      procs: { 4242: { startTicks: 1000, cmd: 'node' }, ...servers },
    });
    const lines: string[] = [];
    expect(await reapOrphanedStacks({ sys, log: (l) => lines.push(l) })).toEqual([]);
    expect(signals).toEqual([]);
    expect(removed).toEqual([]);
    expect(lines).toEqual([]);
  });
});

describe('parseProcStartTicks', () => {
  test.each([
    ['1234 (node) S 1 1234 1234 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 11 0 987654 1000000 5000', 987654],
    // a command name with spaces and a parenthesis
    ['99 (a b) c)) R 1 99 99 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0', 42],
    ['garbage', null],
  ])('%j → %s', (stat, ticks) => {
    expect(parseProcStartTicks(stat)).toBe(ticks);
  });
});
