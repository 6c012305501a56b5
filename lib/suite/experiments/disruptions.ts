/**
 * DISRUPT: what happens to the clients' connections when the database or the pooler goes away — a
 * restart, a backend kill, a planned pause, a pooler's rolling restart, a failover — direct vs
 * through a pool, per client, with error and stall windows and a durability check (issue 22).
 *
 * Each scenario is a disruption probe (lib/suite/disruption.ts): probe clients on every selected
 * target, in both connect modes (a persistent connection that reconnects; a connection per write),
 * write into a ledger every interval; the disruption comes at T0 after the warm-up, and the clients
 * keep writing through the recovery window. Every step of a repetition sees the same disruption.
 *
 * Verdicts (lib/suite/disruption-verdict.ts), by what the target can do:
 * - hard, every scenario: no acknowledged write is missing from the ledger afterwards;
 * - expected (held/broke): direct clients see errors through a restart, a backend kill or a
 *   failover; PAUSE/RESUME around a server restart gives a stall and no error through the pool;
 *   a pooler whose old process stops listening (PgBouncer ≥ 1.23) restarts without an error; the
 *   database's clients are untouched by a pooler restart;
 * - informational, the figures are the result: how a pool fares against direct (RDS Proxy's error
 *   window vs direct's; PgBouncer's recovery vs `server_login_retry`, 15 s by default), idle
 *   proxy connections surviving a failover, stalls that replace errors.
 * Sources are in each rule's `published`; docs/disruptions.md explains each figure.
 */
import {
  defaultClientTimeouts,
  type ClientTimeouts,
  type DisruptionAction,
  type DisruptionProbe,
  type ShutdownMode,
} from '../disruption';
import { resolveLoad, type BackgroundLoadInput } from '../disruption-load';
import type { ExpectationRule, Experiment, Scenario, Suite } from '../scenario';
import type { TargetMatch } from '../targets';
import { PGBOUNCER_SETTINGS } from '../../products/pgbouncer/settings';
import { defaultAt, settingSpec } from '../../products/settings';
import {
  DIRECT,
  MANAGED_POOL,
  SELECT_1,
  SELF_HOSTED_TRANSACTION_POOL,
  SESSION_POOL,
  UNPOOLED,
} from './common';

const SOURCES = {
  shutdown:
    'PostgreSQL docs, "Shutting Down the Server": fast shutdown (SIGINT) and immediate (SIGQUIT) end every session (SQLSTATE 57P01) and refuse connections until the server is up again (57P03 while it starts)',
  terminate:
    'PostgreSQL docs, pg_terminate_backend: the session ends with 57P01 "terminating connection due to administrator command"',
  auroraProbe:
    'a 1 s psycopg2 probe saw 10–16 s outages through an Aurora PostgreSQL failover, connecting direct',
  proxyHang:
    'a 1 s probe through RDS Proxy during an RDS Multi-AZ change saw the errors turn into a ~32 s hang ("the proxy conceals downtime behind a longer timeout")',
  proxyDocs:
    'AWS, RDS Proxy docs: the proxy keeps idle client connections open through a failover and shortens client recovery by up to 79 % (Aurora MySQL) and 32 % (RDS MySQL); no PostgreSQL figure is published',
  pause:
    'PgBouncer docs (usage.md), PAUSE/RESUME: PAUSE waits for server connections to be released and closes them, clients wait instead of failing until RESUME — the planned-maintenance recipe',
  loginRetry:
    'PgBouncer docs (config.md): server_login_retry (default 15 s) — after a failed login to the server the pool waits this long before trying again',
  rolling:
    'PgBouncer changelog 1.23.0 (pgbouncer/pgbouncer#902): SIGTERM became a "super safe shutdown" that stops listening and waits for clients, which "allows rolling restarts of multiple PgBouncer processes … listening on the same port using so_reuseport"; before 1.23 the safe shutdown (SIGINT) kept listening',
  minorAurora:
    'Aurora User Guide, "Minor version upgrades and zero-downtime patching" (Aurora PostgreSQL): an in-place minor upgrade restarts the engine; zero-downtime patching tries to keep client connections through it and falls back to a restart when it cannot — AWS publishes no error-window figure',
  minorRds:
    'RDS User Guide, "Upgrading the PostgreSQL DB engine for Amazon RDS": a minor upgrade applied immediately takes the instance offline while the engine is upgraded (a Multi-AZ primary and standby are upgraded together) — no figure is published',
  blueGreenProxy:
    'RDS and Aurora User Guides, "Using RDS Proxy with Blue/Green Deployments": during the switchover the blue database is read-only and the proxy keeps routing to it; PostgreSQL queries get "AdminShutdown terminating connection due to administrator command"; existing connections to the proxy are dropped when the green is promoted and must be re-established — no figure is published for PostgreSQL clients',
  blueGreenSwitchover:
    'RDS and Aurora User Guides, "Switching a blue/green deployment": the switchover "typically takes under a minute" (botocore rds model, CreateBlueGreenDeployment); SwitchoverTimeout default 300 s, after which every change is rolled back; clients reaching the database by its endpoint follow a DNS change',
  aws: 'AWS resilience guidance (guidance for resilient applications with Aurora and RDS Proxy) probes at 20 requests/s and counts failed requests, to the second',
} as const;

