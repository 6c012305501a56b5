/**
 * Doctor's checks of a lab's self-hosted poolers: their endpoints in the stack outputs, and per
 * runner the pooler part of its probe (data port per pool mode, admin relays, stats port).
 */
import type { LabConfig } from '../config/types';
import type { LabOutputs } from './outputs';
import type { PoolerEndpoint } from '../poolers/endpoint';
import { poolerDriver } from '../poolers/registry';
import { snapshotSchema } from '../aws/pooler-agent-client';
import { bad, ok, type Check } from './doctor-check';

/** Every pooler of the lab has its endpoint in the stack outputs, and the admin secret is named. */
export function poolerOutputChecks(lab: LabConfig, outputs: LabOutputs, redeploy: string): Check[] {
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

/** The lab's self-hosted poolers as one runner's checks see them. */
export interface RunnerPooling {
  readonly poolers: readonly PoolerEndpoint[];
  readonly adminSecret: boolean;
  readonly stackName: string;
}

/** The pooler part of one runner's probe (parseProbe's map): data port per pool mode, admin relays, stats port. */
export function runnerPoolerChecks(
  who: string,
  runnerId: string,
  probe: ReadonlyMap<string, string>,
  pooling: RunnerPooling,
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
    const look = poolerLook(who, runnerId, p, probe, pooling.stackName, redeploy);
    checks.push(...poolerDataChecks(look));
    if (pooling.adminSecret) checks.push(poolerAdminCheck(look));
    checks.push(poolerStatsCheck(look));
  }
  return checks;
}

/** One pooler as one runner's probe saw it, with where to look when a check fails. */
interface PoolerLook {
  readonly who: string;
  readonly p: PoolerEndpoint;
  readonly probe: ReadonlyMap<string, string>;
  readonly driver: ReturnType<typeof poolerDriver>;
  readonly redeploy: string;
  /** systemd's name for process i, as journalctl -u and systemctl status take it */
  readonly unit: (i: number) => string;
  readonly where: string;
  /** For a dedicated host: its security group must admit `ports` from the runners'. */
  readonly sg: (ports: string) => string;
  readonly bootLog: string;
}

function poolerLook(
  who: string,
  runnerId: string,
  p: PoolerEndpoint,
  probe: ReadonlyMap<string, string>,
  stackName: string,
  redeploy: string,
): PoolerLook {
  const driver = poolerDriver(p.product);
  const unit = (i: number): string => driver.host.processUnit(p.name, i).replace(/\.service$/, '');
  const where = poolerMachine(p, runnerId);
  const sg = (ports: string): string =>
    p.placement === 'dedicated'
      ? `; the pooler host's security group must admit ${ports} from the runners' security group`
      : '';
  const bootLog =
    `${where}: journalctl -u ${unit(0)} and /var/log/cloud-init-output.log (the bootstrap names the step that failed)` +
    (p.placement === 'dedicated'
      ? `; whether the host signalled CloudFormation: aws cloudformation describe-stack-events --stack-name ${stackName} (the pooler host's CREATE_FAILED reason)`
      : '');
  return { who, p, probe, driver, redeploy, unit, where, sg, bootLog };
}

/** `SELECT 1` through the data port under each pool mode's alias. */
function poolerDataChecks({ who, p, probe, driver, redeploy, sg, bootLog }: PoolerLook): Check[] {
  return p.poolModes.map((mode) => {
    const got = probe.get(`pooler.${p.name}.data.${mode}`) ?? 'not run';
    const title = `${who}: pooler ${p.name} data port ${p.port}${p.tls ? ' (TLS)' : ''}, ${mode} pool`;
    return got === '1'
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
        );
  });
}

/** Each admin relay port answers the driver's version statement with the version the lab pins. */
function poolerAdminCheck({ who, p, probe, driver, redeploy, unit, where, sg }: PoolerLook): Check {
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
    return bad(
      title,
      down.map((a) => `process ${a.i} (port ${a.port}): ${a.got}`).join('; '),
      `the agent relays ports ${p.adminPorts[0] ?? '?'}–${last ?? '?'} to each process's admin socket: ${where}: journalctl -u proxylab-pooler-agent@${p.name}, systemctl status ${unit(down[0]?.i ?? 0)}${sg(`${p.adminPorts[0] ?? '?'}–${last ?? '?'}`)}`,
    );
  if (other.length > 0)
    return bad(
      title,
      other.map((a) => `process ${a.i} runs ${driver.displayName} ${a.version ?? '?'}`).join('; ') +
        `, the lab pins ${p.version}`,
      `${redeploy} (a new release replaces the ${p.placement === 'dedicated' ? 'pooler host' : 'runners'})`,
    );
  return ok(
    title,
    `${answers.length} of ${p.processes} answer ${driver.host.versionStatement}: ${driver.displayName} ${p.version}`,
  );
}

/** The agent's stats port: one JSON line naming every process. */
function poolerStatsCheck({ who, p, probe, unit, where, sg }: PoolerLook): Check {
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
    return bad(
      title,
      line === '' ? 'no answer' : line.slice(0, 200),
      `${statsFix}${sg(String(p.statsPort))}`,
    );
  const seen = new Set(snap.data.processes.map((x) => x.index));
  const missing = Array.from({ length: p.processes }, (_, i) => i).filter((i) => !seen.has(i));
  return missing.length === 0 && snap.data.processes.length === p.processes
    ? ok(title, `one JSON line, ${p.processes} of ${p.processes} processes`)
    : bad(
        title,
        `${snap.data.processes.length} entries for ${p.processes} processes${missing.length > 0 ? `; process ${missing.join(', ')} not running` : ''}`,
        `${where}: systemctl status ${unit(missing[0] ?? 0)} and journalctl -u ${unit(missing[0] ?? 0)}`,
      );
}
