/**
 * `proxylab doctor --lab FILE`: on a deployed lab, check every integration point the mocks cannot
 * prove, in a few minutes and a few cents, and say how to fix each failure. It never changes the
 * lab: it reads (CloudFormation, RDS, Scheduler), runs one read-only probe per runner through SSM
 * (which writes one small object under runs/proxylab-doctor/ to prove the runner can write), and
 * invokes the collector for the last minutes (which writes runs/proxylab-doctor/metrics/).
 *
 * Checks, in order: stack status; with `deps.stagingKey`, that the hosts can decrypt the CDK staging
 * bucket's assets (./staging-key.ts); expiry schedule; parameter groups in sync; for a lab without
 * internet egress, no route of its subnets to an internet or NAT gateway; per runner: SSM
 * reachable, runner software version, Node and pgbench, the DB secret readable, TLS connections
 * to the writer and each proxy with `SHOW max_connections` matching the lab, S3 write/read/list
 * under runs/, and without internet each VPC endpoint answering HTTPS from inside the VPC; the
 * collector returning CloudWatch and PI data.
 */
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import {
  DescribeRouteTablesCommand,
  DescribeSpotInstanceRequestsCommand,
  type EC2Client,
  type Filter,
  type RouteTable,
  type SpotInstanceRequest,
} from '@aws-sdk/client-ec2';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { RDSClient } from '@aws-sdk/client-rds';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetCommandInvocationCommand, SendCommandCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { shellQuote } from '../core/shell';
import { stackNameFor } from '../config/stack-outputs';
import type { LabConfig } from '../config/types';
import { formatExpiresAt } from '../config/expiry';
import { readLabExpiry } from './extend';
import { buildCollectEvent, invokeCollector } from '../aws/collector-invoke';
import { runnerArgsFromOutputs } from './operator';
import type { LabOutputs } from './outputs';
import { parameterStates } from './parameters';
import { RUNNER_INSTALL_PATH, SPOT_REQUEST_TAG } from '../config/stack-outputs';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import { snapshotSchema } from '../aws/pooler-agent-client';
import { stagingKeyChecksOfStack, type StagingKeyReader } from './staging-key';
import {
  endpointHostname,
  isPrivateNetwork,
  PRIVATE_ENDPOINT_SERVICES,
  type ExistingNetworkConfig,
} from '../config/network';

export interface Check {
  readonly title: string;
  readonly ok: boolean;
  /** What was seen (value, status, error). */
  readonly detail: string;
  /** The exact fix, for a failed check. */
  readonly fix: string | null;
}

export interface DoctorDeps {
  readonly cloudformation: CloudFormationClient;
  readonly rds: RDSClient;
  readonly scheduler: SchedulerClient;
  readonly ssm: SSMClient;
  readonly lambda: LambdaClient;
  /** For spot runners' requests (DescribeSpotInstanceRequests). */
  readonly ec2: EC2Client;
  /** The CLI's runner software version (runnerSoftwareVersion()). */
  readonly softwareVersion: string;
  readonly region: string;
  readonly now: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  /**
   * Wait between two looks at a probe. @default PROBE_POLL_MS: 1 s, 2 s, then 5 s — a probe that
   * finishes at once (a quick runner, moto) is seen within a second; a slow one is polled every 5 s.
   */
  readonly pollMs?: number;
  /** How long to wait for each runner's probe. @default the probe's execution timeout + 60 s, at least 180 000 */
  readonly probeTimeoutMs?: number;
  /**
   * Reads the CDK staging bucket's encryption and key (./staging-key.ts): whether the hosts can
   * decrypt the runner bundle. @default - not checked
   */
  readonly stagingKey?: StagingKeyReader;
}

/**
 * Waits before each GetCommandInvocation of a probe: the first soon (a probe of a ready runner
 * takes a second or two; one still being delivered answers InvocationDoesNotExist, read as
 * pending), then every 5 s.
 */
export const PROBE_POLL_MS: readonly number[] = [1_000, 2_000, 5_000];

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

const ok = (title: string, detail: string): Check => ({ title, ok: true, detail, fix: null });
const bad = (title: string, detail: string, fix: string): Check => ({ title, ok: false, detail, fix });

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

/** How far off the runner's clock may be for doctor to call it in sync (the disruption timelines are in ms). */
export const MAX_CLOCK_OFFSET_MS = 10;

/**
 * The runner's clock from `chronyc -c tracking` (CSV: reference id, reference name, stratum, reference
 * time, system time offset in seconds, …, leap status last; chronyc(1)): synchronised ("Normal") and
 * within MAX_CLOCK_OFFSET_MS. The events of a disruption (the API call's time, RDS's event dates, the
 * writer poll) and the probe's attempts are placed on the runner's clock; Amazon Linux 2023 keeps it
 * with chrony and the Amazon Time Sync Service (169.254.169.123, fd00:ec2::123).
 */