/** Every target the lab has that takes writes, pools first where a pool is the point. */
const ALL_WRITE_TARGETS: readonly TargetMatch[] = [
  DIRECT,
  MANAGED_POOL,
  SELF_HOSTED_TRANSACTION_POOL,
  SESSION_POOL,
];

const NOTHING_LOST_NOTE = 'hard, in every disruption: no acknowledged write may be missing from the ledger';

/**
 * After the longest wait the targets are known to impose, a window needs this long to see writes at
 * their usual latency again (and so to call the disruption over).
 */
const AFTER_LONGEST_WAIT_MS = 2000;

/**
 * A disruption scenario with the probe's timing: warm-up, recovery window and the clients' own
 * timeouts. `recoveryHintMs`: the longest wait its targets are known to impose after the disruption
 * itself is over (PgBouncer holds its clients through `server_login_retry` after a failed login);
 * the window must be long enough to see it end, and the client timeouts default to the window, so a
 * wait the window can see end is a stall, never cut short by the probe (issue 39). Until the targets'
 * settings say it, the hint is the scenario's.
 */
function disruption(input: {
  readonly name: string;
  readonly title: string;
  readonly finding: string;
  readonly action: DisruptionAction;
  readonly shutdown?: ShutdownMode;
  readonly switchoverTimeoutSec?: number;
  readonly targets: readonly TargetMatch[];
  readonly expectations: readonly ExpectationRule[];
  readonly warmupSec: number;
  readonly recoverySec: number;
  readonly recoveryHintMs: number;
  readonly repetitions: number;
  readonly intervalMs?: number;
  /** Default: the recovery window (defaultClientTimeouts). */
  readonly clientTimeouts?: ClientTimeouts;
  readonly clients?: number;
  /** pgbench through every probed target during the group (lib/suite/disruption-load.ts); absent: none. */
  readonly load?: BackgroundLoadInput;
  readonly note?: string;
}): Scenario {
  if (input.recoverySec * 1000 < input.recoveryHintMs + AFTER_LONGEST_WAIT_MS)
    throw new Error(
      `${input.name}: recoverySec ${input.recoverySec} cannot see a ${input.recoveryHintMs} ms wait end (needs ≥ ${(input.recoveryHintMs + AFTER_LONGEST_WAIT_MS) / 1000} s)`,
    );
  const load = input.load === undefined ? undefined : resolveLoad(`${input.name}: load`, input.load);
  if (load !== undefined && 'problems' in load) throw new Error(load.problems.join('; '));
  const probe: DisruptionProbe = {
    kind: 'disruption',
    disruption: {
      action: input.action,
      shutdown: input.shutdown ?? null,
      ...(input.switchoverTimeoutSec !== undefined
        ? { switchoverTimeoutSec: input.switchoverTimeoutSec }
        : {}),
    },
    intervalMs: input.intervalMs ?? 100,
    warmupSec: input.warmupSec,
    recoverySec: input.recoverySec,
    clientTimeouts: input.clientTimeouts ?? defaultClientTimeouts(input.recoverySec),
    ...(load !== undefined ? { load: load.load } : {}),
  };
  return {
    name: input.name,
    experiment: 'DISRUPT',
    title: input.title,
    finding: input.finding,
    // The probe writes; pgbench's script here is not run: a background load is the probe's `load`.
    script: SELECT_1,
    protocols: ['extended'],
    connects: ['persistent', 'per-transaction'],
    clients: [input.clients ?? 2],
    jobs: 1,
    durationSec: input.warmupSec + input.recoverySec,
    scale: 1,
    initFlags: [],
    repetitions: input.repetitions,
    targets: input.targets,
    serverStops: 'measured',
    probe,
    expectations: input.expectations,
    ...(input.note ? { note: input.note } : {}),
  };
}

