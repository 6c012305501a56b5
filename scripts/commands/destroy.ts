/**
 * `proxylab destroy --lab FILE`: `cdk destroy --force` the lab's stack; says first what the lab
 * file keeps (results bucket, final snapshot), which stays billable. A lab whose suites switch its
 * database over with Blue/Green first has that run's leftovers deleted — a deployment, its green
 * copy, the old blue `-old1` — which CloudFormation does not know (lib/operator/blue-green-destroy.ts).
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { InfrastructureError } from '../../lib/core/errors';
import {
  blueGreenDestroyModule,
  clientsModule,
  loadModule,
  operatorModule,
  stackOutputsModule,
} from './lazy';

interface DestroyFlags {
  readonly lab: string;
  readonly profile?: string;
  readonly region?: string;
  readonly dryRun?: boolean;
}

export function register(program: Command): void {
  program
    .command('destroy')
    .description(
      "Delete a lab's stack with `cdk destroy --force`: database, proxies, runners, network, collector and " +
        '(unless results.retainOnDestroy) the results bucket with its runs. Fetch runs first (proxylab fetch).',
    )
    .requiredOption('--lab <file>', 'lab file (JSON) of the deployed lab')
    .addOption(profileOption())
    .addOption(regionOption())
    .option('--dry-run', 'print what would be kept and the cdk command, destroy nothing')
    .action(async (flags: DestroyFlags) => {
      const lab = loadModule().loadLabFile(flags.lab);
      const settings = operatorModule().awsSettings(flags, lab);
      const kept = operatorModule().retainedOnDestroy(lab);
      const stack = stackOutputsModule().stackNameFor(lab.name);
      // A dry run makes no AWS call, so it cannot know whether the stack exists: it says what a
      // destroy would do, not that one is happening.
      const what = flags.dryRun
        ? `Dry run: would destroy stack ${stack} if it is deployed (not checked: a dry run makes no AWS call)`
        : `Destroying stack ${stack}`;
      process.stdout.write(
        kept.length === 0
          ? `${what}: nothing ${flags.dryRun ? 'would be' : 'is'} retained (results bucket emptied and deleted, no final snapshot).\n`
          : `${what}; retained afterwards:\n${kept.map((k) => `  - ${k}\n`).join('')}`,
      );
      const inv = operatorModule().cdkInvocation('destroy', flags.lab, settings);
      process.stdout.write(
        `${flags.dryRun ? 'would run' : 'running'}: ${operatorModule().formatInvocation(inv)}\n`,
      );
      const blueGreen = blueGreenDestroyModule().labReplacesDatabase(lab);
      if (blueGreen)
        process.stdout.write(
          `${flags.dryRun ? 'would delete' : 'deleting'} first what a Blue/Green switchover left outside the stack (deployments of the lab's database, their green copies, the old blue -old1)\n`,
        );
      if (flags.dryRun) return;
      if (blueGreen) {
        const clients = clientsModule().createAwsClients(settings);
        const left = await blueGreenDestroyModule().destroyBlueGreenLeftovers(lab, clients, (line) =>
          process.stdout.write(`  ${line}\n`),
        );
        if (left.length > 0)
          throw new InfrastructureError(
            `Blue/Green leftovers of lab ${lab.name} could not be deleted, so the stack is not destroyed (its database may be part of a deployment): ${left.join('; ')}. Fix the cause and run destroy again`,
          );
      }
      const code = await operatorModule().runInherited(inv);
      if (code !== 0)
        throw new InfrastructureError(
          `cdk destroy of stack ${stackOutputsModule().stackNameFor(lab.name)} exited with ${code}; see its output above`,
        );
      process.stdout.write(`Stack ${stackOutputsModule().stackNameFor(lab.name)} deleted.\n`);
    });
}