export function timeSyncCheck(who: string, instanceId: string, line: string): Check {
  const title = `${who}: clock in sync (chrony)`;
  const f = line.split(',');
  const offsetMs = f.length >= 14 ? Number(f[4]) * 1000 : NaN;
  const leap = f.at(-1)?.trim() ?? '';
  const source = f[1] || 'no time source';
  const fix = `chronyd must run and follow a time source (aws ssm start-session --target ${instanceId}; then chronyc sources; sudo systemctl enable --now chronyd). Disruption timelines align RDS events and the probe on this clock`;
  if (!Number.isFinite(offsetMs)) return bad(title, `chronyc tracking: ${line || 'no output'}`, fix);
  const detail = `${source === '169.254.169.123' || source === 'fd00:ec2::123' ? 'Amazon Time Sync' : source}, offset ${Math.abs(offsetMs).toFixed(3)} ms, leap status ${leap}`;
  return leap === 'Normal' && Math.abs(offsetMs) <= MAX_CLOCK_OFFSET_MS
    ? ok(title, detail)
    : bad(title, detail, fix);
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

/** An IPv4 address in a private range (RFC 1918, and 100.64.0.0/10 shared space): inside a VPC. */
export function isPrivateIpv4(ip: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(ip);
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return (
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/** The endpoint part of one runner's probe: each service answered over HTTPS from an address inside the VPC. */
export function runnerEndpointChecks(
  who: string,
  probe: ReadonlyMap<string, string>,
  network: ExistingNetworkConfig,
  services: readonly string[],
): Check[] {
  return services.map((service) => {
    const host = endpointHostname(service, network.region);
    const title = `${who}: endpoint ${service}`;
    const got = (probe.get(`endpoint.${service}`) ?? 'not run').trim();
    const m = /^(\d{3}) (\S+)$/.exec(got);
    const where =
      network.endpoints === 'create'
        ? "the stack's endpoint (its security group admits 443 from the runners' group)"
        : `the network team's endpoint (in ${network.endpointCidrs.length > 0 ? network.endpointCidrs.join(', ') : 'the VPC'}, private DNS on for ${network.vpcId})`;
    if (!m || m[1] === '000')
      return bad(
        title,
        got === '' ? 'no answer' : got.slice(0, 200),
        `${host} must resolve to ${where} and answer on 443: aws ec2 describe-vpc-endpoints --filters Name=vpc-id,Values=${network.vpcId} Name=service-name,Values=com.amazonaws.${network.region}.${service}; the VPC needs DNS resolution and DNS hostnames on`,
      );
    const ip = m[2] ?? '';
    return isPrivateIpv4(ip)
      ? ok(title, `HTTPS ${m[1]} from ${ip} (inside the VPC)`)
      : bad(
          title,
          `${host} answered from ${ip}, a public address: the request left the VPC`,
          `private DNS must be on for ${where}; and the subnets should have no route out (see the route-table check)`,
        );
  });
}

/** Every route table of `vpcId` (DescribeRouteTables, filter vpc-id), across pages. */
async function describeRouteTables(ec2: EC2Client, vpcId: string): Promise<RouteTable[]> {
  const out: RouteTable[] = [];
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeRouteTablesCommand({ Filters: [{ Name: 'vpc-id', Values: [vpcId] }], NextToken: token }),
    );
    out.push(...(res.RouteTables ?? []));
    token = res.NextToken || undefined;
  } while (token);
  return out;
}

/**
 * A lab without internet egress: the route table of each of its subnets (its explicit association,
 * else the VPC's main table, as EC2 applies them) has no route to an internet gateway (`igw-`), an
 * egress-only internet gateway or a NAT gateway. A default route elsewhere (a transit gateway, a
 * peering, a firewall endpoint) is reported, not failed: where it leads is the network team's to say.
 */
export async function routeTableChecks(ec2: EC2Client, network: ExistingNetworkConfig): Promise<Check[]> {
  let tables: RouteTable[];
  try {
    tables = await describeRouteTables(ec2, network.vpcId);
  } catch (err) {
    return [
      bad(
        'network: route tables',
        message(err),
        'the CLI needs ec2:DescribeRouteTables (no resource-level permissions: Resource "*"); see proxylab iam-policy --role run',
      ),
    ];
  }
  const main = tables.find((t) => (t.Associations ?? []).some((a) => a.Main === true));
  const bySubnet = new Map<string, RouteTable | undefined>(
    network.subnetIds.map((id) => [
      id,
      tables.find((t) => (t.Associations ?? []).some((a) => a.SubnetId === id)) ?? main,
    ]),
  );
  const subnetsOf = new Map<string, string[]>();
  const missing: string[] = [];
  for (const [subnet, table] of bySubnet) {
    if (!table?.RouteTableId) missing.push(subnet);
    else subnetsOf.set(table.RouteTableId, [...(subnetsOf.get(table.RouteTableId) ?? []), subnet]);
  }
  const checks: Check[] = [];
  if (missing.length > 0)
    checks.push(
      bad(
        'network: route tables',
        `no route table found for ${missing.join(', ')} in ${network.vpcId}`,
        `check network.subnetIds and network.vpcId: aws ec2 describe-subnets --subnet-ids ${missing.join(' ')}`,
      ),
    );
  for (const [id, subnets] of subnetsOf) {
    const table = tables.find((t) => t.RouteTableId === id);
    const routes = table?.Routes ?? [];
    const dest = (r: (typeof routes)[number]): string =>
      r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock ?? r.DestinationPrefixListId ?? '?';
    const out = routes.filter(
      (r) => (r.GatewayId ?? '').startsWith('igw-') || r.EgressOnlyInternetGatewayId || r.NatGatewayId,
    );
    const title = `network: route table ${id} (${subnets.join(', ')})`;
    if (out.length > 0) {
      checks.push(
        bad(
          title,
          out
            .map(
              (r) => `${dest(r)} → ${r.GatewayId ?? r.EgressOnlyInternetGatewayId ?? r.NatGatewayId ?? '?'}`,
            )
            .join(', ') + ': a way to the internet',
          `the lab is declared without internet egress (network.egress "vpc-endpoints"): give it subnets whose route table has no internet or NAT gateway route, or ask the network team to remove it`,
        ),
      );
      continue;
    }
    const elsewhere = routes
      .filter((r) => r.DestinationCidrBlock === '0.0.0.0/0' || r.DestinationIpv6CidrBlock === '::/0')
      .map(
        (r) =>
          `${dest(r)} → ${r.TransitGatewayId ?? r.VpcPeeringConnectionId ?? r.NetworkInterfaceId ?? r.GatewayId ?? r.CoreNetworkArn ?? '?'}`,
      );
    checks.push(
      ok(
        title,
        `no internet or NAT gateway route${elsewhere.length > 0 ? `; default route ${elsewhere.join(', ')} (where it leads is the network team's)` : ''}`,
      ),
    );
  }
  return checks;
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

export async function runDoctor(
  lab: LabConfig,
  labFile: string,
  outputs: LabOutputs,
  deps: DoctorDeps,
): Promise<Check[]> {
  const checks: Check[] = [];
  const redeploy = `npx proxylab deploy --lab ${labFile}`;
  const stackName = stackNameFor(lab.name);

  // 1. the stack
  let stackId: string | null = null;
  try {
    const res = await deps.cloudformation.send(new DescribeStacksCommand({ StackName: stackName }));
    const status = res.Stacks?.[0]?.StackStatus ?? 'unknown';
    stackId = res.Stacks?.[0]?.StackId ?? null;
    checks.push(
      /^(CREATE|UPDATE)_COMPLETE$/.test(status)
        ? ok(`stack ${stackName}`, status)
        : bad(
            `stack ${stackName}`,
            status,
            status === 'DELETE_FAILED'
              ? `the expiry or a destroy could not delete everything: npx proxylab destroy --lab ${labFile}, then see the stack events in the CloudFormation console`
              : /IN_PROGRESS$/.test(status)
                ? 'wait until CloudFormation finishes, then run doctor again'
                : `see the stack events (aws cloudformation describe-stack-events --stack-name ${stackName}), then ${redeploy}`,
          ),
    );
  } catch (err) {
    checks.push(bad(`stack ${stackName}`, message(err), `${redeploy} (check --profile/--region)`));
  }

  // 1b. the CDK staging bucket's key: the hosts must be able to decrypt the runner bundle
  if (deps.stagingKey) checks.push(...(await stagingKeyChecksOfStack(deps.stagingKey, stackId, deps.region)));

  // 2. the expiry schedule
  if (lab.ttlHours !== null) {
    try {
      const at = await readLabExpiry(deps.scheduler, stackName);
      if (at === null)
        checks.push(bad('expiry schedule', 'not found', `${redeploy} (the schedule is part of the stack)`));
      else if (at.getTime() <= deps.now().getTime())
        checks.push(
          bad('expiry schedule', `fired at ${formatExpiresAt(at)}`, `${redeploy} to start a new lab`),
        );
      else checks.push(ok('expiry schedule', `deletes the lab at ${formatExpiresAt(at)}`));
    } catch (err) {
      checks.push(
        bad('expiry schedule', message(err), 'the CLI needs scheduler:GetSchedule; check your credentials'),
      );
    }
  } else {
    checks.push(ok('expiry schedule', 'none (the lab sets no ttlHours): destroy it yourself'));
  }

  // 3. parameter groups
  try {
    const states = await parameterStates(deps.rds, outputs.dbInstanceIds);
    const off = states.filter((s) => !s.applyStatus.every((a) => a === 'in-sync'));
    checks.push(
      off.length === 0
        ? ok('parameter groups in sync', states.map((s) => s.instanceId).join(', '))
        : bad(
            'parameter groups in sync',
            off.map((s) => `${s.instanceId}: ${s.applyStatus.join(',')}`).join('; '),
            off
              .map((s) => `aws rds reboot-db-instance --db-instance-identifier ${s.instanceId}`)
              .join(' && ') + ` (or ${redeploy}, which reboots pending instances)`,
          ),
    );
  } catch (err) {
    checks.push(bad('parameter groups in sync', message(err), 'the CLI needs rds:DescribeDBInstances'));
  }

  // 3b. a lab without internet: its subnets route nowhere out
  const network = lab.network;
  const privateNetwork = isPrivateNetwork(network) ? network : null;
  if (privateNetwork) checks.push(...(await routeTableChecks(deps.ec2, privateNetwork)));

  // 4. each runner, through SSM
  const base = runnerArgsFromOutputs(outputs, lab, {
    runId: DOCTOR_RUN_ID,
    suite: 'smoke',
    region: deps.region,
    startAt: '',
  });
  const targets = [
    { name: 'writer', host: base.writerEndpoint.host, port: base.writerEndpoint.port },
    ...base.proxies.map((p) => ({ name: p.name, host: p.endpoint.host, port: p.endpoint.port })),
  ];
  const poolers = Object.values(outputs.poolerEndpoints);
  checks.push(...poolerOutputChecks(lab, outputs, redeploy));
  const script = probeScript({
    secretArn: outputs.dbSecretArn,
    region: deps.region,
    bucket: outputs.resultsBucketName,
    targets,
    poolers,
    poolerAdminSecretArn: outputs.poolerAdminSecretArn,
    ...(privateNetwork ? { endpointServices: PRIVATE_ENDPOINT_SERVICES.map((e) => e.service) } : {}),
  });
  const executionSeconds =
    probeExecutionSeconds(targets.length, poolers) +
    (privateNetwork ? 12 * PRIVATE_ENDPOINT_SERVICES.length : 0);
  for (const instanceId of outputs.runnerInstanceIds) {
    checks.push(
      ...(await checkRunner(
        instanceId,
        { lines: script, executionSeconds },
        targets.map((t) => t.name),
        lab,
        labFile,
        deps,
        { poolers, adminSecret: outputs.poolerAdminSecretArn !== null, stackName },
      )),
    );
  }

  // 4b. spot runners: each runner's Spot request, as the stack's canceller will see it on destroy
  if (lab.runners.spot)
    checks.push(...(await spotChecks(deps.ec2, stackId, outputs.runnerInstanceIds, labFile)));

  // 5. the collector, for the last 15 minutes
  const end = new Date(Math.floor(deps.now().getTime() / 60_000) * 60_000);
  const window = { start: new Date(end.getTime() - 15 * 60_000).toISOString(), end: end.toISOString() };
  try {
    if (!base.collector) throw new Error('the stack outputs name no collector');
    const event = buildCollectEvent(base.collector, DOCTOR_RUN_ID, window, outputs.resultsBucketName);
    const summary = (await invokeCollector(deps.lambda, outputs.collectorFunctionName, event)) as {
      cloudwatch?: { series?: { ok?: number } };
      pi?: { series?: { ok?: number } } | null;
    } | null;
    const cw = summary?.cloudwatch?.series?.ok ?? 0;
    checks.push(
      cw > 0
        ? ok('collector: CloudWatch', `${cw} series with data in the last 15 min`)
        : bad(
            'collector: CloudWatch',
            'no series with data in the last 15 min',
            'a new lab publishes its first metrics after a few minutes: run doctor again in 5 min; if it stays empty, check the collector role (cloudwatch:GetMetricData) in CloudWatch Logs of the function',
          ),
    );
    if (lab.database.performanceInsights) {
      const pi = summary?.pi?.series?.ok ?? 0;
      checks.push(
        pi > 0
          ? ok('collector: Performance Insights', `${pi} series with data`)
          : bad(
              'collector: Performance Insights',
              'no series with data in the last 15 min',
              'Performance Insights needs a few minutes after the instance starts: run doctor again; if it stays empty, check pi:GetResourceMetrics on the DbiResourceIds in the collector role',
            ),
      );
    }
  } catch (err) {
    checks.push(
      bad(
        'collector',
        message(err),
        `see the function's log group (/aws/lambda/${outputs.collectorFunctionName}); ${redeploy}`,
      ),
    );
  }
  return checks;
}

async function checkRunner(
  instanceId: string,
  script: { readonly lines: readonly string[]; readonly executionSeconds: number },
  targetNames: readonly string[],
  lab: LabConfig,
  labFile: string,
  deps: DoctorDeps,
  pooling: {
    readonly poolers: readonly PoolerEndpoint[];
    readonly adminSecret: boolean;
    readonly stackName: string;
  },
): Promise<Check[]> {
  const who = `runner ${instanceId}`;
  const redeploy = `npx proxylab deploy --lab ${labFile}`;
  const unreachable = (detail: string): Check[] => [
    bad(
      `${who}: reachable through SSM`,
      detail,
      `check it runs and is an SSM managed node (aws ssm describe-instance-information --filters Key=InstanceIds,Values=${instanceId}); ` +
        `a runner whose boot failed is replaced by ${redeploy}`,
    ),
  ];
  let commandId: string;
  try {
    const res = await deps.ssm.send(
      new SendCommandCommand({
        DocumentName: 'AWS-RunShellScript',
        InstanceIds: [instanceId],
        Comment: 'proxylab doctor (read-only probe)',
        TimeoutSeconds: 60,
        Parameters: { commands: [...script.lines], executionTimeout: [String(script.executionSeconds)] },
      }),
    );
    if (!res.Command?.CommandId) return unreachable('SendCommand returned no command id');
    commandId = res.Command.CommandId;
  } catch (err) {
    return unreachable(message(err));
  }
  const waitMs = deps.probeTimeoutMs ?? Math.max(180_000, (script.executionSeconds + 60) * 1000);
  const deadline = deps.now().getTime() + waitMs;
  let stdout = '';
  for (let poll = 0; ; poll++) {
    await deps.sleep(deps.pollMs ?? PROBE_POLL_MS[Math.min(poll, PROBE_POLL_MS.length - 1)] ?? 5_000);
    let status = 'Pending';
    try {
      const inv = await deps.ssm.send(
        new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }),
      );
      status = inv.Status ?? 'Pending';
      stdout = inv.StandardOutputContent ?? '';
    } catch (err) {
      if (!(err instanceof Error && err.name === 'InvocationDoesNotExist')) return unreachable(message(err));
    }
    if (status === 'Success' || status === 'Failed') break;
    if (!['Pending', 'InProgress', 'Delayed'].includes(status)) return unreachable(`probe ${status}`);
    if (deps.now().getTime() > deadline)
      return unreachable(`probe still ${status} after ${Math.round(waitMs / 1000)} s`);
  }
  const p = parseProbe(stdout);
  const checks: Check[] = [ok(`${who}: reachable through SSM`, 'probe ran')];
  const version = p.get('version') ?? '';
  checks.push(
    version === deps.softwareVersion
      ? ok(`${who}: runner software`, version)
      : bad(
          `${who}: runner software`,
          version === ''
            ? `${RUNNER_INSTALL_PATH} missing`
            : `${version}, the CLI's is ${deps.softwareVersion}`,
          `${redeploy} (replaces the runners with this checkout's runner.js)`,
        ),
  );
  const node = p.get('node') ?? '';
  const pgbench = p.get('pgbench') ?? '';
  const tools = /^v\d+\./.test(node) && /^pgbench \(PostgreSQL\) \d+/.test(pgbench);
  checks.push(
    tools
      ? ok(`${who}: Node and pgbench`, `node ${node}, ${pgbench}`)
      : bad(
          `${who}: Node and pgbench`,
          `node: ${node || 'missing'}; pgbench: ${pgbench || 'missing'}`,
          `the boot script failed: read /var/log/cloud-init-output.log (aws ssm start-session --target ${instanceId}); ${redeploy} replaces the runner`,
        ),
  );
  checks.push(timeSyncCheck(who, instanceId, p.get('chrony') ?? 'not run'));
  const secret = p.get('secret') ?? 'not run';
  checks.push(
    secret === 'ok'
      ? ok(`${who}: DB secret readable`, 'GetSecretValue ok')
      : bad(
          `${who}: DB secret readable`,
          secret,
          `the runner role needs secretsmanager:GetSecretValue on the lab secret: ${redeploy}`,
        ),
  );
  for (const name of targetNames) {
    const got = p.get(`maxconn.${name}`) ?? 'not run';
    const value = /^\d+$/.test(got) ? Number(got) : null;
    const want = lab.database.maxConnections;
    const title = `${who}: TLS connection to ${name}`;
    if (value === null)
      checks.push(
        bad(
          title,
          got,
          name === 'writer'
            ? lab.database.engine === 'postgres'
              ? 'check the DB instance is available (aws rds describe-db-instances) and its security group admits 5432 from the runners'
              : 'check the cluster is available (aws rds describe-db-clusters) and the cluster security group admits 5432 from the runners'
            : `check the proxy is available (aws rds describe-db-proxies --db-proxy-name ${lab.name}-${name}) and its target is AVAILABLE (aws rds describe-db-proxy-targets --db-proxy-name ${lab.name}-${name})`,
        ),
      );
    else if (want !== null && value !== want)
      checks.push(
        bad(
          title,
          `SHOW max_connections = ${value}, the lab says ${want}`,
          `the parameter is not applied: ${redeploy} (reboots pending instances)`,
        ),
      );
    else
      checks.push(ok(title, `SHOW max_connections = ${value}${want === null ? " (Aurora's default)" : ''}`));
  }
  const s3 = ['write', 'read', 'list'].map((k) => [k, p.get(`s3.${k}`) ?? 'not run'] as const);
  const s3bad = s3.filter(([, v]) => v !== 'ok');
  checks.push(
    s3bad.length === 0
      ? ok(`${who}: S3 under runs/`, 'write, read, list')
      : bad(
          `${who}: S3 under runs/`,
          s3bad.map(([k, v]) => `${k} ${v}`).join(', '),
          `the runner role needs s3:PutObject/GetObject on runs/* and s3:ListBucket on runs/: ${redeploy}`,
        ),
  );
  checks.push(...runnerPoolerChecks(who, instanceId, p, pooling, redeploy));
  if (isPrivateNetwork(lab.network))
    checks.push(
      ...runnerEndpointChecks(
        who,
        p,
        lab.network,
        PRIVATE_ENDPOINT_SERVICES.map((e) => e.service),
      ),
    );
  return checks;
}

/** Every pooler of the lab has its endpoint in the stack outputs, and the admin secret is named. */
function poolerOutputChecks(lab: LabConfig, outputs: LabOutputs, redeploy: string): Check[] {
  if (lab.poolers.length === 0) return [];
  const title = 'poolers in the stack outputs';
  const missing = lab.poolers.map((p) => p.name).filter((n) => outputs.poolerEndpoints[n] === undefined);
  const problems = [
    ...(missing.length > 0 ? [`PoolerEndpoints lacks ${missing.join(', ')}`] : []),
    ...(outputs.poolerAdminSecretArn === null ? ['no PoolerAdminSecretArn'] : []),
  ];
  return [
    problems.length === 0
      ? ok(title, lab.poolers.map((p) => `${p.name} (${p.placement})`).join(', '))
      : bad(title, problems.join('; '), `the stack predates the lab's poolers: ${redeploy}`),
  ];
}

/** Where to look on the machine a pooler runs on: the dedicated host (found by its IP) or this runner. */
function poolerMachine(p: PoolerEndpoint, runnerId: string): string {
  return p.placement === 'dedicated'
    ? `on the pooler host (its id: aws ec2 describe-instances --filters Name=private-ip-address,Values=${p.host} --query 'Reservations[].Instances[].InstanceId'; then aws ssm start-session --target <that id>)`
    : `on this runner (aws ssm start-session --target ${runnerId})`;
}

/** The pooler part of one runner's probe (parseProbe's map): data port per pool mode, admin relays, stats port. */
export function runnerPoolerChecks(
  who: string,
  runnerId: string,
  probe: ReadonlyMap<string, string>,
  pooling: {
    readonly poolers: readonly PoolerEndpoint[];
    readonly adminSecret: boolean;
    readonly stackName: string;
  },
  redeploy: string,
): Check[] {
  const checks: Check[] = [];
  if (pooling.poolers.length === 0) return checks;
  if (pooling.adminSecret) {
    const secret = probe.get('pooler.adminsecret') ?? 'not run';
    checks.push(
      secret === 'ok'
        ? ok(`${who}: pooler admin secret readable`, 'GetSecretValue ok')
        : bad(
            `${who}: pooler admin secret readable`,
            secret,
            `the runner role needs secretsmanager:GetSecretValue on the secret PoolerAdminSecretArn names: ${redeploy}`,
          ),
    );
  }
  for (const p of pooling.poolers) {
    const driver = poolerDriver(p.product);
    // systemd's name for process i, as journalctl -u and systemctl status take it
    const unit = (i: number): string => driver.host.processUnit(p.name, i).replace(/\.service$/, '');
    const where = poolerMachine(p, runnerId);
    const sg = (ports: string): string =>
      p.placement === 'dedicated'
        ? `; the pooler host's security group must admit ${ports} from the runners' security group`
        : '';
    const bootLog =
      `${where}: journalctl -u ${unit(0)} and /var/log/cloud-init-output.log (the bootstrap names the step that failed)` +
      (p.placement === 'dedicated'
        ? `; whether the host signalled CloudFormation: aws cloudformation describe-stack-events --stack-name ${pooling.stackName} (the pooler host's CREATE_FAILED reason)`
        : '');
    for (const mode of p.poolModes) {
      const got = probe.get(`pooler.${p.name}.data.${mode}`) ?? 'not run';
      const title = `${who}: pooler ${p.name} data port ${p.port}${p.tls ? ' (TLS)' : ''}, ${mode} pool`;
      checks.push(
        got === '1'
          ? ok(
              title,
              `SELECT 1 through ${driver.poolDatabaseAlias('<db>', mode)}${p.tls ? ' with sslmode=require' : ''}`,
            )
          : bad(
              title,
              got,
              `${bootLog}${sg(String(p.port))}` +
                (p.tls && /SSL/i.test(got)
                  ? '; an SSL error means client TLS is off: the bootstrap writes client_tls_sslmode = require and a key only with `tls`'
                  : '') +
                `; ${redeploy} replaces a ${p.placement === 'dedicated' ? 'pooler host' : 'runner'} whose boot failed`,
            ),
      );
    }
    if (pooling.adminSecret) {
      const title = `${who}: pooler ${p.name} admin consoles`;
      const answers = p.adminPorts.map((port, i) => {
        const got = probe.get(`pooler.${p.name}.admin.${i}`) ?? 'not run';
        // the product's own name must be in the answer: an error text may hold digits too
        return { i, port, got, version: driver.localBinary.parseVersion(got) };
      });
      const down = answers.filter((a) => a.version === null);
      const other = answers.filter((a) => a.version !== null && a.version !== p.version);
      const last = p.adminPorts[p.adminPorts.length - 1] ?? p.adminPorts[0];
      if (down.length > 0)
        checks.push(
          bad(
            title,
            down.map((a) => `process ${a.i} (port ${a.port}): ${a.got}`).join('; '),
            `the agent relays ports ${p.adminPorts[0] ?? '?'}–${last ?? '?'} to each process's admin socket: ${where}: journalctl -u proxylab-pooler-agent@${p.name}, systemctl status ${unit(down[0]?.i ?? 0)}${sg(`${p.adminPorts[0] ?? '?'}–${last ?? '?'}`)}`,
          ),
        );
      else if (other.length > 0)
        checks.push(
          bad(
            title,
            other.map((a) => `process ${a.i} runs ${driver.displayName} ${a.version ?? '?'}`).join('; ') +
              `, the lab pins ${p.version}`,
            `${redeploy} (a new release replaces the ${p.placement === 'dedicated' ? 'pooler host' : 'runners'})`,
          ),
        );
      else
        checks.push(
          ok(
            title,
            `${answers.length} of ${p.processes} answer ${driver.host.versionStatement}: ${driver.displayName} ${p.version}`,
          ),
        );
    }
    const title = `${who}: pooler ${p.name} stats port ${p.statsPort}`;
    const statsFix = `${where}: journalctl -u proxylab-pooler-agent@${p.name}`;
    const line = probe.get(`pooler.${p.name}.stats`) ?? 'not run';
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(line);
    } catch {
      /* not JSON: reported below */
    }
    const snap = snapshotSchema.safeParse(parsed);
    if (!snap.success)
      checks.push(
        bad(title, line === '' ? 'no answer' : line.slice(0, 200), `${statsFix}${sg(String(p.statsPort))}`),
      );
    else {
      const seen = new Set(snap.data.processes.map((x) => x.index));
      const missing = Array.from({ length: p.processes }, (_, i) => i).filter((i) => !seen.has(i));
      checks.push(
        missing.length === 0 && snap.data.processes.length === p.processes
          ? ok(title, `one JSON line, ${p.processes} of ${p.processes} processes`)
          : bad(
              title,
              `${snap.data.processes.length} entries for ${p.processes} processes${missing.length > 0 ? `; process ${missing.join(', ')} not running` : ''}`,
              `${where}: systemctl status ${unit(missing[0] ?? 0)} and journalctl -u ${unit(missing[0] ?? 0)}`,
            ),
      );
    }
  }
  return checks;
}