const POOLED_INFORMATIONAL: ExpectationRule = {
  when: { target: { pooled: true } },
  outcome: 'any',
  published: `${SOURCES.proxyDocs}; ${SOURCES.loginRetry}`,
  note: `informational: what a client of the pool lived through, beside direct's (${NOTHING_LOST_NOTE})`,
};

const DIRECT_SEES_RESTART: ExpectationRule = {
  when: { target: UNPOOLED, connects: ['persistent'] },
  outcome: 'errors',
  published: SOURCES.shutdown,
  note: 'a direct persistent client loses its session: its next write fails',
};

/**
 * A direct client that connects for each write only sees a local outage that lasts longer than the
 * gap between two of its writes: a fast restart on a quiet machine is over in ≈ 0.1 s, the probe's
 * interval (measured: 130 of 130 writes acknowledged in one repetition, errors in the others). So
 * locally its figures are the result; in the cloud (outages of seconds) it is judged.
 */
const DIRECT_PER_WRITE_LOCAL: ExpectationRule = {
  when: { target: UNPOOLED, connects: ['per-transaction'] },
  outcome: 'any',
  published: SOURCES.shutdown,
  note: 'informational: an outage shorter than the gap between two writes falls between them (nothing to see is not a failure)',
};

/** PgBouncer's own server_login_retry, in ms (its settings catalogue): the wait a pool imposes after a failed login. */
const PGBOUNCER_DEFAULT_LOGIN_RETRY_MS = (() => {
  const spec = settingSpec(PGBOUNCER_SETTINGS, 'server_login_retry');
  const sec = spec === undefined ? null : defaultAt(spec, null);
  if (typeof sec !== 'number')
    throw new Error('the PgBouncer catalogue has no numeric server_login_retry default');
  return sec * 1000;
})();

/**
 * Local timing: 5 s windows suit targets that are back within 2 s (direct, a PgBouncer with
 * `server_login_retry: 2`). A local run lengthens each window to its targets' recovery bound, read
 * from their effective settings (lib/local/lab-poolers.ts sizeRecoveryWindows: PgBouncer's default
 * 15 s makes it 18 s), and default client timeouts follow the window.
 */
const LOCAL = { warmupSec: 1.5, recoverySec: 5, repetitions: 3, recoveryHintMs: 2000 } as const;
/** Local events that are over in well under a second (a kill, a pooler restart) need a shorter window. */
const LOCAL_SHORT = { ...LOCAL, recoverySec: 4 } as const;
/** Crash recovery after an immediate shutdown took 4–6 s on a loaded 2-core machine. */
const LOCAL_LONG = { ...LOCAL, recoverySec: 9 } as const;

function restart(shutdown: ShutdownMode): Scenario {
  return disruption({
    name: `disrupt-restart-${shutdown}`,
    title: `PostgreSQL restart (${shutdown} shutdown) under probe clients`,
    finding:
      shutdown === 'fast'
        ? 'A fast restart ends every session and refuses connections until the server is up: direct clients see errors; a pooler may turn them into a wait or pass them on.'
        : 'An immediate restart (as a crash) adds crash recovery to the outage; nothing acknowledged may be lost.',
    action: 'postgres-restart',
    shutdown,
    targets: ALL_WRITE_TARGETS,
    expectations: [DIRECT_SEES_RESTART, DIRECT_PER_WRITE_LOCAL, POOLED_INFORMATIONAL],
    ...(shutdown === 'immediate' ? LOCAL_LONG : LOCAL),
  });
}

const BACKEND_TERMINATE = disruption({
  name: 'disrupt-terminate',
  title: 'pg_terminate_backend of every client backend',
  finding:
    'Killing the server sessions drops a direct persistent client (57P01); a transaction pool replaces an idle server connection before its client notices.',
  action: 'backend-terminate',
  targets: ALL_WRITE_TARGETS,
  expectations: [
    {
      when: { target: UNPOOLED, connects: ['persistent'] },
      outcome: 'errors',
      errorClasses: ['server-stopped'],
      published: SOURCES.terminate,
    },
    {
      when: { target: UNPOOLED },
      outcome: 'any',
      note: 'a client that connects for each write holds a session only for milliseconds: it is rarely caught',
    },
    POOLED_INFORMATIONAL,
  ],
  ...LOCAL_SHORT,
});

