/**
 * The suite catalog, as data: the five published experiments (E1–E5) at their published scale,
 * `quick` (the local default) and `smoke` (CI). Pure: no I/O.
 *
 * A scenario is a matrix (targets × clients × protocols × connect modes × pool percents ×
 * repetitions) with one script, duration and scale; `expandSuite` (expand.ts) turns it into steps.
 * Expectations are rules, first match wins; comparisons are scenario-level ratio checks
 * (`judgeScenario`). See docs/suite.md for the catalog in words.
 */
import { UsageError } from '../core/errors';
import type { ServerStopPolicy } from './server-stop';
import type { TargetMatch } from './targets';
import type { ConnectMode, ErrorClass, Outcome, PreparedStatementsMode, Protocol, TargetKind } from './types';

export type BuiltinScript = 'tpcb-like' | 'simple-update' | 'select-only';

/** One script of a scenario: a pgbench builtin or an SQL file whose text travels with the catalog. */
export type ScriptPart =
  | { readonly builtin: BuiltinScript; readonly weight?: number }
  | { readonly file: { readonly name: string; readonly sql: string }; readonly weight?: number };

/** One or more scripts; more than one is a weighted mix (`-b select-only@8 -b tpcb-like@2`). */
export interface ScriptSpec {
  readonly parts: readonly ScriptPart[];
}

/** Clients as an absolute number or relative to the server's max_connections / the pool size. */
export type ClientsSpec = number | { readonly times: number; readonly of: 'maxConnections' | 'poolSize' };

/**
 * Where a step's client count sits relative to the server's max_connections:
 * `above` clients > max_connections; `near` within the reserved-slot margin below it
 * (max(3, 5 %) — superuser_reserved_connections, RDS's reserved slots, pgbench's own setup
 * connection); `below` everything else.
 */
export type MaxConnectionsBand = 'below' | 'near' | 'above';

export type InitFlag = '--unlogged-tables' | '--foreign-keys';

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

export type ExperimentId = 'E1' | 'E2' | 'E3' | 'E4' | 'E5';

export interface Scenario {
  /** Unique within its suite; first segment of every step id. */
  readonly name: string;
  readonly experiment: ExperimentId;
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
  readonly targets: readonly TargetKind[];
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
  readonly note?: string;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  readonly scenarios: readonly Scenario[];
}

// ---------------------------------------------------------------------------------------------
// Building blocks

const SELECT_1: ScriptSpec = { parts: [{ file: { name: 'select-1.sql', sql: 'SELECT 1;\n' } }] };
const SELECT_ONLY: ScriptSpec = { parts: [{ builtin: 'select-only' }] };
const TPCB: ScriptSpec = { parts: [{ builtin: 'tpcb-like' }] };
const MIXED_READ_WRITE: ScriptSpec = {
  parts: [
    { builtin: 'select-only', weight: 8 },
    { builtin: 'tpcb-like', weight: 2 },
  ],
};

const POOLED: TargetMatch = { pooled: true };
const UNPOOLED: TargetMatch = { pooled: false };
const PGBOUNCER: TargetMatch = { pooler: ['pgbouncer'] };
const RDS_PROXY: TargetMatch = { pooler: ['rds-proxy'] };
const MULTIPLEXING_POOL: TargetMatch = { pooled: true, multiplexes: true };
const PREPARED_ERRORS: readonly ErrorClass[] = [
  'prepared-statement-exists',
  'prepared-statement-missing',
  'portal-missing',
];

const DIRECT_ABOVE_REFUSED: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['above'] },
  outcome: 'refused',
  errorClasses: ['too-many-connections'],
  note: 'more clients than max_connections: the server refuses the extra connections',
};
const DIRECT_NEAR_ANY: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['near'] },
  outcome: 'any',
  note: 'within the reserved-slot margin of max_connections: refusal depends on reserved slots and the role',
};
const DIRECT_BELOW_SUCCEEDS: ExpectationRule = {
  when: { target: UNPOOLED, maxConnectionsBand: ['below'] },
  outcome: 'succeeds',
};
const MULTIPLEXED_PREPARED_FAILS: ExpectationRule = {
  when: {
    target: { ...MULTIPLEXING_POOL, carriesPreparedStatements: ['no'] },
    protocols: ['prepared'],
  },
  outcome: 'errors',
  errorClasses: PREPARED_ERRORS,
  note:
    'a transaction pool that does not carry prepared statements (PgBouncer < 1.21, or max_prepared_statements = 0): ' +
    'named statements land on other server connections (`prepared statement "P_0" already exists / does not exist`), even with 2 clients',
};
const PGBOUNCER_SESSION_OVER_POOL: ExpectationRule = {
  when: {
    target: { pooled: true, multiplexes: false },
    connects: ['persistent'],
    clientsAbovePoolSize: true,
  },
  outcome: 'any',
  note: 'session pooling with more persistent clients than the pool: waiting clients never get a server connection; the run can hang (timeout)',
};
const POOLED_SUCCEEDS: ExpectationRule = {
  when: { target: POOLED },
  outcome: 'succeeds',
  note: 'clients beyond the pool queue in the pooler instead of failing',
};

