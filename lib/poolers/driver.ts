/**
 * The pooler driver: everything proxylab knows about one self-hosted pooler product, behind one
 * interface, so the adapters (`proxylab local`, the runner, the pooler host, the constructs, cost)
 * ask the driver instead of spelling the product's facts themselves. One folder per product
 * (lib/poolers/<product>/), one entry per product in lib/poolers/registry.ts.
 *
 * Admin control is written once here, as data: an `AdminOp` is the statements to run on one
 * process's admin console plus the check of their answers. An adapter supplies only "run these
 * statements on process i" (`AdminRun`: psql over a unix socket locally, psql over the agent's
 * relay in the cloud) and `applyOnEveryProcess` does the rest.
 *
 * Pure (no I/O): lib/poolers may import results, suite and core only.
 */
import { InfrastructureError } from '../core/errors';
import type { PsqlRow } from '../core/psql-text';
import type { PoolerHostConfig } from './host-config';
import type { PoolMode, PoolerProduct } from './products';
import type { SettingValue } from '../products/types';

/** One row of an admin console answer, column → text. */
export type AdminRow = PsqlRow;

/** "Run these admin console statements on process i": one row set per statement. */
export type AdminRun = (processIndex: number, statements: readonly string[]) => Promise<AdminRow[][]>;

/** Statements for one process's admin console and the check of what they answered. */
export interface AdminOp {
  readonly statements: readonly string[];
  /** null: applied; otherwise what went wrong (`did not apply pool size 5 to bench (SHOW DATABASES says 4)`). */
  readonly check: (answers: readonly (readonly AdminRow[])[]) => string | null;
  /**
   * The statements only take effect once the process's configuration file says this (PgDoorman
   * resizes a pool by `RELOAD` of a changed file: its admin console has no `SET` for it): the
   * rewrite of the file's text, applied before the statements. Absent: nothing to rewrite.
   */
  readonly rewriteConfig?: (text: string) => string;
}

/** "Rewrite process i's configuration file with `edit`": only an adapter that owns the file can. */
export type ConfigRewrite = (processIndex: number, edit: (text: string) => string) => Promise<void>;

/**
 * Runs `op` on processes 0 … processes-1 in order, checking each answer; the first failed check
 * throws, naming the process (`who(i)`: `PgBouncer (/tmp/x/s0)`, `pooler bouncer process 2`). An op
 * that needs its configuration rewritten first gets it through `rewrite`; without one it is refused
 * before anything is sent (never applied half-way, never reported as applied).
 */
export async function applyOnEveryProcess(
  run: AdminRun,
  processes: number,
  op: AdminOp,
  who: (processIndex: number) => string,
  rewrite?: ConfigRewrite,
): Promise<void> {
  const edit = op.rewriteConfig;
  if (edit !== undefined && rewrite === undefined)
    throw new InfrastructureError(
      `${who(0)} needs its configuration file rewritten for this change (${op.statements.join('; ')}), which this adapter cannot do`,
    );
  for (let i = 0; i < processes; i++) {
    if (edit !== undefined && rewrite !== undefined) await rewrite(i, edit);
    const problem = op.check(await run(i, op.statements));
    if (problem !== null) throw new InfrastructureError(`${who(i)} ${problem}`);
  }
}

/** What the probe of a running pooler found. */
export interface PoolerProbe {
  /** `1.25.2`; null when the pooler did not say. */
  readonly version: string | null;
  /** The prepared-statement cache size in effect; null when this version has no such setting. */
  readonly maxPreparedStatements: number | null;
}

/**
 * One database's pools at one poll, summed over the pooler's processes, in the one pooler-metrics
 * schema (lib/engine/pooler-metrics.ts records it): gauges as counts, the longest wait in ms, and
 * cumulative counters (null when a process did not report the counter: unknown, not 0).
 */
export interface PoolSample {
  readonly database: string;
  /** cl_active, cl_waiting, sv_active, sv_idle, sv_used, sv_login (PgBouncer's names are the schema's). */
  readonly gauges: Readonly<Record<string, number>>;
  readonly maxWaitMs: number;
  /** Transactions since start (the sampler turns it into a per-second rate). */
  readonly transactions: number | null;
  /** Microseconds clients spent waiting since start. */
  readonly waitTimeUs: number | null;
}

