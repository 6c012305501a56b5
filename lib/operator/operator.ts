/**
 * The operator's side of a cloud lab (what `proxylab deploy / destroy / run / status / fetch`
 * call): resolve settings, build the cdk command lines, turn stack outputs into the runners'
 * arguments, follow a run from S3 and SSM. Everything is validated before any AWS call.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { GetCommandInvocationCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { S3Client } from '@aws-sdk/client-s3';
import { InfrastructureError, UsageError } from '../core/errors';
import type { LabConfig } from '../config/types';
import { databaseInstanceClass } from '../config/database';
import { REGION_PATTERN } from '../config/schema';
import { getSuite, LAB_SUITE_NAME, SUITE_NAMES } from '../suite/catalog';
import { verdictTotals, type VerdictTotals } from '../suite/verdict';
import type { ComponentZone, TargetPrice } from '../suite/types';
import type { AwsSettings } from '../aws/clients';
import type { LabOutputs } from './outputs';
import { parseEndpoint } from '../aws/endpoint';
import { proxyKitSettings } from '../config/kit-settings';
import { isRunId, type CollectorSpec, type ProxySpec, type RunRequestArgs } from '../aws/runner-args';
import { computeProgress, countStepFiles, formatProgress, readManifest, type RunProgress } from './runs';
import { runKeyPrefix } from '../results/run-paths';
import { S3ResultSink } from '../aws/s3-sink';
import type { SentCommand } from './ssm';
import { REPO_ROOT } from '../core/repo-root';
import { shellQuote } from '../core/shell';

/** The repository root (cdk.json lives there) — never the working directory (lib/core/repo-root.ts). */
export { REPO_ROOT };

export interface CommonAwsFlags {
  readonly profile?: string;
  readonly region?: string;
}

/**
 * Region: `--region`, else the SDK's usual sources (AWS_REGION / AWS_DEFAULT_REGION / the
 * profile), else the lab's `region` hint.
 */
export function awsSettings(
  flags: CommonAwsFlags,
  lab: LabConfig | null,
  env: NodeJS.ProcessEnv = process.env,
): AwsSettings {
  if (flags.region !== undefined && !REGION_PATTERN.test(flags.region)) {
    throw new UsageError(`--region must look like us-east-1, got "${flags.region}"`);
  }
  if (flags.profile !== undefined && !/^[A-Za-z0-9_.+=,@-]+$/.test(flags.profile)) {
    throw new UsageError(`--profile "${flags.profile}" is not a valid profile name`);
  }
  const fromEnv = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  const region = flags.region ?? (fromEnv ? undefined : (lab?.region ?? undefined));
  return { ...(region ? { region } : {}), ...(flags.profile ? { profile: flags.profile } : {}) };
}

export interface CdkInvocation {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Only the variables set on top of the current environment. */
  readonly env: Readonly<Record<string, string>>;
}

/** `npx cdk deploy|destroy -c lab=<abs path> …` in the repository root, profile/region as env. */
export function cdkInvocation(
  kind: 'deploy' | 'destroy',
  labFile: string,
  settings: AwsSettings,
  cwd: string = process.cwd(),
  /** More cdk arguments (deploy: the `-c` Availability Zone choice). */
  extraArgs: readonly string[] = [],
): CdkInvocation {
  const labPath = path.resolve(cwd, labFile);
  const args = ['cdk', kind, '-c', `lab=${labPath}`, ...extraArgs];
  if (kind === 'deploy')
    args.push(
      '--require-approval',
      'never',
      '--outputs-file',
      path.join(REPO_ROOT, 'cdk.out', `outputs-${path.basename(labPath, '.json')}.json`),
    );
  else args.push('--force');
  const env: Record<string, string> = {};
  if (settings.profile) env.AWS_PROFILE = settings.profile;
  if (settings.region) {
    env.AWS_REGION = settings.region;
    env.AWS_DEFAULT_REGION = settings.region;
    env.CDK_DEFAULT_REGION = settings.region;
  }
  return { command: 'npx', args, cwd: REPO_ROOT, env };
}

