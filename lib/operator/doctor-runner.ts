/**
 * Doctor's checks of one runner: its probe (./doctor-probe.ts) sent through SSM and polled, then
 * what it printed — runner software, tools, clock, DB secret, each target over TLS, S3, the poolers
 * (./doctor-poolers.ts) and, without internet, the VPC endpoints (./doctor-network.ts).
 */
import { GetCommandInvocationCommand, SendCommandCommand } from '@aws-sdk/client-ssm';
import type { LabConfig } from '../config/types';
import { RUNNER_INSTALL_PATH } from '../config/stack-outputs';
import { isPrivateNetwork, PRIVATE_ENDPOINT_SERVICES } from '../config/network';
import { bad, message, ok, type Check, type DoctorDeps } from './doctor-check';
import { parseProbe } from './doctor-probe';
import { runnerPoolerChecks, type RunnerPooling } from './doctor-poolers';
import { runnerEndpointChecks } from './doctor-network';

/**
 * Waits before each GetCommandInvocation of a probe: the first soon (a probe of a ready runner
 * takes a second or two; one still being delivered answers InvocationDoesNotExist, read as
 * pending), then every 5 s.
 */
export const PROBE_POLL_MS: readonly number[] = [1_000, 2_000, 5_000];

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

/** One runner's probe script and how long SSM lets it run (./doctor-probe.ts). */
export interface RunnerProbe {
  readonly lines: readonly string[];
  readonly executionSeconds: number;
}

export async function checkRunner(
  instanceId: string,
  script: RunnerProbe,
  targetNames: readonly string[],
  lab: LabConfig,
  labFile: string,
  deps: DoctorDeps,
  pooling: RunnerPooling,
): Promise<Check[]> {
  const who = `runner ${instanceId}`;
  const redeploy = `npx proxylab deploy --lab ${labFile}`;
  const ran = await runProbe(instanceId, script, deps);
  if ('unreachable' in ran)
    return [
      bad(
        `${who}: reachable through SSM`,
        ran.unreachable,
        `check it runs and is an SSM managed node (aws ssm describe-instance-information --filters Key=InstanceIds,Values=${instanceId}); ` +
          `a runner whose boot failed is replaced by ${redeploy}`,
      ),
    ];
  const p = parseProbe(ran.stdout);
  const checks: Check[] = [ok(`${who}: reachable through SSM`, 'probe ran')];
  checks.push(...runnerHostChecks(who, instanceId, p, deps.softwareVersion, redeploy));
  for (const name of targetNames) checks.push(targetCheck(who, name, p, lab, redeploy));
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

/**
 * Sends the probe (SendCommand) and polls it (GetCommandInvocation) until it ends: its output, or
 * why the runner could not be reached through SSM.
 */
async function runProbe(
  instanceId: string,
  script: RunnerProbe,
  deps: DoctorDeps,
): Promise<{ readonly stdout: string } | { readonly unreachable: string }> {
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
    if (!res.Command?.CommandId) return { unreachable: 'SendCommand returned no command id' };
    commandId = res.Command.CommandId;
  } catch (err) {
    return { unreachable: message(err) };
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
      if (!(err instanceof Error && err.name === 'InvocationDoesNotExist'))
        return { unreachable: message(err) };
    }
    if (status === 'Success' || status === 'Failed') return { stdout };
    if (!['Pending', 'InProgress', 'Delayed'].includes(status)) return { unreachable: `probe ${status}` };
    if (deps.now().getTime() > deadline)
      return { unreachable: `probe still ${status} after ${Math.round(waitMs / 1000)} s` };
  }
}

/** The runner itself, from its probe: runner software version, Node and pgbench, clock, DB secret. */
function runnerHostChecks(
  who: string,
  instanceId: string,
  p: ReadonlyMap<string, string>,
  softwareVersion: string,
  redeploy: string,
): Check[] {
  const checks: Check[] = [];
  const version = p.get('version') ?? '';
  checks.push(
    version === softwareVersion
      ? ok(`${who}: runner software`, version)
      : bad(
          `${who}: runner software`,
          version === '' ? `${RUNNER_INSTALL_PATH} missing` : `${version}, the CLI's is ${softwareVersion}`,
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
  return checks;
}

/** One target (the writer or a proxy) from the probe: a TLS connection, `SHOW max_connections` as the lab says. */
function targetCheck(
  who: string,
  name: string,
  p: ReadonlyMap<string, string>,
  lab: LabConfig,
  redeploy: string,
): Check {
  const got = p.get(`maxconn.${name}`) ?? 'not run';
  const value = /^\d+$/.test(got) ? Number(got) : null;
  const want = lab.database.maxConnections;
  const title = `${who}: TLS connection to ${name}`;
  if (value === null)
    return bad(
      title,
      got,
      name === 'writer'
        ? lab.database.engine === 'postgres'
          ? 'check the DB instance is available (aws rds describe-db-instances) and its security group admits 5432 from the runners'
          : 'check the cluster is available (aws rds describe-db-clusters) and the cluster security group admits 5432 from the runners'
        : `check the proxy is available (aws rds describe-db-proxies --db-proxy-name ${lab.name}-${name}) and its target is AVAILABLE (aws rds describe-db-proxy-targets --db-proxy-name ${lab.name}-${name})`,
    );
  if (want !== null && value !== want)
    return bad(
      title,
      `SHOW max_connections = ${value}, the lab says ${want}`,
      `the parameter is not applied: ${redeploy} (reboots pending instances)`,
    );
  return ok(title, `SHOW max_connections = ${value}${want === null ? " (Aurora's default)" : ''}`);
}
