/**
 * `proxylab run --lab FILE --suite NAME`: start a suite on the lab's runners through SSM
 * (AWS-RunShellScript, one command per runner), print the run id, follow progress from S3 until
 * the run ends (`--detach` returns at once). Runner 0 invokes the metrics collector at the end.
 */
import * as path from 'node:path';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { runExitCode } from '../../lib/suite/verdict';
import { UsageError } from '../../lib/core/errors';
import { formatDuration } from '../../lib/core/format';
import { decideRunExpiry } from '../../lib/operator/run-window';
import { appHostsFlag } from '../../lib/cost/production';
import type * as RunPlanModule from '../../lib/cost/run-plan';
import type { RunPlanPreview } from '../../lib/cost/run-plan';
import { formatExpiresAt } from '../../lib/config/expiry';
import { checkDisruptionGrants, disruptionNotice } from '../../lib/config/disruptions';
import { labWarnings } from '../../lib/config/warnings';
import type { LabConfig } from '../../lib/config/types';
import type { LabOutputs } from '../../lib/operator/outputs';
import type { AwsSettings } from '../../lib/aws/clients';
import type { PriceTable } from '../../lib/cost/price-table';
import type { TargetPrice } from '../../lib/suite/types';
import {
  clientsModule,
  extendModule,
  labSourceModule,
  operatorModule,
  outputsModule,
  priceCheckModule,
  pricesModule,
  runLabModule,
  runPlanModule,
  runRequestModule,
  runnerBundleModule,
  scenariosModule,
  ssmModule,
  targetPricesModule,
  targetsModule,
} from './lazy';

interface RunFlags {
  readonly lab: string;
  readonly suite: string;
  readonly runId?: string;
  readonly detach?: boolean;
  readonly dryRun?: boolean;
  readonly outputs?: string;
  readonly profile?: string;
  readonly region?: string;
  readonly pollSec: string;
  readonly extend?: boolean;
  readonly appHosts?: string;
}

export function register(program: Command): void {
  program
    .command('run')
    .description(
      "Run a suite on a deployed lab's runners: one SSM SendCommand (AWS-RunShellScript) per runner, each " +
        'step written to s3://<bucket>/runs/<runId>/ as it ends; follows progress (steps done/total, ETA) until ' +
        'the run ends. Re-running with the same --run-id resumes without repeating finished steps. Exit 0 when ' +
        'every verdict held, 1 when one broke or the run failed, 2 for usage errors.',
    )
    .requiredOption('--lab <file>', 'lab file (JSON) of the deployed lab')
    .requiredOption(
      '--suite <name>',
      "suite to run (proxylab local --help lists them; e1…e5 are the published experiments; `lab` is the lab file's own scenarios)",
    )
    .option(
      '--run-id <id>',
      'run id (letters, digits, . _ -); default cloud-<UTC date>-<time>; an existing id resumes',
    )
    .option('--detach', 'start the run and return at once (follow later with proxylab status RUNID)')
    .option(
      '--dry-run',
      'print the run plan (as `proxylab plan` does, on stderr) and the exact SendCommand requests as JSON, and send nothing (reads the stack outputs from CloudFormation, with --outputs FILE no AWS call at all; where they cannot be read, placeholders named as such stand in for them)',
    )
    .option(
      '--outputs <file>',
      'read the stack outputs from this file (cdk --outputs-file JSON, which `proxylab deploy` writes to cdk.out/outputs-<lab file name>.json, or DescribeStacks JSON) instead of CloudFormation',
    )
    .option(
      '--extend',
      "when the suite's estimated end is past the lab's expiry, move the expiry later by the hours missing (default: refuse)",
    )
    .option(
      '--app-hosts <n>',
      "price each self-hosted pooler in the decision table's production column on N application hosts (as `cost --app-hosts N` does) instead of as an HA pair behind an NLB",
    )
    .option('--poll-sec <s>', 'progress poll interval in seconds', '15')
    .addOption(profileOption())
    .addOption(regionOption())
    .action((flags: RunFlags) => runCommand(flags));
}

/**
 * Everything the user typed, checked before the first AWS call: the lab, the suite, its plan (shown
 * or its warnings printed), the lab's warnings, the run id, the poll interval, the disruption grants.
 */