/** The gauges every driver reports in a PoolSample (0 for a pool not yet used). */
export const POOL_GAUGES = [
  'cl_active',
  'cl_waiting',
  'sv_active',
  'sv_idle',
  'sv_used',
  'sv_login',
] as const;

/** What a release of the product can do: decided by version, in one place per product. */
export interface PoolerCapabilities {
  /** Prepared statements carried through a transaction pool (PgBouncer: max_prepared_statements). */
  readonly preparedStatementsInTransactionMode: boolean;
  /** Several processes on one port (PgBouncer: so_reuseport). */
  readonly reusePort: boolean;
  /** Cancel requests forwarded between processes (PgBouncer: peer_id / [peers]). */
  readonly peering: boolean;
  /**
   * One process uses at most one core (PgBouncer: one event-loop thread), so more processes than
   * vCPUs only adds contention; false for a multithreaded product, which scales within a process
   * (PgDoorman: `worker_threads`).
   */
  readonly singleThreaded: boolean;
  /**
   * How a pool is resized while the pooler runs: `admin-set` (a `SET` on the admin console, PgBouncer)
   * or `config-reload` (the configuration file rewritten, then `RELOAD`, PgDoorman). An adapter that
   * cannot rewrite a pooler's file cannot resize it (the plan records such sweep cells as not available).
   */
  readonly runtimePoolResize: 'admin-set' | 'config-reload';
  /**
   * A new binary takes over the listening socket and the idle clients without a refused connection
   * (PgDoorman ≥ 3.3.1: SIGUSR2 or `UPGRADE`); false: a process is replaced by starting another on
   * the same port (so_reuseport) and stopping the old one.
   */
  readonly gracefulBinaryUpgrade: boolean;
}

/**
 * What stopping, reloading, pausing and replacing a running pooler does, by version: the facts a
 * disruption (a pooler restart or pause under load) needs, written once per product. The action
 * itself belongs to the adapter that runs it (lib/local, lib/runner); this is only what to send
 * and what it does.
 */
export interface PoolerLifecycle {
  /** Re-read the configuration without dropping connections: a signal and the admin statement. */
  readonly reload: { readonly signal: NodeJS.Signals; readonly adminStatement: string };
  /**
   * Stop handing server connections out and give them back (`pause`), then carry on (`resume`);
   * `database` null: every pool. `drainsServers`: PAUSE waits until the server connections are
   * released (PgBouncer) rather than only blocking new checkouts (PgDoorman). null: no pause.
   */
  pause(
    version: string | null,
    database: string | null,
  ): {
    readonly pause: readonly string[];
    readonly resume: readonly string[];
    readonly drainsServers: boolean;
  } | null;
  /** How one process is replaced under load without refusing new connections. */
  restart(version: string | null): PoolerRestart;
  /** Signals that end the process only after its clients' transactions (graceful), in order; [] when none is documented. */
  gracefulStopSignals(version: string | null): readonly NodeJS.Signals[];
}

/** How a running pooler is replaced by a new process (a binary upgrade or a restart). */
export type PoolerRestart =
  | {
      /** The process hands its listening socket (and idle clients) to a new one it starts itself. */
      readonly kind: 'binary-upgrade';
      readonly signal: NodeJS.Signals;
      /** The admin console statement that does the same (`UPGRADE`); null: none. */
      readonly adminStatement: string | null;
      /** Idle clients move to the new process on their connection (no reconnect). */
      readonly migratesIdleClients: boolean;
      /** The old process drains for at most this long (ms) before it closes what is left. */
      readonly drainTimeoutMs: number | null;
    }
  | {
      /** Start a new process on the same port (so_reuseport), then stop the old one with `stopOldWith`. */
      readonly kind: 'reuseport-rolling';
      readonly stopOldWith: readonly NodeJS.Signals[];
    };

/**
 * Where one deployment keeps its runtime pieces on a pooler host, as the product-neutral code sees
 * them: the bootstrap creates the directories and the TLS pair and checks each process's admin
 * console on its unix socket; the agent reads the pid files and relays to the sockets.
 */
