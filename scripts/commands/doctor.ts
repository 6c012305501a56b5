/**
 * `proxylab doctor --lab FILE`: check a deployed lab end to end (lib/operator/doctor.ts) and print a
 * ✓/✗ checklist with the fix for each ✗. Exit 0 when every check holds, 1 otherwise, 2 for usage
 * errors. It never changes the lab.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { UsageError } from '../../lib/core/errors';
import {
  clientsModule,
  doctorModule,
  loadModule,
  operatorModule,
  outputsModule,
  runnerBundleModule,
  stagingKeyModule,
} from './lazy';

interface DoctorFlags {
  readonly lab: string;
  readonly outputs?: string;
  readonly profile?: string;
  readonly region?: string;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check a deployed lab end to end, in a few minutes and a few cents: the stack, that the hosts may decrypt ' +
        "the CDK staging bucket's KMS key, the expiry schedule, " +
        'parameter groups in sync, and on each runner (through SSM) the runner software version, Node and ' +
        'pgbench, the DB secret, TLS connections to the writer and every proxy with max_connections as the ' +
        'lab says, S3 under runs/, each PgBouncer pooler (data port with TLS, admin consoles at the pinned ' +
        'version, stats port); the Spot request of each spot runner (tagged for the stack canceller, active, ' +
        'its own); then the collector returning CloudWatch and PI data. Prints ✓/✗ with the ' +
        'fix for each ✗. Never changes the lab (it writes only under runs/proxylab-doctor/). ' +
        'Exit 0 all checks hold, 1 one failed, 2 usage error.',
    )
    .requiredOption('--lab <file>', 'lab file (JSON) of the deployed lab')
    .option('--outputs <file>', 'read the stack outputs from this file instead of CloudFormation')
    .addOption(profileOption())
    .addOption(regionOption())
    .action(async (flags: DoctorFlags) => {
      const lab = loadModule().loadLabFile(flags.lab);
      const settings = operatorModule().awsSettings(flags, lab);
      const region = await clientsModule().requireRegion(settings);
      const clients = clientsModule().createAwsClients({ ...settings, region });
      const outputs = await outputsModule().readLabOutputs(
        lab.name,
        flags.outputs,
        () => clients.cloudformation,
      );
      if (outputs.labName !== lab.name)
        throw new UsageError(`the outputs are of lab "${outputs.labName}", not "${lab.name}"`);
      const checks = await doctorModule().runDoctor(lab, flags.lab, outputs, {
        ...clients,
        scheduler: clientsModule().createSchedulerClient({ ...settings, region }),
        ec2: clientsModule().createEc2Client({ ...settings, region }),
        // the hosts can decrypt the CDK staging bucket's objects (its KMS key's policy)
        stagingKey: stagingKeyModule().awsStagingKeyReader(
          clients.s3,
          clientsModule().createKmsClient({ ...settings, region }),
        ),
        softwareVersion: runnerBundleModule().runnerSoftwareVersion(),
        region,
        now: () => new Date(),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      });
      process.stdout.write(doctorModule().formatChecks(checks));
      if (checks.some((c) => !c.ok)) process.exitCode = 1;
    });
}
