/**
 * Stacks left behind by a proxylab that could not clean up (killed with SIGKILL, its session
 * killed): every stack writes `owner.json` into its temp dir (`<tmpdir>/proxylab-local-*`) naming
 * the proxylab process and the servers it started. Before a new stack starts, `reapOrphanedStacks`
 * stops the servers of stacks whose owner is gone and removes their directories.
 *
 * Never touched: a stack whose owner is alive (same pid and same start time — a reused pid counts as
 * gone), a stack kept on purpose (`--keep`, `kept: true`), a stack written on another host, and a
 * directory without an owner file that is younger than a minute (a stack being set up right now) or
 * that a running process still mentions. Only processes whose command line names the stack's
 * directory are signalled, so a reused server pid is never hit.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseProcStartTicks, parseProcState } from '../core/proc-stat';
import { POOLER_PRODUCTS, type PoolerProduct } from '../poolers/products';
import { poolerDriver } from '../poolers/registry';
import { delay, isAlive } from '../exec/process';

export const STACK_DIR_PREFIX = 'proxylab-local-';
/** What fs.mkdtemp makes of the prefix (6 random characters); `proxylab-local-smoke-…` is not a stack. */
const STACK_DIR_PATTERN = new RegExp(`^${STACK_DIR_PREFIX}[A-Za-z0-9]{6}$`);
/**
 * All a stack directory ever holds (PostgreSQL, pgbench, one directory per pooler instance:
 * `pgbouncer`, `pgbouncer-2p`, `pgdoorman`); an ownerless directory with anything else is not ours.
 */
const STACK_ENTRIES = new Set(['pg', 'pgbench']);
const POOLER_DIR = new RegExp(`^(?:${POOLER_PRODUCTS.join('|')})(?:-\\d+p)?$`);
const OWNER_FILE = 'owner.json';
/** A directory without an owner file younger than this may be a stack being started: left alone. */
const FRESH_DIR_GRACE_MS = 60_000;

export interface StackOwner {
  readonly schemaVersion: 1;
  /** The proxylab (node) process that started the stack. */
  readonly pid: number;
  /** Its start time, field 22 of /proc/<pid>/stat (clock ticks since boot); null without /proc. */
  readonly procStartTicks: number | null;
  readonly hostname: string;
  readonly createdAt: string;
  /** Left running on purpose (--keep): never reaped. */
  readonly kept: boolean;
  /** OS user the servers run as; null: the owner's own user. */
  readonly runAsUser: string | null;
  readonly postgres: { readonly pid: number; readonly dataDir: string } | null;
  /** Process 0; `others`: processes 2…N of a multi-process pooler (--pooler-processes). */
  readonly pgbouncer: {
    readonly pid: number;
    readonly pidFile: string;
    readonly iniFile: string;
    readonly others?: ReadonlyArray<{ readonly pid: number; readonly pidFile: string }>;
  } | null;
  /** Every pooler the stack started, by product (the PgBouncer above included); absent in older files. */
  readonly poolers?: ReadonlyArray<{
    readonly product: PoolerProduct;
    readonly instance: string;
    readonly processes: ReadonlyArray<{ readonly pid: number; readonly pidFile: string | null }>;
  }>;
}

/** Everything the reaper asks of the machine; injectable for tests. */
export interface ReapSystem {
  /** Absolute paths of `proxylab-local-*` directories. */
  listStackDirs(): string[];
  /** Raw owner file text; null when absent or unreadable. */
  readOwnerFile(dir: string): string | null;
  /** Age from the directory's mtime; null when it vanished. */
  dirAgeMs(dir: string): number | null;
  /** Names in the directory; null when it vanished. */
  dirEntries(dir: string): string[] | null;
  isAlive(pid: number): boolean;
  procStartTicks(pid: number): number | null;
  hostname(): string;
  /** The process's command line (argv joined by spaces); null when gone, a zombie, or unknown. */
  commandLine(pid: number): string | null;
  /** Live processes whose command line mentions `needle`. */
  processesMentioning(needle: string): number[];
  /** First line of a pid file as a pid; null when absent or not a pid. */
  readPidFile(file: string): number | null;
  /** process.kill; negative pid = process group. Throws like process.kill. */
  kill(pid: number, signal: NodeJS.Signals): void;
  removeDir(dir: string): void;
  sleep(ms: number): Promise<void>;
}

