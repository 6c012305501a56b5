/**
 * The read-only probe doctor runs on each runner through SSM (./doctor-runner.ts): the bash lines,
 * how long SSM may let them run, and the `key=value` lines they print, parsed.
 */
import { shellQuote } from '../core/shell';
import { RUNNER_INSTALL_PATH } from '../config/stack-outputs';
import { endpointHostname } from '../config/network';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';

/**
 * The probe's SSM execution timeout in seconds: 120 s covers the tools, secrets and S3; each
 * connection attempt may take its whole connect_timeout (10 s, e.g. a security group dropping the
 * packets), so each one adds 12 s. A pooler adds one attempt per pool mode, per admin port and
 * for the stats port: e5's two 4-process poolers alone could take 120 s, and a probe SSM kills
 * reports nothing at all.
 */
export function probeExecutionSeconds(targets: number, poolers: readonly PoolerEndpoint[]): number {
  const attempts = targets + poolers.reduce((n, p) => n + p.poolModes.length + p.adminPorts.length + 1, 0);
  return 120 + 12 * attempts;
}

/** The object key each runner's probe writes (and reads back). */
export const DOCTOR_RUN_ID = 'proxylab-doctor';

/**
 * The probe each runner runs (bash, read-only but for one object under runs/proxylab-doctor/):
 * prints `key=value` lines; the DB password only ever sits in the environment.
 */
export function probeScript(input: {
  readonly secretArn: string;
  readonly region: string;
  readonly bucket: string;
  readonly targets: ReadonlyArray<{ readonly name: string; readonly host: string; readonly port: number }>;
  /** The lab's self-hosted poolers (stack output PoolerEndpoints); on-runners ones are at this runner's 127.0.0.1. */
  readonly poolers?: readonly PoolerEndpoint[];
  /** PoolerAdminSecretArn; null when the stack names none. */
  readonly poolerAdminSecretArn?: string | null;
  /**
   * A lab without internet egress: the interface endpoint services (PRIVATE_ENDPOINT_SERVICES) the
   * runner must reach over HTTPS, each by its usual hostname (private DNS).
   */
  readonly endpointServices?: readonly string[];
}): string[] {
  const q = shellQuote;
  const poolers = input.poolers ?? [];
  const key = `runs/${DOCTOR_RUN_ID}/probe-$(cat /sys/devices/virtual/dmi/id/board_asset_tag 2>/dev/null || hostname).txt`;
  const field = (name: string): string =>
    `node -e 'let d="";process.stdin.on("data",(c)=>{d+=c;}).on("end",()=>{process.stdout.write(String(JSON.parse(d).${name} ?? ""));})'`;
  return [
    'set -u',
    `echo "version=$(sha256sum ${RUNNER_INSTALL_PATH} 2>/dev/null | cut -c1-16)"`,
    'echo "node=$(node --version 2>&1)"',
    'echo "pgbench=$(pgbench --version 2>&1)"',
    // The runner's clock: disruption events (RDS's dates) and the probe are aligned on it.
    'echo "chrony=$(chronyc -c tracking 2>&1 | head -1)"',
    `if SECRET=$(aws secretsmanager get-secret-value --secret-id ${q(input.secretArn)} --region ${q(input.region)} --query SecretString --output text 2>&1); then echo "secret=ok"; else echo "secret=$(echo "$SECRET" | tail -1)"; SECRET='{}'; fi`,
    `PGUSER=$(printf '%s' "$SECRET" | ${field('username')})`,
    `PGPASSWORD=$(printf '%s' "$SECRET" | ${field('password')})`,
    'export PGUSER PGPASSWORD',
    ...(poolers.length > 0
      ? [`PGDB=$(printf '%s' "$SECRET" | ${field('dbname')})`, 'PGDB=${PGDB:-postgres}']
      : []),
    'unset SECRET',
    ...input.targets.map(
      (t) =>
        `echo ${q(`maxconn.${t.name}=`)}"$(psql ${q(`host=${t.host} port=${t.port} dbname=postgres sslmode=require connect_timeout=10`)} -Atc 'SHOW max_connections' 2>&1 | tr '\\n' ' ')"`,
    ),
    ...poolerProbeLines(poolers, input.poolerAdminSecretArn ?? null, input.region, field),
    ...endpointProbeLines(input.endpointServices ?? [], input.region),
    `KEY="${key}"`,
    `if echo ok | aws s3 cp - "s3://${input.bucket}/$KEY" --region ${q(input.region)} >/dev/null 2>&1; then echo "s3.write=ok"; else echo "s3.write=failed"; fi`,
    `if [ "$(aws s3 cp "s3://${input.bucket}/$KEY" - --region ${q(input.region)} 2>/dev/null)" = ok ]; then echo "s3.read=ok"; else echo "s3.read=failed"; fi`,
    `if aws s3api list-objects-v2 --bucket ${q(input.bucket)} --prefix ${q(`runs/${DOCTOR_RUN_ID}/`)} --region ${q(input.region)} --max-items 1 >/dev/null 2>&1; then echo "s3.list=ok"; else echo "s3.list=failed"; fi`,
  ];
}