/** k/24 × max_connections, k = 1..20: 50..1000 clients on E5's max_connections = 1200. */
const E5_CLIENTS: readonly ClientsSpec[] = Array.from({ length: 20 }, (_, i) => ({
  times: (i + 1) / 24,
  of: 'maxConnections' as const,
}));

// ---------------------------------------------------------------------------------------------
// The published experiments

const E1: Scenario = {
  name: 'e1',
  experiment: 'E1',
  title: 'Prepared statements through a multiplexing proxy',
  finding:
    'At 1.5 × max_connections with --protocol=prepared the proxy run aborts clients (`portal "" does not exist`, ' +
    '`prepared statement "P_0" already exists`, `perhaps the backend died`) while direct refuses connections; ' +
    'the proxy passes with simple protocol or at ≈ max_connections.',
  script: SELECT_1,
  protocols: ['prepared', 'simple'],
  connects: ['persistent'],
  // "≈ max_connections" is 0.9 × so reserved superuser slots and pgbench's setup connection do
  // not tip the direct cell into refusal (the write-up's direct run used 0.96 ×).
  clients: [
    { times: 0.9, of: 'maxConnections' },
    { times: 1.5, of: 'maxConnections' },
  ],
  jobs: 10,
  durationSec: 20,
  rate: 100000,
  scale: 1,
  initFlags: [],
  repetitions: 1,
  targets: ['direct', 'rds-proxy', 'pgbouncer-transaction'],
  preparedStatements: ['off', 'on'],
  expectations: [
    DIRECT_ABOVE_REFUSED,
    DIRECT_NEAR_ANY,
    DIRECT_BELOW_SUCCEEDS,
    {
      when: {
        target: { carriesPreparedStatements: ['measured'] },
        protocols: ['prepared'],
        maxConnectionsBand: ['above'],
      },
      outcome: 'any',
      published: 'errors: portal-missing, prepared-statement-exists, backend-died (Aurora PG 15.6, 2023)',
      note:
        'AWS announced on 2023-11-10 that RDS Proxy keeps multiplexing extended-protocol connections; whether named ' +
        'statements still break is undocumented, so the outcome is recorded (with DatabaseConnectionsCurrentlySessionPinned), not judged',
    },
    MULTIPLEXED_PREPARED_FAILS,
    { ...POOLED_SUCCEEDS, published: 'proxy passes: ≈4270 tps at 1.0 × prepared, ≈4527 tps at 1.5 × simple' },
  ],
  note: 'The published client was saturated (schedule lag 7–16 s at --rate 100000): steps flag loadGeneratorSaturated.',
};

const E2: Scenario = {
  name: 'e2',
  experiment: 'E2',
  title: 'Client sweep, direct vs proxy',
  finding:
    'Direct tps falls as clients grow (3056 → 358 for 100..500) and fails above max_connections; through the proxy ' +
    'tps is lower at few clients but stable, and clients beyond max_connections queue instead of failing.',
  script: SELECT_ONLY,
  protocols: ['simple'],
  connects: ['persistent'],
  // published: 100..700 clients on max_connections 550 (≈ 0.18 .. 1.27 ×)
  clients: [0.2, 0.4, 0.6, 0.8, 0.9, 1.1, 1.3].map((times) => ({ times, of: 'maxConnections' as const })),
  jobs: 20,
  transactionsPerClient: 10,
  scale: 4,
  initFlags: ['--unlogged-tables', '--foreign-keys'],
  repetitions: 1,
  targets: ['direct', 'rds-proxy', 'pgbouncer-transaction'],
  expectations: [DIRECT_ABOVE_REFUSED, DIRECT_NEAR_ANY, DIRECT_BELOW_SUCCEEDS, POOLED_SUCCEEDS],
  comparisons: [
    {
      id: 'proxy-vs-direct-tps',
      description: 'tps through the pooler relative to direct at the same clients',
      numerator: { target: POOLED },
      denominator: { target: UNPOOLED },
      minRatio: null,
      published: '0.33 × at 100 clients, 1.5 – 3.7 × at 200..500 clients',
    },
  ],
};

