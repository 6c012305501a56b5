/**
 * The scenario model (pure): what a catalog entry is — a matrix (targets × clients × protocols ×
 * connect modes × pool percents × repetitions) with one script, duration and scale, its
 * expectations (rules, first match wins) and comparisons (scenario-level ratio checks) — and the
 * checks every scenario passes. The entries themselves live in lib/suite/experiments/, one file per
 * experiment; lib/suite/catalog.ts assembles them into suites.
 */
import { validateProbe, type ProbeSpec } from './probes';
import type { ServerStopPolicy } from './server-stop';
import type { TargetMatch } from './targets';
import type { ScriptSpec } from './script-spec';
import type { ConnectMode, ErrorClass, Outcome, PreparedStatementsMode, Protocol } from './types';

export { BUILTIN_SCRIPTS, scriptLabel } from './script-spec';
export type { BuiltinScript, ScriptPart, ScriptSpec } from './script-spec';

/** Clients as an absolute number or relative to the server's max_connections / the pool size. */
export type ClientsSpec = number | { readonly times: number; readonly of: 'maxConnections' | 'poolSize' };

/**
 * Where a step's client count sits relative to the server's max_connections:
 * `above` clients > max_connections; `near` within the reserved-slot margin below it
 * (max(3, 5 %) — superuser_reserved_connections, RDS's reserved slots, pgbench's own setup
 * connection); `below` everything else.
 */
export type MaxConnectionsBand = 'below' | 'near' | 'above';

/**
 * pgbench -i options a scenario may add: unlogged tables and foreign keys (E2's published load), or
 * `--init-steps=dt` — create the tables, load no rows — for a script that never reads them (the
 * test-only `pg_sleep` steps; `pgbench -i` at scale 1 otherwise costs ≈ 0.3 CPU-s per stack).
 * The plan's schema reads this list (lib/results/schemas.ts).
 */
export const INIT_FLAGS = ['--unlogged-tables', '--foreign-keys', '--init-steps=dt'] as const;
export type InitFlag = (typeof INIT_FLAGS)[number];

export interface ExpectationRule {
  /** Conditions, all optional; an absent condition matches everything. */
  readonly when: {
    /** What the target must be or be able to do (lib/suite/targets.ts); never a kind name. */
    readonly target?: TargetMatch;
    readonly protocols?: readonly Protocol[];
    readonly connects?: readonly ConnectMode[];
    readonly maxConnectionsBand?: readonly MaxConnectionsBand[];
    /** true: only when clients > pool size (pooled targets); false: only when clients ≤ pool size. */
    readonly clientsAbovePoolSize?: boolean;
  };
  readonly outcome: Outcome;
  /** For `refused` / `errors`: the classes that count (any one of them is enough). */
  readonly errorClasses?: readonly ErrorClass[];
  /** What the published write-up reported, when the lab judges differently (e.g. `any`). */
  readonly published?: string;
  readonly note?: string;
}

/** Picks the steps of one side of a comparison; unspecified fields must be equal on both sides. */
export interface CellSelector {
  readonly target: TargetMatch;
  readonly connect?: ConnectMode;
  readonly protocol?: Protocol;
  readonly poolPercent?: number;
}

/** numerator tps ≥ minRatio × denominator tps, cell by cell (median over repetitions). */
export interface Comparison {
  readonly id: string;
  readonly description: string;
  readonly numerator: CellSelector;
  readonly denominator: CellSelector;
  /** null: report the ratio, judge nothing. */
  readonly minRatio: number | null;
  readonly published?: string;
}

/**
 * E1–E6: the published experiments. DISRUPT: the disruption lab (issue 22). SESSION and LATENCY: what
 * proxylab measures beyond them (issue 24) — the session-state matrix and the latency a pooler adds
 * per statement. Neither DISRUPT nor SESSION/LATENCY is in `all-published`.
 */
export type ExperimentId = 'E1' | 'E2' | 'E3' | 'E4' | 'E5' | 'E6' | 'SESSION' | 'LATENCY' | 'DISRUPT';

/**
 * Where a published experiment comes from, as far as it can be confirmed: a title always; who
 * published it, when and where, each null when not public (never guessed). `note` says what is
 * known when the write-up itself is not public.
 */
export interface ExperimentSource {
  readonly title: string;
  /** Who published it (`EDB`, `AWS`, a GitHub organisation); null when not public. */
  readonly publisher: string | null;
  /** ISO date (`2024-08-29`) or year-month; null for an undated or unknown one. */
  readonly date: string | null;
  /** A public address; null when the write-up is not public. */
  readonly url: string | null;
  readonly note?: string;
}