const POOLER_PAUSE = disruption({
  name: 'disrupt-pause',
  title: 'PAUSE, restart PostgreSQL, RESUME (planned maintenance through the pooler)',
  finding:
    "Around PAUSE/RESUME a server restart is a stall for the pool's clients, not an error; direct clients (the control) see the restart.",
  action: 'pooler-pause',
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL],
  expectations: [
    DIRECT_SEES_RESTART,
    DIRECT_PER_WRITE_LOCAL,
    {
      when: { target: SELF_HOSTED_TRANSACTION_POOL },
      outcome: 'succeeds',
      published: SOURCES.pause,
      note: 'a stall, no error',
    },
  ],
  // PAUSE makes a client wait for the restart by design: its attempt may take as long as the restart
  // (over 2 s on a loaded machine): the client timeouts default to the window, so that wait is a stall
  ...LOCAL,
});

const POOLER_RESTART = disruption({
  name: 'disrupt-pooler-restart',
  title: 'Rolling restart of the pooler (so_reuseport: new process, old one retired)',
  finding:
    'A new process on the port and the old one retired with the signal its version documents: since PgBouncer 1.23 no client sees an error; before, the old process keeps listening while it shuts down.',
  action: 'pooler-restart',
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL],
  expectations: [
    { when: { target: UNPOOLED }, outcome: 'succeeds', note: 'control: the server is not touched' },
    {
      when: { target: { pooled: true, managed: false, rollingRestart: ['stops-listening'] } },
      outcome: 'succeeds',
      published: SOURCES.rolling,
      note: "the old process stops listening and keeps its clients until they leave: no refused connection, no error (with Linux moving the closed listener's queued connections, net.ipv4.tcp_migrate_req = 1; else one connecting at that instant may be reset, see the step's events)",
    },
    {
      when: { target: { pooled: true, managed: false } },
      outcome: 'any',
      published: SOURCES.rolling,
      note: 'before 1.23 (or version unknown) the safe shutdown keeps listening: what clients see is measured, not predicted',
    },
  ],
  ...LOCAL_SHORT,
});

const PRIMARY_FAILOVER = disruption({
  name: 'disrupt-failover',
  title: 'Primary stopped, streaming standby promoted, pooler re-pointed',
  finding:
    'Direct clients (libpq multi-host, target_session_attrs=read-write) see errors until the standby is promoted; the pooler passes errors on until it is re-pointed; nothing acknowledged is lost.',
  action: 'primary-failover',
  targets: ALL_WRITE_TARGETS,
  expectations: [
    {
      when: { target: UNPOOLED, connects: ['persistent'] },
      outcome: 'errors',
      published: `${SOURCES.auroraProbe}; ${SOURCES.aws}`,
      note: 'its session on the stopped primary is gone: refused, then read-only (25006) until the promotion',
    },
    DIRECT_PER_WRITE_LOCAL,
    POOLED_INFORMATIONAL,
  ],
  ...LOCAL,
  note: 'the local standby is asynchronous; the primary stops with a fast shutdown, which sends its WAL to the standby before it exits',
});

/**
 * A fast restart under pgbench's tpcb-like at 4 clients per target (issue 42): what the probes see
 * when the server also carries a load, and what the load lives through (its tps per second, its
 * aborted clients) on the same timeline. Direct and the transaction pool only, to stay seconds long.
 */
const RESTART_UNDER_LOAD = disruption({
  name: 'disrupt-restart-under-load',
  title: 'PostgreSQL restart (fast shutdown) under a tpcb-like background load',
  finding:
    "A restart under load: the probes' error and stall windows beside pgbench's throughput, whose direct clients lose their sessions (pgbench aborts them) while a pool's may wait; nothing acknowledged may be lost.",
  action: 'postgres-restart',
  shutdown: 'fast',
  targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL],
  expectations: [DIRECT_SEES_RESTART, DIRECT_PER_WRITE_LOCAL, POOLED_INFORMATIONAL],
  load: { scenario: 'tpcb-like', clients: 4 },
  ...LOCAL,
});

/** The local disruption suite: every local disruption, 3 repetitions each. */
export const LOCAL_DISRUPTIONS: readonly Scenario[] = [
  restart('fast'),
  restart('immediate'),
  BACKEND_TERMINATE,
  POOLER_PAUSE,
  POOLER_RESTART,
  PRIMARY_FAILOVER,
  RESTART_UNDER_LOAD,
];

/**
 * Cloud timing: failovers take tens of seconds; the window must see the clients back. The lab's
 * PgBouncer keeps server_login_retry at its default, 15 s; RDS Proxy was seen holding clients ~32 s.
 */
