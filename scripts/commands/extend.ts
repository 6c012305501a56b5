/**
 * `proxylab extend --lab FILE --hours N`: move a deployed lab's expiry later by N hours.
 */
import type { Command } from 'commander';
import { profileOption, regionOption } from './aws-options';
import { UsageError } from '../../lib/core/errors';
import { createSchedulerClient, requireRegion } from '../../lib/aws/clients';
import { awsSettings } from '../../lib/operator/operator';
import { loadLabFile } from '../../lib/config/load';
import { stackNameFor } from '../../lib/config/stack-outputs';
import { formatExpiresAt } from '../../lib/config/expiry';
import { EXTEND_HOURS_MAX, extendLabExpiry, validateExtendHours } from '../../lib/operator/extend';

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
    .requiredOption('--hours <n>', `hours to add to the current deadline (> 0, ≤ ${EXTEND_HOURS_MAX})`)
    .addOption(profileOption())
    .addOption(regionOption())
    .action(async (flags: ExtendFlags) => {
      const hours = Number(flags.hours);
      if (flags.hours.trim() === '' || !Number.isFinite(hours)) {
        throw new UsageError(`--hours must be a number, got "${flags.hours}"`);
      }
      validateExtendHours(hours); // before any AWS client exists
      const lab = loadLabFile(flags.lab);
      // Region: --region, else what the SDK finds (AWS_REGION, the profile), else the lab's region.
      const settings = awsSettings(flags, lab);
      const scheduler = createSchedulerClient({
        region: await requireRegion(settings),
        profile: settings.profile,
      });
      try {
        const r = await extendLabExpiry(scheduler, { stackName: stackNameFor(lab.name), hours });
        process.stdout.write(
          `lab ${lab.name} (stack ${r.stackName}): expiry moved from ${formatExpiresAt(r.previousExpiresAt)} ` +
            `to ${formatExpiresAt(r.expiresAt)} (schedule ${r.scheduleName})\n`,
        );
      } finally {
        scheduler.destroy();
      }
    });
}
