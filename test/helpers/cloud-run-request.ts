/**
 * What `proxylab run` prepares before it starts a runner, against the local stack instead of AWS:
 * the DB secret in moto and the run request, for integration tests that run the bundled runner.
 */
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { buildRunRequest, type RunnerArgvTestSettings, type RunRequest } from '../../lib/aws/run-request';
import type { DatabaseSpec, RunRequestArgs } from '../../lib/aws/runner-args';
import { BENCH_DB, BENCH_USER } from '../../lib/local/postgres';
import { motoClientConfig, type MotoServer } from './moto';

/** A secret named `name` in the shape RDS generates for a cluster, for PostgreSQL at 127.0.0.1:`port`; its ARN. */
export async function createDbSecret(
  moto: MotoServer,
  name: string,
  port: number,
  password: string,
): Promise<string> {
  const sm = new SecretsManagerClient(motoClientConfig(moto));
  try {
    const secret = await sm.send(
      new CreateSecretCommand({
        Name: name,
        SecretString: JSON.stringify({
          username: BENCH_USER,
          password,
          host: '127.0.0.1',
          port,
          dbname: BENCH_DB,
          engine: 'postgres',
        }),
      }),
    );
    return secret.ARN as string;
  } finally {
    sm.destroy();
  }
}

/**
 * What the runner is told on its command line (test-only, never in the run request) when the local
 * stack stands in for the lab: no TLS, PgBouncer's transaction pool as the proxy, no RDS API.
 */
export const LOCAL_STAND_IN: RunnerArgvTestSettings = {
  sslmode: 'disable',
  proxyTargetKind: 'pgbouncer-transaction',
  poolControl: false,
  // Both runners poll one local moto: 1.5 s from "ready" to the start is plenty (EC2 runners get 5 s).
  fleetLeadMs: 1_500,
  fleetPollMs: 250,
};

/**
 * The run request of suite `smoke` on the local stack: PostgreSQL at `postgresPort` is the writer and
 * PgBouncer's transaction pool at `proxyPort` stands in for a proxy (25/12 is its pool as a % of
 * max_connections); no collector. The runner gets LOCAL_STAND_IN on its command line.
 */
export function localRunRequest(o: {
  readonly runId: string;
  readonly bucket: string;
  readonly secretArn: string;
  readonly postgresPort: number;
  readonly proxyPort: number;
  readonly runnerCount: number;
  readonly startAt?: string | null;
  readonly database?: DatabaseSpec;
  /** What `proxylab run` takes from the stack outputs and the price table (absent: not said). */
  readonly zones?: RunRequestArgs['zones'];
  readonly targetPrices?: RunRequestArgs['targetPrices'];
  /** @default 'smoke' */
  readonly suite?: string;
  /** The proxy's lab name and DBProxyName. @default 'pgbouncer-transaction' for both */
  readonly proxy?: { readonly name: string; readonly dbProxyName: string };
}): RunRequest {
  return buildRunRequest(
    {
      runId: o.runId,
      suite: o.suite ?? 'smoke',
      bucket: o.bucket,
      secretArn: o.secretArn,
      writerEndpoint: { host: '127.0.0.1', port: o.postgresPort },
      ...(o.database ? { database: o.database } : {}),
      poolers: [],
      poolerAdminSecretArn: null,
      proxies: [
        {
          name: o.proxy?.name ?? 'pgbouncer-transaction',
          endpoint: { host: '127.0.0.1', port: o.proxyPort },
          dbProxyName: o.proxy?.dbProxyName ?? 'pgbouncer-transaction',
          lab: { maxConnectionsPercent: 25, maxIdleConnectionsPercent: 12 },
        },
      ],
      region: null,
      ...(o.zones ? { zones: o.zones } : {}),
      ...(o.targetPrices ? { targetPrices: o.targetPrices } : {}),
      startAt: o.startAt ?? null,
      collector: null,
      barrierTimeoutSec: 900,
      expectVersion: null,
    },
    o.runnerCount,
  );
}