const CLOUD = {
  warmupSec: 20,
  recoverySec: 120,
  repetitions: 3,
  intervalMs: 100,
  recoveryHintMs: 32_000,
} as const;

const CLOUD_FAILOVER_RULES: readonly ExpectationRule[] = [
  {
    when: { target: UNPOOLED },
    outcome: 'errors',
    published: `${SOURCES.auroraProbe}; ${SOURCES.aws}`,
  },
  {
    when: { target: MANAGED_POOL },
    outcome: 'any',
    published: `${SOURCES.proxyDocs}; ${SOURCES.proxyHang}`,
    note: "informational: RDS Proxy's error and stall windows beside direct's",
  },
  POOLED_INFORMATIONAL,
];

/** The cloud `failover` suite: the lab's own database failed over or rebooted, every target probed. */
export const CLOUD_DISRUPTIONS: readonly Scenario[] = [
  disruption({
    name: 'failover-aurora',
    title: 'Aurora failover (FailoverDBCluster to the reader)',
    finding:
      'The writer moves to the reader: how long each client is refused, stalled or read-only, and whether anything acknowledged is lost.',
    action: 'aurora-failover',
    targets: ALL_WRITE_TARGETS,
    expectations: CLOUD_FAILOVER_RULES,
    ...CLOUD,
  }),
  disruption({
    name: 'failover-rds',
    title: 'RDS Multi-AZ failover (RebootDBInstance with ForceFailover)',
    finding:
      "The standby in the other zone takes over: each client's error and stall windows, direct vs RDS Proxy vs PgBouncer.",
    action: 'rds-reboot-failover',
    targets: ALL_WRITE_TARGETS,
    expectations: CLOUD_FAILOVER_RULES,
    ...CLOUD,
  }),
  disruption({
    name: 'reboot-rds',
    title: 'RDS reboot without failover (RebootDBInstance)',
    finding: 'A reboot in place: every client is refused until the instance is back.',
    action: 'rds-reboot',
    targets: ALL_WRITE_TARGETS,
    expectations: CLOUD_FAILOVER_RULES,
    ...CLOUD,
  }),
  disruption({
    name: 'pooler-restart-cloud',
    title: "Rolling restart of the lab's PgBouncers",
    finding: 'The pooler host restarts its processes one by one; the database is not touched.',
    action: 'pooler-restart',
    targets: [DIRECT, SELF_HOSTED_TRANSACTION_POOL, SESSION_POOL],
    expectations: POOLER_RESTART.expectations,
    warmupSec: 10,
    recoverySec: 30,
    // PgBouncer's default server_login_retry (its catalogue)
    recoveryHintMs: PGBOUNCER_DEFAULT_LOGIN_RETRY_MS,
    repetitions: 3,
  }),
];

/**
 * The disruptions teams schedule (issue 42): an Aurora or RDS minor-version upgrade applied
 * immediately. Once per run: the upgrade leaves the lab on the new version, and a second repetition
 * would need yet another minor version. Its engine downtime comes minutes after the API call (AWS
 * first checks and prepares the upgrade), so the window is long.
 */
const MINOR_UPGRADE: Scenario = disruption({
  name: 'minor-upgrade',
  title: 'Minor-version upgrade applied immediately (ModifyDBCluster / ModifyDBInstance EngineVersion)',
  finding:
    'The engine restarts on the next minor version: what each client lives through, direct vs RDS Proxy vs PgBouncer, and whether anything acknowledged is lost. The lab stays on the new version.',
  action: 'minor-upgrade',
  targets: ALL_WRITE_TARGETS,
  expectations: [
    {
      when: { target: UNPOOLED },
      outcome: 'any',
      published: `${SOURCES.minorAurora}; ${SOURCES.minorRds}`,
      note: `informational: no source gives a figure for the clients of a minor upgrade (${NOTHING_LOST_NOTE})`,
    },
    {
      when: { target: MANAGED_POOL },
      outcome: 'any',
      published: `${SOURCES.minorAurora}; ${SOURCES.proxyDocs}`,
      note: "informational: RDS Proxy's error and stall windows beside direct's (no published figure for PostgreSQL)",
    },
    POOLED_INFORMATIONAL,
  ],
  ...CLOUD,
  recoverySec: 900,
  repetitions: 1,
  note: 'once per run: the lab stays on the new version (plan names both versions)',
});

