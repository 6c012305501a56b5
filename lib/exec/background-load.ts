/**
 * The background load of a disruption group (issue 42 item 4), world-neutral: one pgbench per
 * probed target, through the same endpoint as that target's probe clients (hosts, user, database,
 * TLS mode, libpq's target_session_attrs), started with the warm-up and stopped when the recovery
 * window closes. Run by the disruption probe (./disruption-probe.ts) through the world's
 * PgbenchExecutor: the local stack's, the runner's.
 *
 * pgbench prints a progress line every second with its Unix time (`--progress 1
 * --progress-timestamp`, pgbench ≥ 9.6; pgbench docs: "use a timestamp (Unix epoch) instead of the
 * number of seconds since the beginning of the run. The unit is in seconds, with millisecond
 * precision after the dot"), which places each second on the probes' timeline (ms from T0) whatever
 * its start-up took. It runs `-T` a little past the window and is stopped at the
 * window's end: that stop is `window-closed`, not an error. A client pgbench aborts because its
 * session ended (a server stop) is the measurement (`abortedClients`); a pgbench that ended early
 * (every client aborted, or refused while the server was down) is started again, as an application
 * reconnects (`starts`). The tables its script needs are loaded once per run and
 * scale (`pgbench -i`, not measured) through the ledger's endpoint (the primary).
 */
import type { PgbenchExecutor, Target } from '../engine/ports';
import type { PlannedStep } from '../suite/expand';
import {
  loadFigures,
  loadNotRun,
  loadScriptLabel,
  type BackgroundLoad,
  type BackgroundLoadResult,
  type LoadEndState,
  type LoadSecond,
} from '../suite/disruption-load';
import { mergeErrors, parsePgbench } from '../suite/parser';
import type { ProbeEndpoint } from './pg-probe';

/** pgbench runs this much past the window (then it is stopped at the window's end). */
const RUN_PAST_WINDOW_SEC = 5;
/** Connections the server keeps for superusers and pgbench's own setup (see MaxConnectionsBand). */
const RESERVED_SLOTS = 3;
/** `pgbench -i` at a load's scale: not measured, given this long. */
const INIT_TIMEOUT_MS = 300_000;

/** pgbench's connection options and environment for a probe endpoint: the same server(s) the probes reach. */
export function endpointPgbenchArgs(ep: ProbeEndpoint): {
  readonly args: string[];
  readonly env: Record<string, string>;
} {
  return {
    // libpq's multi-host lists (-h a,b -p 1,2): what a direct probe client tries during a failover
    args: [
      '-h',
      ep.hosts.map((h) => h.host).join(','),
      '-p',
      ep.hosts.map((h) => String(h.port)).join(','),
      '-U',
      ep.user,
    ],
    env: {
      // See lib/suite/argv.ts buildPgbenchEnv: no Kerberos credential lookup per connection.
      PGGSSENCMODE: 'disable',
      PGSSLMODE: ep.sslmode,
      PGTARGETSESSIONATTRS: ep.targetSessionAttrs,
      ...(ep.password !== undefined ? { PGPASSWORD: ep.password } : {}),
    },
  };
}

/** Loads the tables the load's script reads (`pgbench -i -s SCALE`); null when done, else why not. */
export async function initLoadData(
  executor: PgbenchExecutor,
  ep: ProbeEndpoint,
  load: BackgroundLoad,
  signal: AbortSignal,
): Promise<string | null> {
  const dir = await executor.workDir('load-init');
  const conn = endpointPgbenchArgs(ep);
  try {
    const out = await executor.run({
      argv: ['pgbench', '-i', '-s', String(load.scale), '--quiet', ...conn.args, ep.dbname],
      env: conn.env,
      timeoutMs: INIT_TIMEOUT_MS,
      logDir: dir,
      signal,
    });
    if (out.exitCode === 0) return null;
    return `pgbench -i -s ${load.scale} failed (exit ${String(out.exitCode)}): ${lastLine(out.stderr)}`;
  } catch (err) {
    return `pgbench -i could not start: ${(err as Error).message}`;
  } finally {
    await executor.removeWorkDir?.(dir);
  }
}