export interface Scenario {
  /** Unique within its suite; first segment of every step id. */
  readonly name: string;
  /** The published experiment it re-runs; null for a lab's own scenario (lib/config/scenarios.ts). */
  readonly experiment: ExperimentId | null;
  readonly title: string;
  /** The finding this scenario re-runs, in words. */
  readonly finding: string;
  readonly script: ScriptSpec;
  readonly protocols: readonly Protocol[];
  readonly connects: readonly ConnectMode[];
  readonly clients: readonly ClientsSpec[];
  /** pgbench -j; capped at the step's clients. */
  readonly jobs: number;
  /** Exactly one of durationSec (-T) and transactionsPerClient (-t). */
  readonly durationSec?: number;
  readonly transactionsPerClient?: number;
  /** pgbench -R (tps); absent = unthrottled. */
  readonly rate?: number;
  readonly scale: number;
  readonly initFlags: readonly InitFlag[];
  readonly repetitions: number;
  /**
   * The targets it runs against, by what they are or can do (lib/suite/targets.ts), never by kind
   * name: each entry selects every present target it matches, in this order; an entry the run
   * has no target for is skipped.
   */
  readonly targets: readonly TargetMatch[];
  /** Sweep over pool size as % of max_connections (pooled targets only). */
  readonly poolPercents?: readonly number[];
  /**
   * Sweep over the pooler's prepared-statement support, for targets that can switch it (a PgBouncer
   * transaction pool): `off` = max_prepared_statements 0, `on` = 200. A target whose version cannot
   * (PgBouncer < 1.21) records the `on` cell as not available instead of running it.
   */
  readonly preparedStatements?: readonly PreparedStatementsMode[];
  readonly expectations: readonly ExpectationRule[];
  readonly comparisons?: readonly Comparison[];
  /** Overrides the computed per-step timeout. */
  readonly timeoutSec?: number;
  /**
   * A server or pooler that stops during a step (shut down, restarted, crashed: the `server-stopped`
   * messages of lib/suite/server-stop.ts). `infrastructure`: the step is not measured and the run
   * fails, resumable. `measured`: the stop is what the scenario measures and its errors are judged
   * (disruption scenarios, issue 22; E4, whose published finding is a restart under load).
   * A server process the local stack sees end is an infrastructure failure either way.
   * @default 'infrastructure'
   */
  readonly serverStops?: ServerStopPolicy;
  /**
   * A probe scenario (lib/suite/probes.ts): its steps are measured by the probe port of this kind
   * instead of pgbench (a disruption, issue 22). The matrix, ids and expectations are as for pgbench
   * steps; `script`, `jobs`, `scale` and `initFlags` then describe only optional background load.
   * Absent: pgbench steps.
   */
  readonly probe?: ProbeSpec;
  readonly note?: string;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  readonly scenarios: readonly Scenario[];
  /**
   * The poolers `proxylab local` starts for this suite when `--poolers` does not say
   * (`pgbouncer,pgbouncer:2,pgdoorman`: product[:processes], lib/local/pooler.ts). Absent: one PgBouncer.
   */
  readonly localPoolers?: string;
}

/**
 * One experiment of the catalog (lib/suite/experiments/<id>-….ts): its scenarios at published scale
 * (the suite of its own name, and `all-published`), and the scaled-down ones it adds to `quick` and
 * `smoke`.
 */
export interface Experiment {
  readonly id: ExperimentId;
  /**
   * The write-up it comes from (docs/suite.md, the report's findings); null for proxylab's own
   * measurements beyond the published experiments (SESSION, LATENCY, DISRUPT), which re-run no one write-up.
   */
  readonly source: ExperimentSource | null;
  /** Runs the experiment at its published scale: `e1`, …; its scenarios are also in `all-published`. */
  readonly suite: Suite;
  /** Scaled down for the local default `quick` (≈ 1 min each on 2 cores). */
  readonly quick?: readonly Scenario[];
  /** Seconds-long checks for `smoke` (CI). */
  readonly smoke?: readonly Scenario[];
  /** Suites of its own beside the published one (E6's scaled-down `e6-local`, with its own poolers). */
  readonly extraSuites?: readonly Suite[];
}

/** Problems with a scenario's data (all at once); empty when valid. Used by tests and expandSuite. */
export function validateScenario(s: Scenario): string[] {
  const problems: string[] = [];
  const rules: ReadonlyArray<[boolean, string]> = [
    [
      (s.durationSec === undefined) === (s.transactionsPerClient === undefined),
      `${s.name}: exactly one of durationSec and transactionsPerClient must be set`,
    ],
    [
      s.durationSec !== undefined && !(s.durationSec >= 1),
      `${s.name}: durationSec must be ≥ 1, got ${s.durationSec}`,
    ],
    [
      s.transactionsPerClient !== undefined && !(s.transactionsPerClient >= 1),
      `${s.name}: transactionsPerClient must be ≥ 1, got ${s.transactionsPerClient}`,
    ],
    [s.script.parts.length === 0, `${s.name}: script needs at least one part`],
    [
      s.protocols.length === 0 || s.connects.length === 0 || s.clients.length === 0 || s.targets.length === 0,
      `${s.name}: protocols, connects, clients and targets must be non-empty`,
    ],
    [!(s.jobs >= 1), `${s.name}: jobs must be ≥ 1, got ${s.jobs}`],
    [!(s.scale >= 1), `${s.name}: scale must be ≥ 1, got ${s.scale}`],
    [!(s.repetitions >= 1), `${s.name}: repetitions must be ≥ 1, got ${s.repetitions}`],
    [s.rate !== undefined && !(s.rate > 0), `${s.name}: rate must be > 0, got ${s.rate}`],
    [
      (s.poolPercents ?? []).some((p) => !(p >= 1 && p <= 100)),
      `${s.name}: poolPercents must be 1–100, got ${(s.poolPercents ?? []).join(',')}`,
    ],
    [
      s.clients.some((c) => (typeof c === 'number' ? !(c >= 1) : !(c.times > 0))),
      `${s.name}: clients must be ≥ 1 (absolute) or times > 0 (relative)`,
    ],
    [
      s.script.parts.some((p) => 'file' in p && !/^[A-Za-z0-9._-]+\.sql$/.test(p.file.name)),
      `${s.name}: script file names must match [A-Za-z0-9._-]+.sql`,
    ],
    [
      s.script.parts.some((p) => p.weight !== undefined && !(Number.isInteger(p.weight) && p.weight >= 0)),
      `${s.name}: script weights must be integers ≥ 0`,
    ],
  ];
  for (const [bad, message] of rules) if (bad) problems.push(message);
  if (s.probe !== undefined) problems.push(...validateProbe(s.name, s.probe));
  return problems;
}