function checkBeforeAws(flags: RunFlags) {
  // Read once: the text validated is the text the run keeps (runs/<runId>/lab.json).
  const { lab, record: labRecord } = labSourceModule().loadLabSource(flags.lab);
  const resolved = scenariosModule().resolveSuiteFlag(flags.suite, lab);
  const suite = resolved.name;
  // The plan `proxylab plan` shows: steps, duration, cost, what is not measured (no AWS call).
  const plan = planOrWarn(lab, suite);
  // Shown before the first AWS call, so that the preview needs neither credentials nor a
  // deployed lab: the plan in words (dry run) or what the suite leaves out (nothing skipped silently).
  if (flags.dryRun) {
    if (plan !== null) process.stderr.write(`${runPlanModule().formatRunPlan(plan)}\n`);
  } else {
    for (const w of plan?.warnings ?? []) {
      if (w.id !== 'proxylab:outlives-lab') process.stdout.write(`warning: ${w.message}\n`);
    }
  }
  // The lab's own warnings (pool shares over 100 %, …), from the lab file alone.
  for (const w of labWarnings(lab)) process.stderr.write(`warning [${w.id}] ${w.path}: ${w.message}\n`);
  const now = new Date();
  const runId = operatorModule().validateRunId(flags.runId ?? operatorModule().defaultCloudRunId(now));
  const appHosts = appHostsFlag(flags.appHosts);
  const pollSec = Number(flags.pollSec);
  if (!Number.isFinite(pollSec) || pollSec < 1)
    throw new UsageError(`--poll-sec must be a number ≥ 1, got "${flags.pollSec}"`);
  // A disruption the runner role was not granted at deploy time is refused now, not at T0.
  checkDisruptionGrants(suite, lab.suites, lab.database.engine, flags.lab);
  return { lab, labRecord, resolved, suite, plan, now, runId, pollSec, appHosts };
}

/** `proxylab run`: checks, the stack outputs, the request in S3, one SendCommand per runner, then follows. */
async function runCommand(flags: RunFlags): Promise<void> {
  const { lab, labRecord, resolved, suite, plan, now, runId, pollSec, appHosts } = checkBeforeAws(flags);
  const settings = operatorModule().awsSettings(flags, lab);
  // The runners need the region explicitly (the SDK on EC2 does not read it from IMDS).
  const region = await clientsModule().requireRegion(settings);
  // Priced as every command prices a region (lib/cost/pricelist/prices-for.ts), for the decision table.
  const prices = await pricesModule().preparePrices(region, {
    ...(settings.profile !== undefined ? { profile: settings.profile } : {}),
  });
  const stackName = outputsModule().stackNameFor(lab.name);
  const clients = clientsModule().createAwsClients(settings);
  const { outputs, placeholders } = await stackOutputs(flags, lab, () => clients.cloudformation);
  if (outputs.labName !== lab.name)
    throw new UsageError(`the outputs are of lab "${outputs.labName}", not "${lab.name}"`);
  const base = operatorModule().runnerArgsFromOutputs(outputs, lab, {
    runId,
    suite,
    region,
    startAt: now.toISOString(),
    // The runners refuse to run another version of the runner software than this checkout's.
    expectVersion: runnerBundleModule().runnerSoftwareVersion(),
    // What each target adds per hour in the region the lab runs in, for the decision table.
    targetPrices: runTargetPrices(lab, region, prices.ok ? prices.table : null, appHosts),
  });
  const request = runRequestModule().buildRunRequest(base, outputs.runnerInstanceIds.length);
  const plans = ssmModule().buildRunCommands(outputs.runnerInstanceIds, request);
  // What this run will disrupt on the lab (failover, reboot), said before anything starts.
  const disrupts = disruptionNotice(
    resolved,
    {
      engine: outputs.databaseEngine,
      clusterId: base.databaseResources?.clusterId ?? null,
      instanceIds: base.databaseResources?.instanceIds ?? [],
      // the lab file's version (a minor upgrade's "from"; the runner reads the deployed one)
      engineVersion: lab.database.engineVersion,
    },
    request.runnerCount,
    Object.values(outputs.poolerEndpoints),
  );
  if (flags.dryRun) {
    // (the plan in words went to stderr above) On stdout the plan, the request that would be
    // written to S3, what it disrupts, then the exact SendCommand requests, as one JSON document.
    process.stdout.write(
      JSON.stringify(
        {
          plan,
          request,
          disrupts: disrupts.map((l) => l.trim()),
          sendCommands: plans.map((p) => p.input),
          // Values that are not the lab's: what the deployed stack decides, read from neither (see stderr).
          placeholders,
        },
        null,
        2,
      ) + '\n',
    );
    return;
  }
  if (disrupts.length > 0)
    process.stdout.write(
      `run ${runId} disrupts the lab's own database (docs/disruptions.md):\n${disrupts.join('\n')}\n`,
    );
  // A resume (the same --run-id) of a run whose lab file changed is refused before anything changes.
  const bucket = outputs.resultsBucketName;
  const labState = await runLabModule().checkRunLab(clients.s3, bucket, runId, labRecord);
  // A run must end before the lab deletes itself (and its results bucket).
  if (lab.ttlHours !== null && plan !== null)
    await checkLabExpiry({ flags, suite, plan, now, stackName, settings: { ...settings, region } });
  // The runners read what to run from S3: the lab file and the request go there before any of them starts.
  await runLabModule().writeRunLab(clients.s3, bucket, runId, labRecord, labState);
  await runRequestModule().writeRunRequest(clients.s3, request);
  const sent = await ssmModule().sendRunCommands(clients.ssm, plans);
  process.stdout.write(
    `run ${runId}: suite ${suite} on ${sent.length} runner(s) (${sent.map((s) => `${s.instanceId}: ${s.commandId}`).join(', ')})\n` +
      `results: s3://${outputs.resultsBucketName}/runs/${runId}/\n`,
  );
  if (flags.detach) {
    process.stdout.write(
      `detached. Follow: npx proxylab status ${runId} --lab ${flags.lab}; then: npx proxylab fetch ${runId} --lab ${flags.lab}\n`,
    );
    return;
  }
  await followToEnd(flags, clients, outputs.resultsBucketName, { runId, sent, now, pollSec });
}