/** Why `target` cannot take the load beside its probe clients, or null (pooled targets queue their clients). */
export async function loadCapacityProblem(
  load: BackgroundLoad,
  target: Target,
  probeClients: number,
): Promise<string | null> {
  if (target.descriptor?.capabilities.pooled !== false) return null;
  const max = await target.maxConnections().catch(() => null);
  if (max === null) return null;
  const room = max - RESERVED_SLOTS - probeClients;
  return load.clients > room
    ? `probe.load.clients ${load.clients} is more than ${target.ref.name} can take beside its ${probeClients} probe client(s): max_connections ${max} less ${RESERVED_SLOTS} reserved allows at most ${Math.max(0, room)}`
    : null;
}

export interface LoadStart {
  readonly load: BackgroundLoad;
  readonly executor: PgbenchExecutor;
  readonly target: string;
  readonly endpoint: ProbeEndpoint;
  readonly protocol: string;
  /** When the window closes, in ms from now (Date.now(): pgbench's own clock). */
  readonly windowEndsAt: () => number;
  /** Aborted when the window closes (or the run is stopped): pgbench is stopped then. */
  readonly stop: AbortSignal;
  /** Whether `stop` aborted because the window closed (not because the run was stopped). */
  readonly closedByWindow: () => boolean;
  /** Between a pgbench that ended early and the next start. @default 250 */
  readonly restartDelayMs?: number;
}

/** What one pgbench process printed. */
export interface LoadProcess {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly stopped: boolean;
}

/** What the target's pgbench processes printed, before it is put on the timeline (T0 is known only after the group). */
export interface LoadOutcome {
  readonly start: LoadStart;
  readonly processes: readonly LoadProcess[];
  /** Why pgbench could not run at all; null: it ran. */
  readonly error: string | null;
}

/** Restarts stop this close to the window's end (a pgbench that could not print one second). */
const NO_RESTART_WITHIN_MS = 1000;

/**
 * One target's load: pgbench from now until the window closes. A pgbench that ends before then (every
 * client aborted by a server stop, or refused while the server is down) is started again after
 * `restartDelayMs`, as an application reconnects; each process's aborted clients are counted.
 * Resolves when the window closed or the run was stopped. Never rejects.
 */
export async function runLoad(s: LoadStart): Promise<LoadOutcome> {
  const processes: LoadProcess[] = [];
  let dir: string | null = null;
  try {
    dir = await s.executor.workDir(`load-${s.target}`);
    for (;;) {
      const left = s.windowEndsAt() - Date.now();
      if (s.stop.aborted || (processes.length > 0 && left < NO_RESTART_WITHIN_MS)) break;
      const p = await runOnce(s, dir, left / 1000);
      processes.push(p);
      if (p.stopped || p.timedOut || p.exitCode === 0) break;
      await new Promise((r) => setTimeout(r, s.restartDelayMs ?? 250));
    }
    return { start: s, processes, error: null };
  } catch (err) {
    return { start: s, processes, error: `pgbench could not start: ${(err as Error).message}` };
  } finally {
    if (dir !== null) await s.executor.removeWorkDir?.(dir);
  }
}