export function formatInvocation(inv: CdkInvocation): string {
  // Quoted for a POSIX shell (lib/core/shell.ts): the line is printed to be copied, and a lab
  // file's name (`x;curl …|sh;.json`) must stay one argument there. A variable's value is quoted
  // after its `NAME=`, so the word stays an assignment.
  const env = Object.entries(inv.env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  return [...env, ...[inv.command, ...inv.args].map(shellQuote)].join(' ');
}

/** Run a cdk command with the terminal attached; resolves with its exit code. */
export function runInherited(inv: CdkInvocation): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(inv.command, [...inv.args], {
      cwd: inv.cwd,
      env: { ...process.env, ...inv.env },
      stdio: 'inherit',
    });
    child.on('error', (err) =>
      reject(new InfrastructureError(`could not start ${inv.command}: ${err.message}`)),
    );
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** The command that tears a lab down (printed after deploy). */
export function teardownCommand(labFile: string, flags: CommonAwsFlags): string {
  return [
    'npx proxylab destroy --lab',
    shellQuote(labFile),
    ...(flags.profile ? ['--profile', shellQuote(flags.profile)] : []),
    ...(flags.region ? ['--region', shellQuote(flags.region)] : []),
  ].join(' ');
}

/** What `destroy` leaves behind, from the lab file (said before destroying). */
export function retainedOnDestroy(lab: LabConfig): string[] {
  const kept: string[] = [];
  if (lab.results.retainOnDestroy) {
    kept.push(
      `the results bucket and its runs/ (results.retainOnDestroy); S3 storage stays billable until you delete it or the ${lab.results.expireAfterDays}-day expiry removes the objects`,
    );
  }
  if (lab.database.snapshotOnDestroy)
    kept.push(
      lab.database.engine === 'postgres'
        ? 'a final DB instance snapshot (postgres.snapshotOnDestroy): snapshot storage is billable until you delete it'
        : 'a final Aurora cluster snapshot (aurora.snapshotOnDestroy): snapshot storage is billable until you delete it',
    );
  return kept;
}

/** `cloud-20261121-104501` (UTC). */
export function defaultCloudRunId(now: Date = new Date()): string {
  const iso = now.toISOString();
  return `cloud-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
}

export function validateRunId(runId: string): string {
  if (!isRunId(runId)) {
    throw new UsageError(
      `run id must be letters, digits, ".", "_", "-" (no "/"), at most 128 characters; got "${runId}"`,
    );
  }
  return runId;
}

export function validateSuite(name: string): string {
  if (!SUITE_NAMES.includes(name))
    throw new UsageError(`--suite must be one of ${SUITE_NAMES.join(', ')}; got "${name}"`);
  getSuite(name);
  return name;
}

/**
 * The runners' arguments from the stack outputs and the lab file: proxies with their RDS names
 * and the lab's pool values (restored after sweeps), the collector for runner 0.
 */
export function runnerArgsFromOutputs(
  outputs: LabOutputs,
  lab: LabConfig | null,
  run: {
    runId: string;
    suite: string;
    region: string | null;
    startAt: string;
    /** The CLI's runner software version (runnerSoftwareVersion()); null: not checked. */
    expectVersion?: string | null;
    /** What each target adds per hour (the command prices them with lib/cost); absent: not priced. */
    targetPrices?: readonly TargetPrice[] | null;
  },
): RunRequestArgs {
  const proxies: ProxySpec[] = Object.entries(outputs.proxyEndpoints).map(([name, host]) => {
    const cfg = lab?.proxies.find((p) => p.name === name) ?? null;
    return {
      name,
      endpoint: parseEndpoint(`${host}:${outputs.databasePort}`, `stack output ProxyEndpoints.${name}`),
      dbProxyName: outputs.proxyNames[name] ?? name,
      lab: cfg
        ? {
            maxConnectionsPercent: cfg.maxConnectionsPercent,
            maxIdleConnectionsPercent: cfg.maxIdleConnectionsPercent,
          }
        : null,
      // what the runners record as the proxy's effective settings (plan.json)
      ...(cfg ? { settings: cfg.settings, kitSettings: proxyKitSettings(cfg) } : {}),
    };
  });
  const collector: CollectorSpec = {
    functionName: outputs.collectorFunctionName,
    clusterId: outputs.clusterIdentifier,
    instanceIds: outputs.dbInstanceIds,
    piResourceIds: lab && !lab.database.performanceInsights ? [] : outputs.dbInstanceResourceIds,
    proxies: proxies.map((p) => p.dbProxyName),
    // Burstable classes (db.t4g.*) get CPUCreditBalance; the outputs do not carry the class.
    ...(lab ? { instanceClasses: instanceClassesOf(lab, outputs.dbInstanceIds) } : {}),
    // Which instance metrics exist: RDS for PostgreSQL publishes no CommitLatency, Aurora no FreeStorageSpace.
    engine: outputs.databaseEngine,
  };
  return {
    runId: run.runId,
    suite: run.suite,
    // The lab's own scenarios travel with the run (script texts included); a catalog suite needs none.
    ...(run.suite === LAB_SUITE_NAME ? { scenarios: lab?.scenarios ?? null } : {}),
    // The lab's background load for its disruption scenarios travels resolved (lib/config/scenarios.ts).
    ...(lab?.disruptionLoad ? { disruptionLoad: lab.disruptionLoad } : {}),
    bucket: outputs.resultsBucketName,
    secretArn: outputs.dbSecretArn,
    proxies,
    poolers: Object.values(outputs.poolerEndpoints).map((p) => {
      const settings = lab?.poolers.find((c) => c.name === p.name)?.settings;
      return settings !== undefined ? { ...p, settings } : p;
    }),
    poolerAdminSecretArn: outputs.poolerAdminSecretArn,
    writerEndpoint: parseEndpoint(
      `${outputs.clusterEndpoint}:${outputs.databasePort}`,
      'stack output ClusterEndpoint',
    ),
    database: { engine: outputs.databaseEngine, instanceClass: outputs.dbInstanceClass },
    // What a cloud disruption may act on (RDS for PostgreSQL's ClusterIdentifier is its instance).
    databaseResources: {
      engine: outputs.databaseEngine,
      clusterId: outputs.databaseEngine === 'aurora-postgresql' ? outputs.clusterIdentifier : null,
      instanceIds: outputs.dbInstanceIds,
    },
    region: run.region,
    zones: componentZonesOf(outputs, proxies),
    targetPrices: run.targetPrices ?? null,
    startAt: run.startAt,
    collector,
    barrierTimeoutSec: 900,
    expectVersion: run.expectVersion ?? null,
  };
}

/**
 * Every component's zone as the stack outputs give it (ComponentZones), and each RDS Proxy as null:
 * a proxy has an endpoint in every subnet it is given, one per zone of the VPC, and which one a
 * connection reaches is DNS's choice. A stack without the output gives `null` (not said).
 */
export function componentZonesOf(
  outputs: Pick<LabOutputs, 'componentZones'>,
  proxies: readonly Pick<ProxySpec, 'name'>[],
): ComponentZone[] | null {
  const entries = Object.entries(outputs.componentZones);
  if (entries.length === 0) return null;
  return [
    ...entries.map(([component, zone]) => ({ component, zone })),
    ...proxies.map((p) => ({ component: `proxy:${p.name}`, zone: null })),
  ];
}

/**
 * The instance class of every DB instance of the lab (Aurora's writer and readers share
 * `aurora.instanceClass`; RDS for PostgreSQL has one instance on `postgres.instanceClass`);
 * serverless instances are `db.serverless`, never burstable.
 */
export function instanceClassesOf(lab: LabConfig, instanceIds: readonly string[]): Record<string, string> {
  const cls = databaseInstanceClass(lab.database) ?? 'db.serverless';
  return Object.fromEntries(instanceIds.map((id) => [id, cls]));
}

const TERMINAL_SSM = new Set([
  'Success',
  'Failed',
  'Cancelled',
  'TimedOut',
  'Cancelling',
  'Undeliverable',
  'Terminated',
  'InvalidPlatform',
  'AccessDenied',
  'DeliveryTimedOut',
  'ExecutionTimedOut',
]);

export interface CommandState {
  readonly instanceId: string;
  readonly status: string;
  readonly stderrTail: string;
}

async function commandStates(ssm: SSMClient, sent: readonly SentCommand[]): Promise<CommandState[]> {
  const states: CommandState[] = [];
  for (const c of sent) {
    try {
      const res = await ssm.send(
        new GetCommandInvocationCommand({ CommandId: c.commandId, InstanceId: c.instanceId }),
      );
      states.push({
        instanceId: c.instanceId,
        status: res.StatusDetails ?? res.Status ?? 'Unknown',
        stderrTail: (res.StandardErrorContent ?? '').trim().split('\n').slice(-3).join(' | '),
      });
    } catch (err) {
      // InvocationDoesNotExist right after SendCommand: not yet registered
      if (err instanceof Error && err.name === 'InvocationDoesNotExist')
        states.push({ instanceId: c.instanceId, status: 'Pending', stderrTail: '' });
      else throw err;
    }
  }
  return states;
}

export interface FollowOptions {
  readonly s3: S3Client;
  readonly ssm: SSMClient | null;
  readonly bucket: string;
  readonly runId: string;
  readonly sent: readonly SentCommand[];
  /** Only a manifest that ended after this counts as the end of this attempt. */
  readonly since: Date;
  readonly pollMs: number;
  readonly print: (line: string) => void;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => Date;
}

/** Print progress until the run ends (manifest) or every runner command ended (SSM). */
export async function followRun(opts: FollowOptions): Promise<RunProgress> {
  let last = '';
  for (;;) {
    const manifest = await readManifest(opts.s3, opts.bucket, opts.runId);
    const done = await countStepFiles(opts.s3, opts.bucket, opts.runId);
    const progress = computeProgress(opts.runId, manifest, done, opts.now());
    const line = formatProgress(progress);
    if (line !== last) {
      opts.print(line);
      last = line;
    }
    const endedNow =
      manifest !== null &&
      manifest.status !== 'running' &&
      manifest.endedAt !== null &&
      Date.parse(manifest.endedAt) >= opts.since.getTime();
    if (endedNow) return progress;
    if (opts.ssm && opts.sent.length > 0) {
      const states = await commandStates(opts.ssm, opts.sent);
      if (states.every((s) => TERMINAL_SSM.has(s.status))) {
        const failed = states.filter((s) => s.status !== 'Success');
        if (failed.length > 0) {
          throw new InfrastructureError(
            `runner command ended before the run did: ${failed.map((s) => `${s.instanceId} ${s.status}${s.stderrTail ? `: ${s.stderrTail}` : ''}`).join('; ')} ` +
              `(full output under s3://${opts.bucket}/${runKeyPrefix(opts.runId)}ssm/)`,
          );
        }
        return computeProgress(
          opts.runId,
          await readManifest(opts.s3, opts.bucket, opts.runId),
          await countStepFiles(opts.s3, opts.bucket, opts.runId),
          opts.now(),
        );
      }
    }
    await opts.sleep(opts.pollMs);
  }
}

/**
 * Verdict totals of a run in S3: every step verdict plus the scenario comparisons the manifest
 * holds (lib/suite/verdict.ts verdictTotals — the same count `proxylab local` makes). Every file is
 * validated; a malformed one is an error naming it and the field.
 */
export async function verdictCounts(s3: S3Client, bucket: string, runId: string): Promise<VerdictTotals> {
  const manifest = await readManifest(s3, bucket, runId);
  const records = await new S3ResultSink(s3, bucket, runId).readSteps();
  return verdictTotals(records, manifest?.scenarioVerdicts ?? []);
}