/** Follows the run from S3 until it ends, then prints its verdicts and sets the exit code. */
async function followToEnd(
  flags: RunFlags,
  clients: ReturnType<ReturnType<typeof clientsModule>['createAwsClients']>,
  bucket: string,
  run: {
    readonly runId: string;
    readonly sent: Awaited<ReturnType<ReturnType<typeof ssmModule>['sendRunCommands']>>;
    readonly now: Date;
    readonly pollSec: number;
  },
): Promise<void> {
  const { runId, sent, now, pollSec } = run;
  process.stdout.write('following progress (Ctrl-C stops following, not the run)…\n');
  const progress = await operatorModule().followRun({
    s3: clients.s3,
    ssm: clients.ssm,
    bucket,
    runId,
    sent,
    since: now,
    pollMs: pollSec * 1000,
    print: (line) => process.stdout.write(`${line}\n`),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => new Date(),
  });
  const counts = await operatorModule().verdictCounts(clients.s3, bucket, runId);
  process.stdout.write(
    `run ${runId} ${progress.status} in ${formatDuration(progress.elapsedSec)}: ${counts.held} verdicts held, ${counts.broke} broken (${counts.comparisonsBroke} of them scenario comparisons), ${counts.informational} informational.\n` +
      `Fetch it: npx proxylab fetch ${runId} --lab ${flags.lab}\n`,
  );
  // The same rule as `proxylab local`: step verdicts and judged comparisons (lib/suite/verdict.ts).
  if (runExitCode(progress.status === 'completed', counts) !== 0) process.exitCode = 1;
}

/**
 * Refuses a run whose estimated end is past the lab's expiry, or (`--extend`) moves the expiry by
 * the hours missing. Without scheduler:GetSchedule the run still starts, saying what was not checked.
 */