async function runOnce(s: LoadStart, dir: string, windowLeftSec: number): Promise<LoadProcess> {
  const { load } = s;
  const conn = endpointPgbenchArgs(s.endpoint);
  const files = load.script.parts.flatMap((p) =>
    'file' in p ? [{ path: `${dir}/${p.file.name}`, content: withNewline(p.file.sql) }] : [],
  );
  const mixed = load.script.parts.length > 1;
  const scripts = load.script.parts.flatMap((p) => {
    const weight = mixed ? `@${p.weight ?? 1}` : '';
    return 'builtin' in p ? ['-b', `${p.builtin}${weight}`] : ['-f', `${dir}/${p.file.name}${weight}`];
  });
  // pgbench's :scale is -s when every script is a file (lib/suite/argv.ts scaleForScripts)
  const scale = load.scale > 1 && load.script.parts.every((p) => 'file' in p);
  const duration = Math.max(1, Math.ceil(windowLeftSec)) + RUN_PAST_WINDOW_SEC;
  const out = await s.executor.run({
    argv: [
      'pgbench',
      '-n',
      '--progress',
      '1',
      '--progress-timestamp',
      '-M',
      s.protocol,
      '-c',
      String(load.clients),
      '-j',
      String(Math.min(load.jobs, load.clients)),
      '-T',
      String(duration),
      ...(scale ? ['-s', String(load.scale)] : []),
      ...scripts,
      ...conn.args,
      s.endpoint.dbname,
    ],
    env: conn.env,
    timeoutMs: (duration + 30) * 1000,
    logDir: dir,
    files,
    signal: s.stop,
  });
  return {
    stdout: out.stdout,
    stderr: out.stderr,
    exitCode: out.exitCode,
    timedOut: out.timedOut,
    stopped: out.aborted === true,
  };
}

/**
 * One target's load result: pgbench's seconds placed on the timeline (`t0WallMs`: T0's Unix time in
 * ms — the planned T0's when the disruption never came), the window `recoveryMs` long after it.
 */
export function loadResultOf(o: LoadOutcome, t0WallMs: number, recoveryMs: number): BackgroundLoadResult {
  const { load } = o.start;
  const last = o.processes[o.processes.length - 1];
  if (o.error !== null || last === undefined)
    return { ...loadNotRun(load, o.error ?? 'pgbench did not start'), endState: 'failed' };
  const parsed = o.processes.map((p) => parsePgbench(p));
  const series: LoadSecond[] = parsed
    .flatMap((r) => r.progress ?? [])
    .map((p) => [
      Math.round(p.elapsedSec * 1000 - t0WallMs),
      p.tps,
      // pgbench prints latency 0 for a second without a transaction: no latency, not 0 ms
      p.tps === 0 ? null : p.latencyAvgMs,
      p.failed,
    ]);
  const aborted = parsed.reduce((a, r) => a + r.abortedClients, 0);
  const lastParsed = parsed[parsed.length - 1];
  const endState: LoadEndState =
    last.stopped && o.start.closedByWindow()
      ? 'window-closed'
      : last.exitCode === 0
        ? 'ended'
        : !last.stopped && !last.timedOut && (lastParsed?.abortedClients ?? 0) > 0
          ? 'clients-aborted'
          : 'failed';
  const note =
    endState === 'failed'
      ? last.stopped
        ? 'the run was stopped while pgbench ran'
        : last.timedOut
          ? 'pgbench did not end within its time limit and was killed'
          : `pgbench exited ${String(last.exitCode)}: ${lastLine(last.stderr)}`
      : null;
  return {
    scenario: load.scenario,
    script: loadScriptLabel(load),
    clients: load.clients,
    jobs: load.jobs,
    endState,
    note,
    exitCode: last.exitCode,
    starts: o.processes.length,
    series,
    ...loadFigures(series, recoveryMs),
    abortedClients: aborted,
    errors: mergeErrors(parsed.map((r) => r.errors)).map((e) => ({
      class: e.class,
      count: e.count,
      sample: e.sample,
    })),
  };
}

function withNewline(sql: string): string {
  return sql.endsWith('\n') ? sql : `${sql}\n`;
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('progress:'));
  return lines[lines.length - 1] ?? '(no output)';
}

