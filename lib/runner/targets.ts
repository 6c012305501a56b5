/**
 * Targets on AWS: the Aurora writer (`direct`) and each RDS Proxy (`rds-proxy`, named as in the
 * lab). Both use TLS (`sslmode=require`: RDS Proxy requires it, Aurora PostgreSQL 15+ forces it);
 * credentials come from the cluster secret and reach libpq only through PGPASSWORD.
 * `max_connections` is read at run time (`SHOW max_connections` on the writer), never assumed
 * from the instance class: the E1 write-up read 394 where AWS's table says 405.
 */
import { InfrastructureError } from '../core/errors';
import type { Target } from '../engine/ports';
import type { ConnectionInfo } from '../suite/types';
import {
  describeTarget,
  type TargetDescriptor,
  type ProxyTargetKind,
  type TargetProbe,
} from '../suite/targets';
import type { TargetRef } from '../suite/types';
import type { DbCredentials } from '../aws/secrets';
import type { ScalarQuery, SslMode } from '../exec/libpq';
import type { Endpoint } from '../aws/endpoint';
import type { PoolPercents, ProxySpec } from '../aws/runner-args';
import { labTargets } from '../config/targets';
import { KINDS } from '../products/kinds';

/** The server behind every target: one writer, read once per run. */
export class WriterInfo {
  private maxConnectionsPromise: Promise<number> | null = null;

  constructor(
    private readonly writer: ConnectionInfo,
    private readonly query: ScalarQuery,
  ) {}

  maxConnections(): Promise<number> {
    if (!this.maxConnectionsPromise) {
      this.maxConnectionsPromise = this.query(this.writer, 'SHOW max_connections').then((text) => {
        const n = Number.parseInt(text, 10);
        if (!Number.isInteger(n) || n <= 0)
          throw new InfrastructureError(`SHOW max_connections returned "${text}"`);
        return n;
      });
      this.maxConnectionsPromise.catch(() => {
        this.maxConnectionsPromise = null; // let a later call retry
      });
    }
    return this.maxConnectionsPromise;
  }

  serverVersion(): Promise<string> {
    return this.query(this.writer, 'SHOW server_version');
  }
}

export class CloudTarget implements Target {
  readonly descriptor: TargetDescriptor;
  constructor(
    readonly ref: TargetRef,
    private readonly conn: ConnectionInfo,
    private readonly writer: WriterInfo,
    /** Current pool % of a proxy (null for direct / unknown). */
    private readonly poolPercent: () => PoolPercents | null,
    probe: TargetProbe = { version: null },
  ) {
    this.descriptor = describeTarget(ref, probe);
  }

  connection(): ConnectionInfo {
    return this.conn;
  }

  maxConnections(): Promise<number> {
    return this.writer.maxConnections();
  }

  /** RDS Proxy's pool: MaxConnectionsPercent of max_connections (rounded down); null for direct. */
  async poolSize(): Promise<number | null> {
    if (!this.descriptor.capabilities.pooled) return null;
    const pct = this.poolPercent();
    if (pct === null) return null;
    return Math.floor(((await this.writer.maxConnections()) * pct.maxConnectionsPercent) / 100);
  }
}

export interface CloudTargetsInput {
  readonly credentials: DbCredentials;
  readonly writer: Endpoint;
  /** The lab's proxies with their endpoints (the run request's). */
  readonly proxies: ReadonlyArray<ProxyEndpoints>;
  /** @default 'require' (test-only override: 'disable' to stand PgBouncer in for a proxy locally). */
  readonly sslmode?: SslMode;
  readonly query: ScalarQuery;
  readonly poolPercent: (proxyName: string) => PoolPercents | null;
  /** Kind of the proxy targets. @default 'rds-proxy' (others: test-only local stand-ins) */
  readonly proxyKind?: ProxyTargetKind;
}

/** What the runner's proxy targets read of a proxy. */
type ProxyEndpoints = Pick<ProxySpec, 'name' | 'endpoint'> &
  Partial<Pick<ProxySpec, 'endpoints' | 'settings' | 'kitSettings'>>;

/**
 * A proxy target's probe: no version (RDS Proxy reports none), the lab's settings and proxylab's
 * (the run request's), so its descriptor records every RDS Proxy setting's effective value. A
 * request from an older CLI carries neither: the lab could not set any then, and proxylab's own
 * values are not said (recorded as the defaults). A test's local stand-in for a proxy (a PgBouncer
 * pool, `--test-proxy-kind`) is not configured from them: nothing is recorded for it.
 */
function proxyProbe(proxy: ProxyEndpoints, ref: TargetRef): TargetProbe {
  if (KINDS[ref.kind].placement !== 'managed') return { version: null };
  return { version: null, settings: proxy.settings ?? {}, kitSettings: proxy.kitSettings ?? {} };
}

/** The endpoint of `proxy` a target of it reaches: the one listed for its kind, else the default one. */
function proxyEndpoint(proxy: ProxyEndpoints, ref: TargetRef): Endpoint {
  const byKind: Readonly<Partial<Record<string, Endpoint>>> = proxy.endpoints ?? {};
  return byKind[ref.kind] ?? proxy.endpoint;
}

/** `direct` (the writer) plus one target per proxy endpoint (`rds-proxy`: its default endpoint). */
export function buildCloudTargets(input: CloudTargetsInput): { targets: CloudTarget[]; writer: WriterInfo } {
  const sslmode = input.sslmode ?? 'require';
  const conn = (ep: Endpoint): ConnectionInfo => ({
    host: ep.host,
    port: ep.port,
    user: input.credentials.username,
    dbname: input.credentials.dbname,
    sslmode,
    env: { PGPASSWORD: input.credentials.password },
  });
  const writerConn = conn(input.writer);
  const writer = new WriterInfo(writerConn, input.query);
  // The pooler targets are buildPoolerTargets' (lib/runner/pooler-targets.ts), from the same list.
  const targets = labTargets({ proxies: input.proxies, poolers: [] }, input.proxyKind ?? 'rds-proxy').flatMap(
    (t) =>
      t.role === 'writer'
        ? [new CloudTarget(t.ref, writerConn, writer, () => null)]
        : t.role === 'proxy'
          ? [
              new CloudTarget(
                t.ref,
                conn(proxyEndpoint(t.proxy, t.ref)),
                writer,
                () => input.poolPercent(t.proxy.name),
                proxyProbe(t.proxy, t.ref),
              ),
            ]
          : [],
  );
  return { targets, writer };
}