export interface PoolerHostLayout {
  /** Configuration directory (created 0755 by the bootstrap). */
  readonly confDir: string;
  readonly tlsKey: string;
  readonly tlsCert: string;
  /** Process i's unix socket directory (psql's `host` for its admin console), owned by the system user. */
  readonly socketDir: (i: number) => string;
  readonly pidFile: (i: number) => string;
  readonly logFile: (i: number) => string;
  /** The unix socket file of process i listening on `port` (what the agent's admin relay connects to). */
  readonly socketFile: (i: number, port: number) => string;
  /** Process i's configuration file (on its command line: how a binary upgrade's successor is found). */
  readonly configFile: (i: number) => string;
}

/**
 * The second generation of a product replaced by `reuseport-rolling` (PgBouncer): process i runs in
 * generation 0 (`layout`, `processUnit`) or 1 (these), each generation its own unit instance, socket
 * directory, pid file and configuration file, so a rolling restart starts the other generation's unit
 * beside the running one and systemd supervises both (lib/pooler-host/roll.ts).
 */
export interface PoolerRollingGeneration {
  layout(name: string, root?: string): PoolerHostLayout;
  processUnit(name: string, processIndex: number): string;
}

/** What the bootstrap knows when it asks the driver for a deployment's files. */
export interface PoolerHostRenderInput {
  readonly config: PoolerHostConfig;
  /** `/` on a host; a temp dir in tests. */
  readonly root: string;
  readonly dataPort: number;
  /** Server connections per process (processPoolSize). */
  readonly poolSizePerProcess: number;
  /** The database clients reach through the pools. */
  readonly dbname: string;
  /** The database's master user, which clients log in as. */
  readonly dbUser: { readonly username: string; readonly password: string };
  /** The admin/stats user of every process's admin console. */
  readonly adminUser: { readonly username: string; readonly password: string };
  /** Worker threads of a multithreaded product's process (the host config's, or the host's vCPUs). */
  readonly workerThreads: number;
  /** Random bytes (salts of password verifiers a product stores instead of passwords). */
  readonly random: (bytes: number) => Buffer;
}

/** A file the bootstrap writes, owned by the system user (mode applied after writing). */
export interface PoolerHostFile {
  readonly path: string;
  readonly text: string;
  readonly mode: number;
}

/** A systemd unit file (under /etc/systemd/system). */
export interface PoolerHostUnit {
  readonly file: string;
  readonly text: string;
}

/**
 * A pinned upstream release the pooler host builds, and how it is verified before anything from it
 * runs: a tarball by its published SHA-256 (PgBouncer), or a git tag by its full commit id, a content
 * address of the whole source tree (PgDoorman: no checksum is published for its source archives;
 * its Cargo.lock, inside that tree, pins every crate by SHA-256, which cargo checks).
 */
export type PoolerRelease = TarballRelease | GitRelease;

interface ReleaseBase {
  /** Whose release it is (the driver that installs it). */
  readonly product: PoolerProduct;
  readonly version: string;
  readonly url: string;
  /** Where the checksum (or commit id) was read. */
  readonly checksumSource: string;
}

/** A release tarball and its published SHA-256. */
export interface TarballRelease extends ReleaseBase {
  /** 64 lowercase hex digits. */
  readonly sha256: string;
  readonly gitCommit?: undefined;
}

/** A git tag of the upstream repository at `url`, pinned by its commit, built with pinned inputs. */
export interface GitRelease extends ReleaseBase {
  readonly sha256?: undefined;
  /** The tag (`v3.10.7`). */
  readonly tag: string;
  /** The tag's full commit id, 40 lowercase hex digits: `git rev-parse HEAD` must say it after the clone. */
  readonly gitCommit: string;
  /** Downloads the build runs (a toolchain installer), per CPU architecture, each with its published SHA-256. */
  readonly buildInputs: readonly PinnedDownload[];
}

/** One download of a build, for one CPU architecture (`uname -m`), with its published SHA-256. */
export interface PinnedDownload {
  readonly name: string;
  /** `x86_64`, `aarch64`. */
  readonly arch: string;
  readonly url: string;
  readonly sha256: string;
  readonly checksumSource: string;
}