export type ReapDecision =
  | {
      readonly action: 'skip';
      readonly dir: string;
      readonly reason: 'owner-alive' | 'kept' | 'other-host' | 'fresh' | 'in-use' | 'not-a-stack' | 'gone';
    }
  | {
      readonly action: 'reap';
      readonly dir: string;
      readonly owner: StackOwner | null;
      readonly servers: readonly LiveServer[];
    };

export interface LiveServer {
  /** `PostgreSQL`, or the pooler product's name (`PgBouncer`, `PgDoorman`). */
  readonly kind: string;
  readonly pid: number;
  /** The pooler's product (its driver says how to stop it); absent for PostgreSQL. */
  readonly product?: PoolerProduct;
}

export interface ReapOutcome {
  readonly dir: string;
  readonly ownerPid: number | null;
  readonly stopped: readonly LiveServer[];
  /** Servers that would not stop; the directory is then left in place. */
  readonly stillRunning: readonly LiveServer[];
  readonly removed: boolean;
  readonly message: string;
}

/** Parse an owner file; null when it is not one (a half-written or foreign file). */
function parseOwner(text: string): StackOwner | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.schemaVersion !== 1 || !isPid(o.pid) || typeof o.hostname !== 'string') return null;
  const pg = o.postgres as Record<string, unknown> | null | undefined;
  const pgb = o.pgbouncer as Record<string, unknown> | null | undefined;
  return {
    schemaVersion: 1,
    pid: o.pid,
    procStartTicks: typeof o.procStartTicks === 'number' ? o.procStartTicks : null,
    hostname: o.hostname,
    createdAt: typeof o.createdAt === 'string' ? o.createdAt : '',
    kept: o.kept === true,
    runAsUser: typeof o.runAsUser === 'string' ? o.runAsUser : null,
    postgres:
      pg && isPid(pg.pid) && typeof pg.dataDir === 'string' ? { pid: pg.pid, dataDir: pg.dataDir } : null,
    pgbouncer:
      pgb && isPid(pgb.pid) && typeof pgb.pidFile === 'string' && typeof pgb.iniFile === 'string'
        ? {
            pid: pgb.pid,
            pidFile: pgb.pidFile,
            iniFile: pgb.iniFile,
            ...(Array.isArray(pgb.others)
              ? {
                  others: (pgb.others as unknown[]).flatMap((x) => {
                    const o = x as Record<string, unknown> | null;
                    return o && isPid(o.pid) && typeof o.pidFile === 'string'
                      ? [{ pid: o.pid, pidFile: o.pidFile }]
                      : [];
                  }),
                }
              : {}),
          }
        : null,
    ...(Array.isArray(o.poolers) ? { poolers: parseOwnerPoolers(o.poolers as unknown[]) } : {}),
  };
}

function parseOwnerPoolers(list: unknown[]): NonNullable<StackOwner['poolers']> {
  return list.flatMap((x) => {
    const p = x as Record<string, unknown> | null;
    if (!p || !(POOLER_PRODUCTS as readonly unknown[]).includes(p.product) || typeof p.instance !== 'string')
      return [];
    const processes = Array.isArray(p.processes)
      ? (p.processes as unknown[]).flatMap((y) => {
          const q = y as Record<string, unknown> | null;
          return q && isPid(q.pid)
            ? [{ pid: q.pid, pidFile: typeof q.pidFile === 'string' ? q.pidFile : null }]
            : [];
        })
      : [];
    return [{ product: p.product as PoolerProduct, instance: p.instance, processes }];
  });
}

