/**
 * `proxylab cost FILE`: what a lab costs per hour, per 8-hour day and per 30-day month left
 * running, with a line per billable part, from the region's prices with their date: the AWS Price
 * List (cached per region and date), else its cache, else for us-east-1 the committed table.
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/core/errors';
import { loadLabFile } from '../../lib/config/load';
import { DEFAULT_USAGE, estimateCost } from '../../lib/cost/estimate';
import { formatCostTable } from '../../lib/cost/format';
import type { LabConfig } from '../../lib/config/types';
import { DEFAULT_PRICE_REGION } from '../../lib/cost/price-table';
import { appHostsFlag, formatProductionBill, productionBill } from '../../lib/cost/production';
import { pricesModule } from './lazy';

interface CostFlags {
  readonly lab?: string;
  readonly region?: string;
  readonly json?: boolean;
  readonly storageGb?: string;
  readonly ioMillionsPerHour?: string;
  readonly endpointGbPerHour?: string;
  readonly appHosts?: string;
}

function nonNegative(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${flag} must be a number ≥ 0, got "${text}"`);
  return n;
}

/**
 * `--storage-gb` and `--io-millions-per-hour` are assumptions about an Aurora cluster volume; an RDS
 * for PostgreSQL instance bills its provisioned `postgres.allocatedStorageGb` instead. Given on such
 * a lab they change nothing, and the user is told so rather than left to think they did.
 */
export function auroraOnlyFlagsNote(
  lab: LabConfig,
  flags: Pick<CostFlags, 'storageGb' | 'ioMillionsPerHour'>,
): string | null {
  if (lab.database.engine === 'aurora-postgresql') return null;
  const given = [
    flags.storageGb !== undefined ? '--storage-gb' : '',
    flags.ioMillionsPerHour !== undefined ? '--io-millions-per-hour' : '',
  ].filter((f) => f !== '');
  if (given.length === 0) return null;
  return (
    `note: ${given.join(' and ')} ${given.length === 1 ? 'applies' : 'apply'} to Aurora only and ${given.length === 1 ? 'was' : 'were'} ignored: ` +
    `lab "${lab.name}" is RDS for PostgreSQL, priced on its provisioned storage (postgres.allocatedStorageGb ` +
    `${lab.database.allocatedStorageGb} GB)`
  );
}

export function register(program: Command): void {
  program
    .command('cost')
    .description(
      'Estimate what a lab costs while it exists: a line per billable part (Aurora instances or ACU range, ' +
        'RDS Proxy vCPU/ACU-hours, runners, endpoints, NAT, public IPv4, storage and I/O as stated assumptions), ' +
        'totals per hour, per 8-hour day and per 30-day month. On-demand list prices of the region from the AWS ' +
        'Price List (pricing:GetProducts; cached per region and date under ~/.cache/proxylab/prices), else its ' +
        'cache, else for us-east-1 the committed table; the date is shown. An instance type without a price is an error.',
    )
    .argument('[file]', 'lab file (JSON), e.g. labs/default.json')
    .option('--lab <file>', 'the lab file, as deploy/run/destroy take it (same as the FILE argument)')
    .option(
      '--region <region>',
      "price region (default: the lab's region, else us-east-1); any commercial region, priced from the AWS Price List",
    )
    .option('--json', 'print the estimate as JSON (lines, totals, assumptions, sources) for scripts')
    .option(
      '--storage-gb <gb>',
      `assumed Aurora cluster volume in GB (default ${DEFAULT_USAGE.auroraStorageGb}; Aurora labs only)`,
    )
    .option(
      '--io-millions-per-hour <n>',
      `assumed Aurora I/O, millions of requests per hour (default ${DEFAULT_USAGE.auroraIoMillionsPerHour}; Aurora labs only)`,
    )
    .option(
      '--endpoint-gb-per-hour <gb>',
      `assumed data through the VPC interface endpoints, GB per hour (default ${DEFAULT_USAGE.endpointGbPerHour}; labs with network.egress "vpc-endpoints")`,
    )
    .option(
      '--app-hosts <n>',
      'in the production bill, run each self-hosted pooler on N application hosts instead of as an HA pair behind an NLB',
    )
    .action(async (fileArg: string | undefined, flags: CostFlags) => {
      if (fileArg !== undefined && flags.lab !== undefined && fileArg !== flags.lab) {
        throw new UsageError(`give the lab file once: FILE "${fileArg}" and --lab "${flags.lab}" differ`);
      }
      const file = fileArg ?? flags.lab;
      if (file === undefined)
        throw new UsageError('give a lab file: proxylab cost labs/default.json (or --lab FILE)');
      const storageGb = nonNegative('--storage-gb', flags.storageGb);
      const ioMillions = nonNegative('--io-millions-per-hour', flags.ioMillionsPerHour);
      const endpointGb = nonNegative('--endpoint-gb-per-hour', flags.endpointGbPerHour);
      const appHosts = appHostsFlag(flags.appHosts);
      const lab = loadLabFile(file);
      // Every command prices a region the same way (lib/cost/pricelist/prices-for.ts) and passes the
      // table down; a region without prices is refused by estimateCost in pricesFor's words.
      const prices = await pricesModule().preparePrices(flags.region ?? lab.region ?? DEFAULT_PRICE_REGION);
      if (prices.ok) process.stderr.write(`${pricesModule().pricesLine(prices)}\n`);
      const estimate = estimateCost(lab, {
        ...(flags.region ? { region: flags.region } : {}),
        table: prices.ok ? prices.table : null,
        usage: {
          ...(storageGb !== undefined ? { auroraStorageGb: storageGb } : {}),
          ...(ioMillions !== undefined ? { auroraIoMillionsPerHour: ioMillions } : {}),
          ...(endpointGb !== undefined ? { endpointGbPerHour: endpointGb } : {}),
        },
      });
      const note = auroraOnlyFlagsNote(lab, flags);
      if (note !== null) process.stderr.write(note + '\n');
      // What each option would cost in production, at the same prices (lib/cost/production.ts).
      const production = prices.ok
        ? productionBill(lab, prices.table, appHosts !== undefined ? { appHosts } : {})
        : null;
      process.stdout.write(
        flags.json
          ? JSON.stringify({ ...estimate, production }, null, 2) + '\n'
          : formatCostTable(estimate) + (production ? formatProductionBill(production) : ''),
      );
    });
}