/** All Spot requests matching the filters, across pages. */
async function describeSpotRequests(ec2: EC2Client, filters: Filter[]): Promise<SpotInstanceRequest[]> {
  const out: SpotInstanceRequest[] = [];
  let token: string | undefined;
  do {
    const res = await ec2.send(
      new DescribeSpotInstanceRequestsCommand({ Filters: filters, NextToken: token }),
    );
    out.push(...(res.SpotInstanceRequests ?? []));
    token = res.NextToken || undefined;
  } while (token);
  return out;
}

/**
 * Spot runners: each runner's Spot request carries the stack's tag (so the stack's canceller may
 * cancel it when the runner is deleted), is `active`, and is the request of that runner's instance.
 * Filters (EC2 API DescribeSpotInstanceRequests): `tag:<key>` = tag value, `instance-id` = the
 * instance that fulfilled the request. DescribeSpotInstanceRequests has no resource-level
 * permissions (Service Authorization Reference, Amazon EC2): the CLI needs it on `*`.
 */
async function spotChecks(
  ec2: EC2Client,
  stackId: string | null,
  runnerIds: readonly string[],
  labFile: string,
): Promise<Check[]> {
  if (stackId === null)
    return [
      bad(
        'spot requests',
        'the stack id is unknown (DescribeStacks failed)',
        'fix the stack check above, then run doctor again',
      ),
    ];
  const listTagged = `aws ec2 describe-spot-instance-requests --filters Name=tag:${SPOT_REQUEST_TAG},Values=${stackId}`;
  let tagged: SpotInstanceRequest[];
  let untagged: SpotInstanceRequest[];
  try {
    tagged = await describeSpotRequests(ec2, [{ Name: `tag:${SPOT_REQUEST_TAG}`, Values: [stackId] }]);
    const notFound = runnerIds.filter((id) => !tagged.some((r) => r.InstanceId === id));
    untagged =
      notFound.length > 0 ? await describeSpotRequests(ec2, [{ Name: 'instance-id', Values: notFound }]) : [];
  } catch (err) {
    return [
      bad(
        'spot requests',
        message(err),
        'the CLI needs ec2:DescribeSpotInstanceRequests (no resource-level permissions: Resource "*")',
      ),
    ];
  }
  return runnerIds.map((id) => {
    const title = `runner ${id}: Spot request`;
    const mine = tagged.find((r) => r.InstanceId === id);
    if (mine) {
      const state = mine.State ?? 'unknown';
      return state === 'active'
        ? ok(title, `${mine.SpotInstanceRequestId ?? '?'} active, tagged ${SPOT_REQUEST_TAG}`)
        : bad(
            title,
            `${mine.SpotInstanceRequestId ?? '?'} ${state}${mine.Status?.Code ? ` (${mine.Status.Code}: ${mine.Status.Message ?? ''})` : ''}`,
            `the runner is not running on its request (interrupted or stopped?): see ${listTagged}; \`proxylab status\` says whether a run was interrupted`,
          );
    }
    const bare = untagged.find((r) => r.InstanceId === id);
    if (bare)
      return bad(
        title,
        `${bare.SpotInstanceRequestId ?? '?'} (${bare.State ?? '?'}) carries no ${SPOT_REQUEST_TAG} tag: the stack's canceller may not cancel it, and a destroy would leave it to reopen`,
        `the runner was not launched from the stack's spot launch template: npx proxylab destroy --lab ${labFile}, then aws ec2 cancel-spot-instance-requests --spot-instance-request-ids ${bare.SpotInstanceRequestId ?? '<id>'}, and deploy again`,
      );
    const others = tagged.map(
      (r) => `${r.SpotInstanceRequestId ?? '?'} → ${r.InstanceId ?? 'no instance'} (${r.State ?? '?'})`,
    );
    return bad(
      title,
      `no Spot request for this instance${others.length > 0 ? `; the stack's requests: ${others.join(', ')}` : ''}`,
      `the runner is on-demand or its request now serves another instance: see ${listTagged}; a redeploy (npx proxylab deploy --lab ${labFile}) replaces the runners`,
    );
  });
}

/** The checklist as printed: ✓/✗, title, detail, and the fix under each ✗. */
export function formatChecks(checks: readonly Check[]): string {
  const lines = checks.map(
    (c) => `${c.ok ? '✓' : '✗'} ${c.title}: ${c.detail}${c.fix ? `\n    fix: ${c.fix}` : ''}`,
  );
  const failed = checks.filter((c) => !c.ok).length;
  lines.push(
    failed === 0 ? `all ${checks.length} checks hold` : `${failed} of ${checks.length} checks failed`,
  );
  return lines.join('\n') + '\n';
}

function message(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
