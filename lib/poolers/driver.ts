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

/** One row of an admin console answer, column → text. */
export type AdminRow = PsqlRow;

/** "Run these admin console statements on process i": one row set per statement. */
export type AdminRun = (processIndex: number, statements: readonly string[]) => Promise<AdminRow[][]>;

/** Statements for one process's admin console and the check of what they answered. */
export interface AdminOp {
  readonly statements: readonly string[];
  /** null: applied; otherwise what went wrong (`did not apply pool size 5 to bench (SHOW DATABASES says 4)`). */
  readonly check: (answers: readonly (readonly AdminRow[])[]) => string | null;
}

/**
 * Runs `op` on processes 0 … processes-1 in order, checking each answer; the first failed check
 * throws, naming the process (`who(i)`: `PgBouncer (/tmp/x/s0)`, `pooler bouncer process 2`).
 */
export async function applyOnEveryProcess(
  run: AdminRun,
  processes: number,
  op: AdminOp,
  who: (processIndex: number) => string,
): Promise<void> {
  for (let i = 0; i < processes; i++) {
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
   * vCPUs only adds contention; false for a multithreaded product, which scales within a process.
   */
  readonly singleThreaded: boolean;
}

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

/** A pinned upstream release the pooler host builds: URL and its published SHA-256. */
export interface PoolerRelease {
  /** Whose release it is (the driver that installs it). */
  readonly product: PoolerProduct;
  readonly version: string;
  readonly url: string;
  /** 64 lowercase hex digits. */
  readonly sha256: string;
  /** Where the checksum was read. */
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
}

export interface PoolerDriver {
  readonly product: PoolerProduct;
  /** `PgBouncer`: in messages, cost lines and the report. */
  readonly displayName: string;
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
  /**
   * The signal that retires the old process of a rolling restart (a new one already listens on the
   * same port with so_reuseport), as this version documents it, and what it does, in words.
   */
  rollingStopSignal(version: string | null): { readonly signal: NodeJS.Signals; readonly does: string };
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
    /** An admin console statement whose one-value answer names the running version. */
    readonly versionStatement: string;
    /** The version in the binary's `--version` output or the version statement's answer (`1.25.2`); null: none. */
    parseVersion(text: string): string | null;
  };
  readonly localBinary: LocalBinarySpec;
  /** What the lab's cost estimate calls a process on the host (`PgBouncer process`). */
  readonly costLabel: string;
}