async function checkLabExpiry(o: {
  readonly flags: RunFlags;
  readonly suite: string;
  readonly plan: RunPlanPreview;
  readonly now: Date;
  readonly stackName: string;
  readonly settings: AwsSettings;
}): Promise<void> {
  const { flags, plan, now, stackName } = o;
  const scheduler = clientsModule().createSchedulerClient(o.settings);
  let expiresAt: Date | null = null;
  try {
    expiresAt = await extendModule().readLabExpiry(scheduler, stackName);
  } catch (err) {
    process.stdout.write(
      `warning: could not read the expiry schedule (${err instanceof Error ? err.message : String(err)}); not checking that the run ends before the lab expires\n`,
    );
  }
  const decision = decideRunExpiry({
    now,
    estimatedSec: plan.duration.totalSec,
    expiresAt,
    allowExtend: flags.extend ?? false,
    suite: o.suite,
    labFile: flags.lab,
    usdPerHour: plan.cost.priced ? plan.cost.usdPerHour : null,
  });
  if (decision.kind !== 'extend') return;
  const ext = await extendModule().extendLabExpiry(scheduler, { stackName, hours: decision.hours, now });
  process.stdout.write(
    `extended the lab by ${decision.hours} h: it now expires at ${formatExpiresAt(ext.expiresAt)} (run ends about ${formatExpiresAt(decision.estimatedEnd)})\n`,
  );
}

/**
 * The stack outputs (`--outputs FILE`, else DescribeStacks). A dry run shows its requests even where
 * they cannot be read (no credentials, nothing deployed yet): with placeholders for what the
 * deployed stack decides, each named as one (lib/operator/outputs.ts), listed on stderr with the
 * ways to the real values. Only without `--outputs`: a file the user names is read or refused.
 */
async function stackOutputs(
  flags: RunFlags,
  lab: LabConfig,
  cloudformation: () => CloudFormationClient,
): Promise<{ readonly outputs: LabOutputs; readonly placeholders: readonly string[] }> {
  try {
    return {
      outputs: await outputsModule().readLabOutputs(lab.name, flags.outputs, cloudformation),
      placeholders: [],
    };
  } catch (err) {
    if (!flags.dryRun || flags.outputs !== undefined) throw err;
    const stand = outputsModule().placeholderLabOutputs(lab);
    const stack = outputsModule().stackNameFor(lab.name);
    process.stderr.write(
      `note: the stack outputs were not read (${err instanceof Error ? err.message : String(err)}), so the request ` +
        'and the SendCommand requests below hold PLACEHOLDERS where the deployed stack decides a value:\n' +
        stand.placeholders.map((p) => `  ${p}\n`).join('') +
        'For the real values, give --outputs FILE with the stack outputs (`cdk deploy --outputs-file FILE` writes them; ' +
        `\`proxylab deploy --lab ${flags.lab}\` writes cdk.out/outputs-${path.basename(flags.lab, '.json')}.json), ` +
        `or run with AWS credentials that may read stack ${stack} (cloudformation:DescribeStacks).\n`,
    );
    return stand;
  }
}

/**
 * The run's plan from the lab file, or null — with a warning — when it cannot be made (the lab's
 * max_connections unknown): the run still starts, its expiry is then not checked.
 */
function planOrWarn(
  lab: Parameters<typeof RunPlanModule.previewRun>[0],
  suite: string,
): RunPlanPreview | null {
  try {
    return runPlanModule().previewRun(lab, suite);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stdout.write(`warning: ${err.message}; not checking that the run ends before the lab expires\n`);
    return null;
  }
}

/**
 * Each target's price per hour in `region` at `table` (the region's prices the command resolved),
 * its production option a pooler on `appHosts` application hosts when given (`--app-hosts N`), else
 * an HA pair; in a region without prices (a lab deployed with
 * `deploy --force`), every target is recorded as not priced, saying why, and the run goes on.
 */
export function runTargetPrices(
  lab: LabConfig,
  region: string,
  table: PriceTable | null,
  appHosts?: number,
): TargetPrice[] {
  if (table && table.region === region)
    return targetPricesModule().targetPrices(lab, {
      region,
      regionFrom: 'deploy',
      table,
      ...(appHosts !== undefined ? { appHosts } : {}),
    });
  return targetsModule()
    .labTargets(lab)
    .map((t) => ({
      target: t.ref.name,
      usdPerHour: null,
      basis: `not priced: region ${region} ${priceCheckModule().unpricedRegionMessage(region)}`,
    }));
}