function isPid(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

/** Is the owner process still the one that wrote the file? A pid alive with another start time was reused. */
function ownerAlive(owner: StackOwner, sys: Pick<ReapSystem, 'isAlive' | 'procStartTicks'>): boolean {
  if (!sys.isAlive(owner.pid)) return false;
  if (owner.procStartTicks === null) return true;
  const now = sys.procStartTicks(owner.pid);
  return now === null || now === owner.procStartTicks;
}

/** A server pid counts only while its command line still names the stack's directory. */
function liveServers(dir: string, owner: StackOwner | null, sys: ReapSystem): LiveServer[] {
  const candidates: LiveServer[] = [];
  const dataDir = owner?.postgres?.dataDir ?? path.join(dir, 'pg', 'data');
  const pgPidFile = sys.readPidFile(path.join(dataDir, 'postmaster.pid'));
  for (const pid of [owner?.postgres?.pid, pgPidFile]) if (pid) candidates.push({ kind: 'PostgreSQL', pid });
  const pgbPidFile = sys.readPidFile(
    owner?.pgbouncer?.pidFile ?? path.join(dir, 'pgbouncer', 'pgbouncer.pid'),
  );
  const bouncer = { kind: 'PgBouncer', product: 'pgbouncer' } as const;
  for (const pid of [owner?.pgbouncer?.pid, pgbPidFile]) if (pid) candidates.push({ ...bouncer, pid });
  for (const other of owner?.pgbouncer?.others ?? [])
    for (const pid of [other.pid, sys.readPidFile(other.pidFile)])
      if (pid) candidates.push({ ...bouncer, pid });
  for (const pooler of owner?.poolers ?? [])
    for (const proc of pooler.processes)
      for (const pid of [proc.pid, proc.pidFile === null ? null : sys.readPidFile(proc.pidFile)])
        if (pid)
          candidates.push({ kind: poolerDriver(pooler.product).displayName, product: pooler.product, pid });
  const seen = new Set<number>();
  return candidates.filter((s) => {
    if (seen.has(s.pid)) return false;
    seen.add(s.pid);
    return serverRunning(s.pid, dir, sys);
  });
}

function serverRunning(pid: number, dir: string, sys: ReapSystem): boolean {
  if (!sys.isAlive(pid)) return false;
  const cmd = sys.commandLine(pid);
  return cmd !== null && cmd.includes(dir);
}

/** What to do with one `proxylab-local-*` directory (no side effects). */
export function decideReap(dir: string, sys: ReapSystem, graceMs: number = FRESH_DIR_GRACE_MS): ReapDecision {
  const text = sys.readOwnerFile(dir);
  const owner = text === null ? null : parseOwner(text);
  if (owner) {
    if (owner.kept) return { action: 'skip', dir, reason: 'kept' };
    if (owner.hostname !== sys.hostname()) return { action: 'skip', dir, reason: 'other-host' };
    if (ownerAlive(owner, sys)) return { action: 'skip', dir, reason: 'owner-alive' };
    return { action: 'reap', dir, owner, servers: liveServers(dir, owner, sys) };
  }
  // No (readable) owner file: a stack being set up, or one from before owner files existed.
  const ageMs = sys.dirAgeMs(dir);
  if (ageMs === null) return { action: 'skip', dir, reason: 'gone' };
  if (ageMs < graceMs) return { action: 'skip', dir, reason: 'fresh' };
  const entries = sys.dirEntries(dir);
  if (entries === null) return { action: 'skip', dir, reason: 'gone' };
  if (!entries.every((e) => STACK_ENTRIES.has(e) || POOLER_DIR.test(e) || e.startsWith(OWNER_FILE)))
    return { action: 'skip', dir, reason: 'not-a-stack' };
  if (sys.processesMentioning(dir).length > 0) return { action: 'skip', dir, reason: 'in-use' };
  return { action: 'reap', dir, owner: null, servers: [] };
}

/**
 * PostgreSQL: SIGQUIT = immediate shutdown. A pooler, whose version the reaper does not know: its
 * driver's immediate-stop signals for an unknown version (PgBouncer: SIGQUIT, then SIGTERM if it is
 * still there — immediate since 1.23 and before it respectively; PgDoorman: SIGTERM, never SIGINT,
 * which starts a binary upgrade). Then SIGKILL to the process group.
 */
async function stopServer(s: LiveServer, dir: string, sys: ReapSystem): Promise<boolean> {
  const signalOnce = (pid: number, sig: NodeJS.Signals): void => {
    try {
      sys.kill(pid, sig);
    } catch {
      /* gone, or not ours to signal (checked below) */
    }
  };
  const waitGone = async (ms: number): Promise<boolean> => {
    for (let waitedMs = 0; ; waitedMs += 100) {
      if (!serverRunning(s.pid, dir, sys)) return true;
      if (waitedMs >= ms) return false;
      await sys.sleep(100);
    }
  };
  const signals =
    s.product === undefined ? ['SIGQUIT' as const] : poolerDriver(s.product).immediateStopSignals(null);
  for (const sig of signals) if (serverRunning(s.pid, dir, sys)) signalOnce(s.pid, sig);
  if (await waitGone(5000)) return true;
  // Servers were started detached: pid = process group, which holds a postmaster's children too.
  signalOnce(-s.pid, 'SIGKILL');
  signalOnce(s.pid, 'SIGKILL');
  return waitGone(3000);
}

function whose(d: Extract<ReapDecision, { action: 'reap' }>): string {
  return d.owner ? `proxylab pid ${d.owner.pid}` : 'an unknown proxylab (no owner file)';
}

async function reapOne(d: Extract<ReapDecision, { action: 'reap' }>, sys: ReapSystem): Promise<ReapOutcome> {
  const stopped: LiveServer[] = [];
  const stillRunning: LiveServer[] = [];
  // Poolers first: they hold connections to PostgreSQL.
  const ordered = [...d.servers].sort(
    (a, b) => (a.product === undefined ? 1 : 0) - (b.product === undefined ? 1 : 0),
  );
  for (const s of ordered) ((await stopServer(s, d.dir, sys)) ? stopped : stillRunning).push(s);
  const what =
    stopped.length > 0
      ? `stopped ${stopped.map((s) => `${s.kind} pid ${s.pid}`).join(', ')}`
      : 'no server was running';
  const ownerPid = d.owner?.pid ?? null;
  const outcome = (removed: boolean, message: string): ReapOutcome => ({
    dir: d.dir,
    ownerPid,
    stopped,
    stillRunning,
    removed,
    message,
  });
  if (stillRunning.length > 0) {
    const left = stillRunning.map((s) => `${s.kind} pid ${s.pid}`).join(', ');
    return outcome(
      false,
      `Could not clean up the stack left by ${whose(d)} (dir ${d.dir}): ${left} would not stop; stop it by hand, then rm -rf ${d.dir}`,
    );
  }
  try {
    sys.removeDir(d.dir);
  } catch (e) {
    return outcome(
      false,
      `Cleaned up a stack left by ${whose(d)} (dir ${d.dir}): ${what}; but could not remove the directory: ${(e as Error).message}`,
    );
  }
  return outcome(true, `Cleaned up a stack left by ${whose(d)} (dir ${d.dir}): ${what}`);
}

/**
 * Reap every orphaned stack; one log line per stack reaped (or that could not be). Never throws:
 * housekeeping must not keep a new run from starting.
 */
export async function reapOrphanedStacks(
  opts: { log?: (line: string) => void; sys?: ReapSystem; graceMs?: number } = {},
): Promise<ReapOutcome[]> {
  const sys = opts.sys ?? nodeReapSystem();
  const log = opts.log ?? (() => undefined);
  const outcomes: ReapOutcome[] = [];
  let dirs: string[];
  try {
    dirs = sys.listStackDirs();
  } catch {
    return outcomes;
  }
  for (const dir of dirs) {
    try {
      const d = decideReap(dir, sys, opts.graceMs);
      if (d.action !== 'reap') continue;
      const outcome = await reapOne(d, sys);
      outcomes.push(outcome);
      log(outcome.message);
    } catch (e) {
      log(`Could not check ${dir} for a leftover stack: ${(e as Error).message}`);
    }
  }
  return outcomes;
}

// ---- owner file ------------------------------------------------------------------------------

/** The owner record for this process, before any server started. */
export function currentOwner(
  runAsUser: string | null,
  sys: Pick<ReapSystem, 'procStartTicks' | 'hostname'> = nodeReapSystem(),
): StackOwner {
  return {
    schemaVersion: 1,
    pid: process.pid,
    procStartTicks: sys.procStartTicks(process.pid),
    hostname: sys.hostname(),
    createdAt: new Date().toISOString(),
    kept: false,
    runAsUser,
    postgres: null,
    pgbouncer: null,
  };
}

/** Write `<dir>/owner.json` atomically (temp file + rename), so a reader never sees half of it. */
export function writeOwnerFile(dir: string, owner: StackOwner): void {
  const file = path.join(dir, OWNER_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(owner, null, 2) + '\n', { mode: 0o644 });
  fs.renameSync(tmp, file);
}

// ---- the real machine ------------------------------------------------------------------------

function readProc(pid: number, name: string): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return null;
  }
}

