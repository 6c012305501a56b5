/**
 * `proxylab extend --lab FILE --hours N`: move a deployed lab's expiry later by N hours.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { UsageError } from '../../lib/core/errors';
import { formatExpiresAt } from '../../lib/config/expiry';
// EXTEND_HOURS_MAX (lib/operator/extend.ts) is the schema's ttlHoursMax: read here without the AWS client.
import { LIMITS } from '../../lib/config/schema';
import { clientsModule, extendModule, loadModule, operatorModule, stackOutputsModule } from './lazy';

interface ExtendFlags {
  readonly lab: string;
  readonly hours: string;
  readonly profile?: string;
  readonly region?: string;
}

export function register(program: Command): void {
  program
    .command('extend')
    .description(
      "Move a deployed lab's expiry later: adds N hours to the deadline of its EventBridge Scheduler " +
        'schedule (`proxylab-<lab>-expiry`), the thing that deletes the stack. The proxylab:expires-at tags ' +
        'keep the deploy-time value; a new deploy restarts the clock at ttlHours from then.',
    )
    .requiredOption('--lab <file>', 'lab file (JSON) of the deployed lab')
    .requiredOption('--hours <n>', `hours to add to the current deadline (> 0, ≤ ${LIMITS.ttlHoursMax})`)
    .addOption(profileOption())
    .addOption(regionOption())
    .action(async (flags: ExtendFlags) => {
      const hours = Number(flags.hours);
      if (flags.hours.trim() === '' || !Number.isFinite(hours)) {
        throw new UsageError(`--hours must be a number, got "${flags.hours}"`);
      }
      extendModule().validateExtendHours(hours); // before any AWS client exists
      const lab = loadModule().loadLabFile(flags.lab);
      // Region: --region, else what the SDK finds (AWS_REGION, the profile), else the lab's region.
      const settings = operatorModule().awsSettings(flags, lab);
      const scheduler = clientsModule().createSchedulerClient({
        region: await clientsModule().requireRegion(settings),
        profile: settings.profile,
      });
      try {
        const r = await extendModule().extendLabExpiry(scheduler, {
          stackName: stackOutputsModule().stackNameFor(lab.name),
          hours,
        });
        process.stdout.write(
          `lab ${lab.name} (stack ${r.stackName}): expiry moved from ${formatExpiresAt(r.previousExpiresAt)} ` +
            `to ${formatExpiresAt(r.expiresAt)} (schedule ${r.scheduleName})\n`,
        );
      } finally {
        scheduler.destroy();
      }
    });
}