/**
 * The local stand-in of `minor-upgrade` (`proxylab local --suite planned`, issue 42): the same
 * scenario name and informational expectations, titled by what the local stack does instead
 * (lib/local/disruptions.ts `minorUpgradeStandIn`: a restart onto another installed minor build of
 * the same major, else a fast restart), with local timing — the engine is back in well under a
 * second here, while the cloud window waits out AWS's preparation. Once, as in the cloud.
 */
export function minorUpgradeStandInScenario(standIn: string): Scenario {
  return disruption({
    name: MINOR_UPGRADE.name,
    title: `Minor-version upgrade, local ${standIn}`,
    finding:
      'What a client lives through when the engine restarts, as it does in a minor upgrade: direct vs through the pool, and whether anything acknowledged is lost. No AWS upgrade is made or reproduced.',
    action: 'minor-upgrade',
    targets: ALL_WRITE_TARGETS,
    expectations: MINOR_UPGRADE.expectations,
    ...LOCAL,
    repetitions: 1,
    note: `local ${standIn}`,
  });
}

/**
 * A Blue/Green switchover behind RDS Proxy (issue 42): the deployment is created before the group
 * (not measured; it copies the database, minutes to tens of minutes), switched over at T0 with
 * AWS's default SwitchoverTimeout, then deleted with the old blue database. Once per run: each
 * repetition would need a new deployment (a second database for its lifetime).
 */
const BLUE_GREEN: Scenario = disruption({
  name: 'blue-green-switchover',
  title: 'Blue/Green switchover (SwitchoverBlueGreenDeployment), behind RDS Proxy and direct',
  finding:
    "The lab's database is replaced by its green copy: what each client lives through — direct (DNS) vs RDS Proxy vs PgBouncer — and whether anything acknowledged is lost. No figure is published for PostgreSQL clients through RDS Proxy.",
  action: 'blue-green-switchover',
  switchoverTimeoutSec: 300,
  targets: ALL_WRITE_TARGETS,
  expectations: [
    {
      when: { target: UNPOOLED },
      outcome: 'any',
      published: SOURCES.blueGreenSwitchover,
      note: `informational: no source gives a client-side figure for PostgreSQL (${NOTHING_LOST_NOTE})`,
    },
    {
      when: { target: MANAGED_POOL },
      outcome: 'any',
      published: `${SOURCES.blueGreenProxy}; ${SOURCES.proxyDocs}`,
      note: "informational: RDS Proxy's error and stall windows beside direct's — the figure this scenario exists for",
    },
    POOLED_INFORMATIONAL,
  ],
  ...CLOUD,
  // the switchover's own bound (300 s) and the DNS change after it fit in the window
  recoverySec: 420,
  repetitions: 1,
  note: "once per run: the lab's database is replaced by its green copy and the old blue is deleted (plan names the second database's cost)",
});

/** The Blue/Green suite on AWS: its own suite, since it runs a second database for its lifetime. */
const BLUE_GREEN_SUITE: Suite = {
  name: 'blue-green',
  description:
    "Blue/Green switchover (≈ 30–60 min, most of it creating the green copy, not measured): CreateBlueGreenDeployment of the lab's database, SwitchoverBlueGreenDeployment at T0, every target probed — direct and through RDS Proxy; the deployment and the old blue are deleted afterwards. Needs an RDS Proxy in the lab.",
  scenarios: [BLUE_GREEN],
};

/** The planned-disruption suite on AWS: what a change board schedules, each only where the lab can undergo it. */
const PLANNED_SUITE: Suite = {
  name: 'planned',
  description:
    "Planned cloud disruptions (≈ 20 min): a minor-version upgrade of the lab's database applied immediately, once (the lab stays on the new version) — every target probed; validate refuses a lab whose version has no newer minor the kit knows. Locally (≈ 30 s) a stand-in: a restart onto another installed minor build of the same PostgreSQL major, else a fast restart, named as such.",
  scenarios: [MINOR_UPGRADE],
};

export const DISRUPT_EXPERIMENT: Experiment = {
  id: 'DISRUPT',
  // proxylab's own measurement: each expectation cites its source (SOURCES above) in `published`
  source: null,
  suite: {
    name: 'failover',
    description:
      'Cloud disruptions (≈ 8–10 min per disruption × 3 repetitions): Aurora failover, RDS Multi-AZ failover, RDS reboot — each only where the lab can undergo it; and the rolling restart of the lab’s self-hosted poolers through their hosts’ agents where it has them (docs/disruptions.md).',
    scenarios: CLOUD_DISRUPTIONS,
  },
  extraSuites: [PLANNED_SUITE, BLUE_GREEN_SUITE],
};