const HAS_PROC = fs.existsSync('/proc/self/stat');

function commandLine(pid: number): string | null {
  if (HAS_PROC) {
    const cmd = readProc(pid, 'cmdline');
    // A zombie has an empty command line: it is not running.
    return cmd ? cmd.replace(/\0/g, ' ').trim() : null;
  }
  const res = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
  const out = res.status === 0 ? res.stdout.trim() : '';
  return out && !out.includes('<defunct>') ? out : null;
}

function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  if (HAS_PROC) {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      if (commandLine(Number(entry))?.includes(needle)) pids.push(Number(entry));
    }
    return pids;
  }
  const res = spawnSync('ps', ['-axo', 'pid=,command='], { encoding: 'utf8' });
  for (const line of (res.stdout ?? '').split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    const pid = Number(m?.[1]);
    const command = m?.[2];
    if (
      command !== undefined &&
      pid !== process.pid &&
      command.includes(needle) &&
      !command.includes('<defunct>')
    )
      pids.push(pid);
  }
  return pids;
}

export function nodeReapSystem(tmpDir: string = os.tmpdir()): ReapSystem {
  return {
    listStackDirs: () =>
      fs
        .readdirSync(tmpDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && STACK_DIR_PATTERN.test(e.name))
        .map((e) => path.join(tmpDir, e.name)),
    readOwnerFile: (dir) => {
      try {
        return fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8');
      } catch {
        return null;
      }
    },
    dirAgeMs: (dir) => {
      try {
        return Date.now() - fs.statSync(dir).mtimeMs;
      } catch {
        return null;
      }
    },
    dirEntries: (dir) => {
      try {
        return fs.readdirSync(dir);
      } catch {
        return null;
      }
    },
    // A zombie (exited, not yet waited for: its parent is gone and this machine's pid 1 may not
    // reap) still answers kill(pid, 0) but will never clean up its stack.
    isAlive: (pid) => isAlive(pid) && parseProcState(readProc(pid, 'stat') ?? '') !== 'Z',
    procStartTicks: (pid) => {
      const stat = readProc(pid, 'stat');
      return stat === null ? null : parseProcStartTicks(stat);
    },
    hostname: () => os.hostname(),
    commandLine,
    processesMentioning,
    readPidFile: (file) => {
      try {
        const v = Number((fs.readFileSync(file, 'utf8').split('\n')[0] ?? '').trim());
        return isPid(v) ? v : null;
      } catch {
        return null;
      }
    },
    kill: (pid, signal) => {
      process.kill(pid, signal);
    },
    removeDir: (dir) => fs.rmSync(dir, { recursive: true, force: true }),
    sleep: delay,
  };
}