const E3: Scenario = {
  name: 'e3',
  experiment: 'E3',
  title: 'Connection churn (-C)',
  finding:
    'A new connection per transaction (-C) costs about 18 × the throughput (8.2 vs 156 tps on Aurora); a pooler in front is the fix.',
  script: TPCB,
  protocols: ['simple'],
  connects: ['per-transaction', 'persistent'],
  clients: [20],
  jobs: 20,
  durationSec: 60,
  scale: 50,
  initFlags: [],
  repetitions: 1,
  targets: ['direct', 'rds-proxy', 'pgbouncer-transaction', 'pgbouncer-session'],
  expectations: [
    DIRECT_ABOVE_REFUSED,
    DIRECT_NEAR_ANY,
    DIRECT_BELOW_SUCCEEDS,
    PGBOUNCER_SESSION_OVER_POOL,
    POOLED_SUCCEEDS,
  ],
  comparisons: [
    {
      id: 'direct-persistent-vs-churn',
      description: 'direct: persistent connections ≥ 3 × the tps of a new connection per transaction',
      numerator: { target: UNPOOLED, connect: 'persistent' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: 3,
      published: '≈ 18 × (156 vs 8.2 tps)',
    },
    {
      id: 'pgbouncer-churn-vs-direct-churn',
      description: '-C through PgBouncer ≥ 3 × the tps of -C direct',
      numerator: { target: PGBOUNCER, connect: 'per-transaction' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: 3,
    },
    {
      id: 'rds-proxy-churn-vs-direct-churn',
      description:
        '-C through RDS Proxy relative to -C direct (each new client connection still pays TLS to the proxy)',
      numerator: { target: RDS_PROXY, connect: 'per-transaction' },
      denominator: { target: UNPOOLED, connect: 'per-transaction' },
      minRatio: null,
    },
  ],
  note: 'Turn on log_connections / log_disconnections; Performance Insights counters xact_commit, total_auth_attempts, numbackends.',
};

const E4: Scenario = {
  name: 'e4',
  experiment: 'E4',
  title: 'Pool size as a share of max_connections',
  finding:
    'Two proxies at MaxConnectionsPercent 50 % and 25 % drove a smaller instance out of memory (restart); the larger ' +
    'instance was stable. Re-run as a pool-percent sweep under a mixed read/write workload; watch FreeableMemory, ' +
    'CPU, DatabaseConnections and restarts per step.',
  script: MIXED_READ_WRITE,
  protocols: ['simple'],
  connects: ['persistent'],
  clients: [{ times: 1.5, of: 'maxConnections' }],
  jobs: 20,
  durationSec: 120,
  scale: 50,
  initFlags: [],
  repetitions: 1,
  targets: ['rds-proxy', 'pgbouncer-transaction'],
  poolPercents: [25, 50, 75, 100],
  // The published finding is the database restarting (out of memory) under the load: that restart's
  // errors are the measurement here, and break the `succeeds` rule below.
  serverStops: 'measured',
  expectations: [
    {
      when: { target: MULTIPLEXING_POOL },
      outcome: 'succeeds',
      note: 'clients queue for the pool at every percent; a restart of the database (out of memory) breaks this',
    },
  ],
  comparisons: [
    {
      id: 'pool50-vs-pool25',
      description: 'tps at pool 50 % relative to 25 %',
      numerator: { target: MULTIPLEXING_POOL, poolPercent: 50 },
      denominator: { target: MULTIPLEXING_POOL, poolPercent: 25 },
      minRatio: null,
    },
    {
      id: 'pool100-vs-pool25',
      description: 'tps at pool 100 % relative to 25 %',
      numerator: { target: MULTIPLEXING_POOL, poolPercent: 100 },
      denominator: { target: MULTIPLEXING_POOL, poolPercent: 25 },
      minRatio: null,
    },
  ],
  note: 'The published case was a real application; this sweep is its reproducible stand-in. Locally the percent sizes PgBouncer pools.',
};

const E5_EXPECTATIONS: readonly ExpectationRule[] = [
  DIRECT_ABOVE_REFUSED,
  DIRECT_NEAR_ANY,
  DIRECT_BELOW_SUCCEEDS,
  PGBOUNCER_SESSION_OVER_POOL,
  POOLED_SUCCEEDS,
];
const E5_COMPARISONS: readonly Comparison[] = [
  {
    id: 'pooler-churn-vs-direct-churn',
    description: 'with connection overhead (-C): PgBouncer ≥ 2 × direct tps',
    numerator: { target: PGBOUNCER, connect: 'per-transaction' },
    denominator: { target: UNPOOLED, connect: 'per-transaction' },
    minRatio: 2,
    published: '> 750 tps through PgBouncer vs ≈ 200 direct at high clients',
  },
  {
    id: 'pooler-vs-direct-persistent',
    description: 'without connection overhead: PgBouncer relative to direct',
    numerator: { target: PGBOUNCER, connect: 'persistent' },
    denominator: { target: UNPOOLED, connect: 'persistent' },
    minRatio: null,
    published: 'direct wins up to ≈ 200–300 clients',
  },
  {
    id: 'rds-proxy-churn-vs-direct-churn',
    description:
      'with connection overhead (-C): RDS Proxy relative to direct (the cloud stand-in for the published PgBouncer)',
    numerator: { target: RDS_PROXY, connect: 'per-transaction' },
    denominator: { target: UNPOOLED, connect: 'per-transaction' },
    minRatio: null,
  },
];

const E5_SHORT: Scenario = {
  name: 'e5-short',
  experiment: 'E5',
  title: 'PgBouncer in front of a big server: short bursts, best of three',
  finding:
    'With connection overhead the pooler holds > 750 tps while direct falls to ≈ 200; without it direct wins up to ' +
    '≈ 200–300 clients; a pooler on its own host beats one on the database host.',
  script: TPCB,
  protocols: ['simple'],
  connects: ['persistent', 'per-transaction'],
  clients: E5_CLIENTS,
  jobs: 20,
  durationSec: 60,
  scale: 100,
  initFlags: [],
  repetitions: 3,
  targets: ['direct', 'pgbouncer-session', 'rds-proxy'],
  expectations: E5_EXPECTATIONS,
  comparisons: E5_COMPARISONS,
  note: 'Published: caches flushed and server restarted between runs; the lab resets the pool but does not restart the server.',
};

const E5_LONG: Scenario = {
  ...E5_SHORT,
  name: 'e5-long',
  title: 'PgBouncer in front of a big server: 10-minute runs',
  clients: [4, 8, 16].map((k) => ({ times: k / 24, of: 'maxConnections' as const })),
  durationSec: 600,
  repetitions: 1,
};

// ---------------------------------------------------------------------------------------------
// Local suites (run against a throwaway server with max_connections ≈ 40, PgBouncer pools ≈ 10)
// They name rds-proxy too, so the same suite on a lab (the default lab runs `quick`) measures the
// proxies as well as direct; a target kind the run does not have is skipped at expansion.

const LOCAL_AND_CLOUD: readonly TargetKind[] = ['direct', 'pgbouncer-transaction', 'rds-proxy'];

const QUICK_E1: Scenario = {
  ...E1,
  name: 'quick-e1',
  title: 'E1 scaled down: prepared vs simple through a transaction pool, below and above max_connections',
  clients: [
    { times: 0.5, of: 'maxConnections' },
    { times: 1.5, of: 'maxConnections' },
  ],
  jobs: 2,
  durationSec: 10,
  rate: undefined,
  targets: LOCAL_AND_CLOUD,
  note: 'Unthrottled locally: the point is the error classes, not the saturated client.',
};

const QUICK_E2: Scenario = {
  ...E2,
  name: 'quick-e2',
  title: 'E2 scaled down: direct vs pooled below and above max_connections',
  clients: [
    { times: 0.5, of: 'maxConnections' },
    { times: 1.5, of: 'maxConnections' },
  ],
  jobs: 2,
  transactionsPerClient: 500,
  scale: 1,
  initFlags: [],
  targets: LOCAL_AND_CLOUD,
};

const QUICK_E3: Scenario = {
  ...E3,
  name: 'quick-e3',
  title: 'E3 scaled down: connection churn (-C) direct vs through PgBouncer',
  script: SELECT_1,
  // as many clients as the pool has server connections, so persistent session pooling does not queue forever
  clients: [{ times: 1, of: 'poolSize' }],
  jobs: 2,
  durationSec: 10,
  scale: 1,
  targets: [...LOCAL_AND_CLOUD, 'pgbouncer-session'],
  note: 'SELECT 1 instead of TPC-B so connection cost dominates on a 2-core machine (measured 7–22 × locally).',
};

const SMOKE_PREPARED: Scenario = {
  ...QUICK_E1,
  name: 'smoke-prepared',
  title:
    'Prepared protocol through a transaction pool: fails with max_prepared_statements = 0 (and on PgBouncer < 1.21), succeeds with it on; simple succeeds',
  clients: [5],
  protocols: ['prepared', 'simple'],
  durationSec: 3,
  targets: ['pgbouncer-transaction', 'rds-proxy'],
};

const SMOKE_MAX_CONNECTIONS: Scenario = {
  ...QUICK_E2,
  name: 'smoke-max-connections',
  title: 'Direct above max_connections is refused, pooled with the same clients succeeds',
  script: SELECT_1,
  clients: [{ times: 1.5, of: 'maxConnections' }],
  transactionsPerClient: undefined,
  durationSec: 3,
  targets: LOCAL_AND_CLOUD,
  comparisons: [],
};

const SMOKE_CHURN: Scenario = {
  ...QUICK_E3,
  name: 'smoke-churn',
  title: '-C churn several times faster through the pooler than direct',
  clients: [5],
  connects: ['per-transaction'],
  durationSec: 3,
  targets: LOCAL_AND_CLOUD,
  comparisons: (QUICK_E3.comparisons ?? []).filter(
    (c) => c.id === 'pgbouncer-churn-vs-direct-churn' || c.id === 'rds-proxy-churn-vs-direct-churn',
  ),
};

// ---------------------------------------------------------------------------------------------
// Suites

const SUITES: readonly Suite[] = [
  {
    name: 'quick',
    description:
      'Local default (≈ 2–3 min on 2 cores): E1–E3 findings scaled down to max_connections ≈ 40 and a small pool.',
    scenarios: [QUICK_E1, QUICK_E2, QUICK_E3],
  },
  {
    name: 'smoke',
    description:
      'CI (~15–20 s incl. init on 2 cores): prepared via transaction pool fails, direct above max_connections refused, -C churn faster pooled.',
    scenarios: [SMOKE_PREPARED, SMOKE_MAX_CONNECTIONS, SMOKE_CHURN],
  },
  {
    name: 'e1',
    description: 'E1 at published scale: prepared statements through a multiplexing proxy.',
    scenarios: [E1],
  },
  {
    name: 'e2',
    description: 'E2 at published scale: client sweep direct vs proxy, -S -t 10.',
    scenarios: [E2],
  },
  {
    name: 'e3',
    description: 'E3 at published scale: connection churn, TPC-B -T 60 -c 20 with and without -C.',
    scenarios: [E3],
  },
  {
    name: 'e4',
    description: 'E4: pool-percent sweep (25/50/75/100 %) under a mixed read/write workload.',
    scenarios: [E4],
  },
  {
    name: 'e5',
    description:
      'E5: TPC-B 50..1000 clients (relative to max_connections), best of three, with and without -C.',
    scenarios: [E5_SHORT, E5_LONG],
  },
  {
    name: 'all-published',
    description: 'E1–E5 at published scale, one after the other (hours on a large lab).',
    scenarios: [E1, E2, E3, E4, E5_SHORT, E5_LONG],
  },
];

export const SUITE_NAMES: readonly string[] = SUITES.map((s) => s.name);

export function getSuite(name: string): Suite {
  const suite = SUITES.find((s) => s.name === name);
  if (!suite) throw new UsageError(`unknown suite "${name}"; valid suites: ${SUITE_NAMES.join(', ')}`);
  return suite;
}

/** A label for StepParams.script: `select-only`, `select-1.sql`, `mixed(select-only@8,tpcb-like@2)`. */
export function scriptLabel(script: ScriptSpec): string {
  const names = script.parts.map((p) => ('builtin' in p ? p.builtin : p.file.name));
  if (script.parts.length === 1) return names[0] ?? '';
  return `mixed(${script.parts.map((p, i) => `${names[i]}@${p.weight ?? 1}`).join(',')})`;
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
  return problems;
}