/** What a disruption group gives its loads (./disruption-probe.ts runGroup). */
export interface GroupLoadInput {
  readonly load: BackgroundLoad;
  /** The world's pgbench; absent: the load is recorded not run. */
  readonly executor: PgbenchExecutor | undefined;
  readonly steps: readonly PlannedStep[];
  readonly targets: ReadonlyMap<string, Target>;
  /** The endpoint the probe clients of a step use: the load's too. */
  readonly endpoint: (step: PlannedStep, target: Target) => ProbeEndpoint;
  /** Where the tables are loaded (the ledger's endpoint: the primary). */
  readonly ledger: ProbeEndpoint;
  /** The probe clock (ms) and a wait on it. */
  readonly clock: { now(): number; sleepUntil(ms: number, signal: AbortSignal): Promise<void> };
  readonly signal: AbortSignal;
  /** Scales whose tables this run has loaded already (kept by the runner across groups). */
  readonly loadedScales: Set<number>;
  readonly log: (line: string) => void;
}

/** The loads of one group: started with the warm-up, stopped at the window's end, then read. */
export interface GroupLoads {
  /** Starts every target's pgbench now; each is stopped at `endMs` on the probe clock. */
  start(endMs: number): void;
  /** After the window: each target's result, by target name. */
  results(t0WallMs: number, recoveryMs: number): Promise<ReadonlyMap<string, BackgroundLoadResult>>;
}

/** Prepares a group's loads (tables, capacity checks): not measured. */
export async function prepareGroupLoads(g: GroupLoadInput): Promise<GroupLoads> {
  const notRun = new Map<string, BackgroundLoadResult>();
  const firstStep = new Map<string, PlannedStep>();
  const probeClients = new Map<string, number>();
  for (const step of g.steps) {
    const name = step.target.name;
    if (!firstStep.has(name)) firstStep.set(name, step);
    probeClients.set(name, (probeClients.get(name) ?? 0) + step.params.clients);
  }
  const initProblem =
    g.executor === undefined
      ? 'this run has no pgbench to run a background load with'
      : g.loadedScales.has(g.load.scale)
        ? null
        : await initLoadData(g.executor, g.ledger, g.load, g.signal);
  if (g.executor !== undefined && initProblem === null) g.loadedScales.add(g.load.scale);
  for (const name of firstStep.keys()) {
    const target = g.targets.get(name);
    const why =
      initProblem ?? (target ? await loadCapacityProblem(g.load, target, probeClients.get(name) ?? 0) : null);
    if (why !== null) {
      notRun.set(name, loadNotRun(g.load, why));
      g.log(`background load on ${name} not run: ${why}`);
    }
  }
  const running: Array<Promise<LoadOutcome>> = [];
  return {
    start: (endMs) => {
      if (g.executor === undefined) return;
      const stop = new AbortController();
      let byWindow = false;
      const onRunAbort = (): void => stop.abort();
      g.signal.addEventListener('abort', onRunAbort, { once: true });
      void g.clock.sleepUntil(endMs, g.signal).then(() => {
        byWindow = !g.signal.aborted;
        g.signal.removeEventListener('abort', onRunAbort);
        stop.abort();
      });
      for (const [name, step] of firstStep) {
        const target = g.targets.get(name);
        if (target === undefined || notRun.has(name)) continue;
        running.push(
          runLoad({
            load: g.load,
            executor: g.executor,
            target: name,
            endpoint: g.endpoint(step, target),
            protocol: step.params.protocol,
            // pgbench keeps Unix time: the window's end on it, from the probe clock's distance to it
            windowEndsAt: () => Date.now() + (endMs - g.clock.now()),
            stop: stop.signal,
            closedByWindow: () => byWindow,
          }),
        );
      }
      g.log(
        `background load: ${g.load.scenario} × ${g.load.clients} client(s) on ${running.length} target(s)`,
      );
    },
    results: async (t0WallMs, recoveryMs) => {
      const out = new Map(notRun);
      for (const o of await Promise.all(running))
        out.set(o.start.target, loadResultOf(o, t0WallMs, recoveryMs));
      return out;
    },
  };
}
