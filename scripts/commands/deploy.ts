/**
 * `proxylab deploy --lab FILE`: print the estimated cost, refuse over budget unless --force, warn
 * when the runners look too small for the lab's suites, then `cdk deploy` the lab and print the
 * teardown command.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { InfrastructureError, UsageError } from '../../lib/core/errors';
import { shellQuote } from '../../lib/core/shell';
import type { LabConfig } from '../../lib/config/types';
import type { PriceTable } from '../../lib/cost/price-table';
import { poolerSourcePath } from '../../lib/poolers/sources';
import type { AwsSettings } from '../../lib/aws/clients';
import { formatExpiresAt } from '../../lib/config/expiry';
import {
  availabilityZonesModule,
  clientsModule,
  extendModule,
  loadModule,
  operatorModule,
  outputsModule,
  parametersModule,
  poolerSourcesModule,
  preflightModule,
  priceCheckModule,
  pricesModule,
  stackOutputsModule,
} from './lazy';

interface DeployFlags {
  readonly lab: string;
  readonly profile?: string;
  readonly region?: string;
  readonly maxHourly?: string;
  readonly force?: boolean;
  readonly dryRun?: boolean;
}

export function register(program: Command): void {
  program
    .command('deploy')
    .description(
      'Deploy a lab (Aurora PostgreSQL, RDS Proxies, runners, results bucket, collector) with `cdk deploy`. ' +
        "Prints the estimated hourly cost first and refuses when it exceeds --max-hourly or the lab's " +
        'budget.maxHourlyUsd (unless --force); prints the teardown command at the end. Needs a bootstrapped ' +
        'account/region (`npx cdk bootstrap`).',
    )
    .requiredOption('--lab <file>', 'lab file (JSON), e.g. labs/default.json')
    .addOption(profileOption())
    .addOption(regionOption())
    .option(
      '--max-hourly <usd>',
      "refuse when the estimate's upper bound exceeds this many US dollars per hour (default: the lab's budget.maxHourlyUsd)",
    )
    .option('--force', 'deploy even when over budget')
    .option('--dry-run', 'print the estimate and the cdk command, deploy nothing')
    .action((flags: DeployFlags) => deployCommand(flags));
}

/**
 * `proxylab deploy`: the cost gate, the pooler sources, the zones, `cdk deploy`, then what
 * CloudFormation leaves undone.
 */
async function deployCommand(flags: DeployFlags): Promise<void> {
  const lab = loadModule().loadLabFile(flags.lab);
  const settings = operatorModule().awsSettings(flags, lab);
  await costGate(lab, flags, settings);
  await stagePoolerSources(lab, flags);
  const zoneArgs = await chooseZoneArgs(lab, flags, settings);
  const inv = operatorModule().cdkInvocation('deploy', flags.lab, settings, process.cwd(), zoneArgs);
  process.stdout.write(
    `\n${flags.dryRun ? 'would run' : 'running'}: ${operatorModule().formatInvocation(inv)}\n`,
  );
  if (flags.dryRun) return;
  const code = await operatorModule().runInherited(inv);
  if (code !== 0)
    throw new InfrastructureError(
      `cdk deploy of stack ${stackOutputsModule().stackNameFor(lab.name)} exited with ${code}; see its output above`,
    );
  await afterDeploy(lab, settings);
  process.stdout.write(
    `\nLab ${lab.name} is up (stack ${stackOutputsModule().stackNameFor(lab.name)}). It costs money every hour it exists.\n` +
      `Run a suite:   npx proxylab run --lab ${shellQuote(flags.lab)} --suite ${lab.suites[0] ?? 'quick'}\n` +
      `Tear it down:  ${operatorModule().teardownCommand(flags.lab, flags)}\n`,
  );
}

/**
 * The estimate for the region cdk deploys to and the budget guard, with the lab's warnings: throws
 * when over budget, or for a region without prices unless --force.
 */