/**
 * Where a host fetches a release's source archive: its upstream `url` (hosts with internet
 * egress), or a byte-identical copy staged in S3 (a lab without internet: `proxylab deploy`
 * downloads it and checks the published SHA-256 before it becomes a CDK asset; lib/operator/pooler-sources.ts).
 * The host checks the same published SHA-256 either way before building anything.
 */
export type PoolerSourceLocation =
  | { readonly kind: 'upstream' }
  | {
      readonly kind: 's3';
      /** `s3://bucket/key` (may hold CDK tokens: the staging bucket's name). */
      readonly uri: string;
    };

/** How `proxylab local` finds the product's binary, and which OS packages install it. */
export interface LocalBinarySpec {
  /** The executable's file name (`pgbouncer`). */
  readonly executable: string;
  /** The environment variable naming the binary (`PROXYLAB_PGBOUNCER`). */
  readonly envVar: string;
  /** Usual places, per platform, after PATH. */
  readonly searchPaths: (platform: NodeJS.Platform) => readonly string[];
  /** OS package per package manager (`apt-get` → `pgbouncer`); absent: no package there. */
  readonly packages: Readonly<Partial<Record<string, string>>>;
  /** `PgBouncer 1.18.0` → `1.18.0`; null when the text names no version. */
  readonly parseVersion: (versionOutput: string) => string | null;
  /** How to get it when no OS package installs it (lines for the message); absent: its packages say. */
  readonly howToGet?: readonly string[];
}