/**
 * The pooler part of the probe (after the DB secret is in PGUSER/PGPASSWORD and its dbname in PGDB):
 * per pooler, `SELECT 1` through the data port under each pool mode's alias (sslmode=require when the
 * pooler has `tls`, as the runner's targets connect), the driver's version statement (PgBouncer:
 * `SHOW VERSION`) on each admin relay port with the
 * admin secret's user (the driver's relay sslmode: the relay ends at a unix socket, where PgBouncer
 * declines TLS — `prefer` — and PgDoorman answers the request with an error — `disable`), and
 * one line from the agent's stats port. The admin password only ever sits in a subshell's
 * environment (a `VAR=value cmd` prefix is not argv).
 */
function poolerProbeLines(
  poolers: readonly PoolerEndpoint[],
  adminSecretArn: string | null,
  region: string,
  field: (name: string) => string,
): string[] {
  if (poolers.length === 0) return [];
  const q = shellQuote;
  const lines: string[] = [];
  if (adminSecretArn !== null)
    lines.push(
      `if ADMIN=$(aws secretsmanager get-secret-value --secret-id ${q(adminSecretArn)} --region ${q(region)} --query SecretString --output text 2>&1); then echo "pooler.adminsecret=ok"; else echo "pooler.adminsecret=$(echo "$ADMIN" | tail -1)"; ADMIN='{}'; fi`,
      `ADMIN_USER=$(printf '%s' "$ADMIN" | ${field('username')})`,
      `ADMIN_PASSWORD=$(printf '%s' "$ADMIN" | ${field('password')})`,
      'unset ADMIN',
    );
  const oneLine = `2>&1 | tr '\\n' ' ')"`;
  for (const p of poolers) {
    const sslmode = p.tls ? 'require' : 'prefer';
    for (const mode of p.poolModes) {
      // the alias around the secret's dbname, from the layout itself (transaction: <db>, session: <db>_session)
      const [pre = '', post = ''] = poolerDriver(p.product).poolDatabaseAlias('\u0000', mode).split('\u0000');
      const conn = `${q(`host=${p.host} port=${p.port} dbname=${pre}`)}"$PGDB"${q(`${post} sslmode=${sslmode} connect_timeout=10`)}`;
      lines.push(`echo ${q(`pooler.${p.name}.data.${mode}=`)}"$(psql ${conn} -Atc 'SELECT 1' ${oneLine}`);
    }
    if (adminSecretArn !== null)
      p.adminPorts.forEach((port, i) => {
        const conn = q(
          `host=${p.host} port=${port} dbname=${poolerDriver(p.product).adminDatabase} sslmode=${poolerDriver(p.product).admin.relaySslmode} connect_timeout=10`,
        );
        lines.push(
          `echo ${q(`pooler.${p.name}.admin.${i}=`)}"$(PGUSER="$ADMIN_USER" PGPASSWORD="$ADMIN_PASSWORD" psql ${conn} -Atc ${q(poolerDriver(p.product).host.versionStatement)} ${oneLine}`,
        );
      });
    lines.push(
      `echo ${q(`pooler.${p.name}.stats=`)}"$(timeout 10 bash -c ${q(`exec 3<>/dev/tcp/${p.host}/${p.statsPort} && head -n 1 <&3`)} ${oneLine}`,
    );
  }
  if (adminSecretArn !== null) lines.push('unset ADMIN_USER ADMIN_PASSWORD');
  return lines;
}

/**
 * One HTTPS request per endpoint service, by the hostname every client uses: any HTTP status means
 * TLS reached a server; `%{remote_ip}` says which one — inside the VPC (the interface endpoint,
 * through private DNS) or a public address (no endpoint, or private DNS off: the request only
 * worked because something routes to the internet). curl prints `000` and its error otherwise.
 */
function endpointProbeLines(services: readonly string[], region: string): string[] {
  const q = shellQuote;
  return services.map(
    (service) =>
      `echo ${q(`endpoint.${service}=`)}"$(curl --silent --show-error --output /dev/null --max-time 10 --write-out '%{http_code} %{remote_ip}' ${q(`https://${endpointHostname(service, region)}/`)} 2>&1 | tr '\\n' ' ')"`,
  );
}

/** `key=value` lines → map (later keys win). */
export function parseProbe(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return out;
}