async function costGate(lab: LabConfig, flags: DeployFlags, settings: AwsSettings): Promise<void> {
  const maxHourly = flags.maxHourly === undefined ? undefined : Number(flags.maxHourly);
  if (maxHourly !== undefined && (flags.maxHourly?.trim() === '' || !Number.isFinite(maxHourly))) {
    throw new UsageError(`--max-hourly must be a number of US dollars per hour, got "${flags.maxHourly}"`);
  }
  // Price the region cdk will deploy to (flag, AWS_REGION, the lab's region, or the profile's),
  // resolved without an AWS call, then priced as every command prices a region (pricesFor: the
  // Price List, its cache, us-east-1's committed table): the estimate and the budget guard are
  // for that region, never another one's prices. A region without prices is refused as `cost`
  // and `validate` refuse it; --force deploys anyway, with no estimate and no budget check.
  const deployRegion = await clientsModule().requireRegion(settings);
  // An existing VPC binds the stack to the lab's account and region (the lookup): another
  // region would deploy nothing but a CDK error.
  if (lab.network.mode === 'existing' && deployRegion !== lab.network.region)
    throw new UsageError(
      `the deploy region ${deployRegion} (--region, AWS_REGION or the profile) differs from the lab's region ${lab.network.region}, to which its existing VPC ${lab.network.vpcId} binds the stack`,
    );
  const regionFrom = flags.region !== undefined ? 'flag' : 'deploy';
  // What `validate` warns about, and the runner-capacity warnings: printed with --dry-run too,
  // before an over-budget refusal (lib/cost/preflight.ts deployWarningLines).
  const printWarnings = (
    capacity: readonly { id: string; message: string }[] = [],
    table: PriceTable | null = null,
  ): void => {
    for (const line of preflightModule().deployWarningLines(lab, capacity, table))
      process.stdout.write(`${line}\n`);
  };
  const prices = await pricesModule().preparePrices(deployRegion, {
    ...(settings.profile !== undefined ? { profile: settings.profile } : {}),
  });
  if (!prices.ok) {
    const why = `region ${deployRegion} ${priceCheckModule().unpricedRegionMessage(deployRegion)}`;
    if (!flags.force)
      throw new UsageError(
        `not deployed: ${why}. --force deploys without an estimate and without the budget check`,
        { code: 'unpriced-region' },
      );
    process.stdout.write(
      `warning: ${why}; deploying anyway because --force was given: no cost estimate, no budget check\n`,
    );
    printWarnings();
  } else {
    const pre = preflightModule().deployPreflight(lab, {
      region: deployRegion,
      regionFrom,
      ...(maxHourly !== undefined ? { maxHourlyUsd: maxHourly } : {}),
      force: flags.force ?? false,
      table: prices.table,
    });
    process.stdout.write(`${pricesModule().pricesLine(prices)}\n`);
    process.stdout.write(pre.table);
    process.stdout.write(`${pre.budget.message}\n`);
    printWarnings(pre.warnings, prices.table);
    if (!pre.budget.allowed) throw new UsageError('not deployed: over budget (see above)');
  }
}

/**
 * Hosts without internet get each pinned pooler release from the CDK staging bucket: download it
 * here, keep it only with its published SHA-256 (lib/operator/pooler-sources.ts); --dry-run says what
 * it would stage.
 */
async function stagePoolerSources(lab: LabConfig, flags: DeployFlags): Promise<void> {
  if (poolerSourcesModule().needsStagedPoolerSources(lab)) {
    if (flags.dryRun)
      for (const r of poolerSourcesModule().labPoolerReleases(lab))
        process.stdout.write(
          `would stage ${r.product} ${r.version} from ${r.url} (SHA-256 ${r.sha256}) at ${poolerSourcePath(r)}\n`,
        );
    else
      for (const staged of await poolerSourcesModule().stagePoolerSources(lab))
        process.stdout.write(
          `${staged.release.product} ${staged.release.version} ${staged.action === 'kept' ? 'already staged' : 'staged'} at ${staged.file} (${staged.bytes} bytes, SHA-256 ${staged.release.sha256} as published)\n`,
        );
  }
}

/**
 * The cdk context arguments for the zones, by zone ID: runners where their type is offered, none
 * where RDS Proxy is not (lib/operator/availability-zones.ts). None with --dry-run.
 */
async function chooseZoneArgs(lab: LabConfig, flags: DeployFlags, settings: AwsSettings): Promise<string[]> {
  let zoneArgs: string[] = [];
  const network = lab.network;
  if (!flags.dryRun && network.mode === 'existing') {
    // The VPC's zones are its subnets'; only the runners' zones are chosen (lib/operator/availability-zones.ts).
    const zones = await availabilityZonesModule().chooseExistingVpcZones(
      clientsModule().createEc2Client(settings),
      {
        instanceType: lab.runners.instanceType,
        rdsProxy: lab.proxies.length > 0,
        vpcId: network.vpcId,
        subnetIds: network.subnetIds,
      },
    );
    zoneArgs = ['-c', `${stackOutputsModule().AZ_CONTEXT_KEYS.runners}=${zones.runners.join(',')}`];
  } else if (!flags.dryRun) {
    const zones = await availabilityZonesModule().chooseLabZones(clientsModule().createEc2Client(settings), {
      instanceType: lab.runners.instanceType,
      rdsProxy: lab.proxies.length > 0,
    });
    for (const z of zones.excluded)
      process.stdout.write(`zone ${z.name} (${z.id}) left out: RDS Proxy does not support it\n`);
    zoneArgs = availabilityZonesModule().zoneContextArgs(zones, stackOutputsModule().AZ_CONTEXT_KEYS);
  }
  return zoneArgs;
}

/**
 * What CloudFormation leaves undone: static parameters wait for a reboot (apply them now), and the
 * expiry clock started at synth, before a 20–30 minute deploy (restart it now).
 */
async function afterDeploy(lab: LabConfig, settings: AwsSettings): Promise<void> {
  const stackName = stackOutputsModule().stackNameFor(lab.name);
  const clients = clientsModule().createAwsClients(settings);
  const outputs = await outputsModule().describeLabOutputs(clients.cloudformation, stackName);
  const rebooted = await parametersModule().applyPendingReboots(clients.rds, outputs.dbInstanceIds, {
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => new Date(),
    print: (line) => process.stdout.write(`${line}\n`),
  });
  if (rebooted.length > 0) process.stdout.write(`parameters applied on ${rebooted.join(', ')}\n`);
  if (lab.ttlHours !== null) {
    const expiresAt = await extendModule().restartLabExpiry(clientsModule().createSchedulerClient(settings), {
      stackName,
      ttlHours: lab.ttlHours,
    });
    if (expiresAt)
      process.stdout.write(
        `expiry: the lab deletes itself at ${formatExpiresAt(expiresAt)} (ttlHours from now)\n`,
      );
  }
}