export interface PoolerDriver {
  readonly product: PoolerProduct;
  /** `PgBouncer`: in messages, cost lines and the report. */
  readonly displayName: string;
  /** The settings a pool resize changes, in the product's words (`default_pool_size`, `pool_size`). */
  readonly poolSizeSettings: readonly string[];
  readonly poolModes: readonly PoolMode[];
  capabilities(version: string | null): PoolerCapabilities;
  /** The first release that carries prepared statements through a transaction pool (`1.21`). */
  readonly preparedStatementsSince: string;
  /** The prepared-statement cache size a lab gets by default, and the sweep's "on" value. */
  readonly defaultMaxPreparedStatements: number;
  /** The database name clients use for `mode` on a server database `dbname`. */
  poolDatabaseAlias(dbname: string, mode: PoolMode): string;
  /** The admin console's virtual database (`pgbouncer`). */
  readonly adminDatabase: string;
  readonly admin: {
    /**
     * sslmode of an admin console connection through the pooler agent's relay (TCP → the process's
     * unix socket): PgBouncer answers the TLS request on its unix socket with "no" (`prefer`);
     * PgDoorman answers it with an error, so its relay connections say `disable` (the admin password
     * still never crosses in clear: both ask for SCRAM).
     */
    readonly relaySslmode: 'prefer' | 'disable';
    /** Drop every client and server connection of the pools and let them reopen. */
    reset(aliases: readonly string[]): AdminOp;
    /** Per-process pool size, checked on every alias. */
    setPoolSize(size: number, aliases: readonly string[]): AdminOp;
    setMaxPreparedStatements(n: number): AdminOp;
    /**
     * Stop handing out server connections and close them once released (the planned-maintenance
     * recipe: pause, restart the server, resume); checked: every alias reports paused.
     */
    pause(aliases: readonly string[]): AdminOp;
    /** Lift a pause; checked: no alias reports paused. */
    resume(aliases: readonly string[]): AdminOp;
    /** Re-read the configuration file; checked: every alias now points at `port`. */
    reload(aliases: readonly string[], port: number): AdminOp;
    /** Statements for the probe and how to read them. */
    readonly probe: {
      readonly statements: readonly string[];
      parse(answers: readonly (readonly AdminRow[])[]): PoolerProbe;
      /**
       * The console does not report the prepared-statement cache (PgDoorman's SHOW CONFIG omits
       * it): the probe says null, and the adapter records the size it configured instead.
       */
      readonly preparedStatementsFromConfig?: boolean;
    };
  };
  readonly stats: {
    /** Statements one poll runs on each process. */
    readonly statements: readonly string[];
    /** Every process's answers → one sample per database of `databases`. */
    parse(
      perProcess: readonly (readonly (readonly AdminRow[])[])[],
      databases: readonly string[],
    ): PoolSample[];
  };
  /** Signals that stop a process at once (clients dropped), in order; unknown version: all that may be needed. */
  immediateStopSignals(version: string | null): readonly NodeJS.Signals[];
  /** Reload, pause, restart and graceful stop semantics by version (the disruption lab's facts). */
  readonly lifecycle: PoolerLifecycle;
  /**
   * Cores one process can keep busy: 1 for a single-threaded product, its worker threads for a
   * multithreaded one (`workerThreads` as configured). The sampler judges a pooler saturated when
   * its busiest process averages ≥ CPU_SATURATION_PERCENT of this many cores.
   */
  coresPerProcess(workerThreads: number | null): number;
  /** Releases a lab may pin, newest first, and the one it gets by default. */
  readonly releases: readonly PoolerRelease[];
  readonly defaultVersion: string;
  /**
   * The pooler host: how it installs a pinned release (user data lines), where the binary lands,
   * and what the bootstrap writes and starts (lib/pooler-host asks these, knowing no product).
   */
  readonly host: {
    readonly binaryPath: string;
    /** The unprivileged system user the processes run as. */
    readonly systemUser: string;
    /** User data lines that install `release`, fetching its source from `source` (@default upstream). */
    installCommands(release: PoolerRelease, source?: PoolerSourceLocation): string[];
    /**
     * null: a host without internet (`network.egress: "vpc-endpoints"`) installs a release from the
     * archive `proxylab deploy` staged (a tarball with a published SHA-256, `source` of kind `s3`).
     * Otherwise what the install fetches from the internet that cannot be staged that way: lab
     * validation refuses this product in such a lab with it.
     */
    readonly needsInternet: string | null;
    /** The data port every process listens on (the stack output's `port`). */
    readonly dataPort: number;
    /** Deployment `name`'s paths under `root` (`/` on a host). */
    layout(name: string, root?: string): PoolerHostLayout;
    /** The configuration and credential files of every process (the bootstrap writes them). */
    render(input: PoolerHostRenderInput): readonly PoolerHostFile[];
    /** Template units the processes run under (the bootstrap writes them before the first start). */
    units(config: Pick<PoolerHostConfig, 'binaryPath'>, user: string): readonly PoolerHostUnit[];
    /** The unit instance that runs process i of deployment `name`. */
    processUnit(name: string, processIndex: number): string;
    /** A product replaced by `reuseport-rolling`: its second generation of units and paths (render writes its files too). */
    readonly rollingGeneration?: PoolerRollingGeneration;
    /** An admin console statement whose one-value answer names the running version. */
    readonly versionStatement: string;
    /**
     * How long a host's boot script (install, then bootstrap) may take before CloudFormation gives
     * up, in minutes. @default 20 (PgBouncer's C build)
     */
    readonly bootMinutes?: number;
    /**
     * The least memory (GiB) of a host that installs a release, when the install is a build that
     * needs much of it, and what that build is (PgDoorman: a Rust release build with link-time
     * optimization). Lab validation refuses a smaller pooler host, or runner for `on-runners`, by its
     * type's memory in the price table (lib/cost/price-check.ts). @default - no minimum (PgBouncer's
     * C build is small)
     */
    readonly buildMemory?: { readonly minGiB: number; readonly what: string };
    /** The version in the binary's `--version` output or the version statement's answer (`1.25.2`); null: none. */
    parseVersion(text: string): string | null;
    /**
     * What the host's files set on one pool (`mode`) of a deployment, by the product's setting names
     * (its catalogue's `setBy` settings, lib/products/<product>/settings.ts): recorded as proxylab's in
     * a cloud run's effective settings. null: set, but known only at boot or per step (a pool size).
     */
    kitSettings(
      p: { readonly processes: number; readonly tls: boolean; readonly maxPreparedStatements: number },
      mode: PoolMode,
      maxPreparedStatements: number | null,
    ): Readonly<Record<string, SettingValue | null>>;
  };
  readonly localBinary: LocalBinarySpec;
  /** What the lab's cost estimate calls a process on the host (`PgBouncer process`). */
  readonly costLabel: string;
}
