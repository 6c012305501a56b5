/**
 * The estimate's database phases (./estimate.ts): the instances (RDS for PostgreSQL, Aurora
 * provisioned or serverless), a burstable class's CPU credits, and the database storage.
 */
import { failsOver, withMovingWriter } from './moving-writer';
import type { AuroraDatabaseConfig, LabConfig } from '../config/types';
import { UsageError } from '../core/errors';
import type { InstancePrice, PriceTable, SourceId } from './price-table';
import { assumed, fixed, HOURS_PER_MONTH, range, roundNoise, withResource, type CostLine } from './cost-line';
import type { CostInputs, UsageAssumptions } from './inputs';
import { auroraInstancePrice, rdsPostgresInstancePrice } from './instance-prices';

/** The smallest running Aurora Serverless v2 capacity (below it, only a paused instance: 0). */
const SERVERLESS_MIN_RUNNING_ACU = 0.5;

/** Database instances: one line per instance, and the surplus CPU credits of a burstable class. */
export function databaseLines({ lab, table, usage }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'aurora-postgresql') return auroraInstanceLines(lab, db, table, usage);
  const p = rdsPostgresInstancePrice(table, db.instanceClass);
  const hourly = db.multiAz ? p.usdPerHourMultiAz : p.usdPerHour;
  const lines = [
    fixed(
      'database',
      `RDS for PostgreSQL ${db.instanceClass} ${db.multiAz ? 'Multi-AZ' : 'single-AZ'}`,
      1,
      'instance-hour',
      hourly,
      p.source,
      db.multiAz
        ? `1 × $${hourly}/h on-demand Multi-AZ (primary + standby; ${p.vcpus} vCPU, ${p.memoryGiB} GiB each)`
        : `1 × $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`,
    ),
  ];
  const credits = burstableCreditsLine(
    `RDS for PostgreSQL ${db.instanceClass}`,
    db.instanceClass,
    p,
    table.rdsCpuCreditPerVcpuHour,
    usage.suiteCpuPercent,
  );
  if (credits) lines.push(credits);
  return lines;
}

/** Database storage: RDS provisioned storage, or Aurora's volume and I/O (stated assumptions). */
export function databaseStorageLines({ lab, table, usage }: CostInputs): CostLine[] {
  const db = lab.database;
  if (db.engine === 'postgres') {
    const gp3 = table.rdsGp3PerGbMonth;
    const factor = db.multiAz ? table.rdsMultiAzStorageFactor : 1;
    const gbMonth = (db.allocatedStorageGb * factor) / HOURS_PER_MONTH;
    return [
      fixed(
        'storage',
        `RDS ${db.storageType} storage ${db.allocatedStorageGb} GB${db.multiAz ? ' × 2 (primary + standby)' : ''}`,
        gbMonth,
        'GB-month',
        gp3.usd,
        gp3.source,
        `${db.allocatedStorageGb} GB${db.multiAz ? ` × ${factor}` : ''} × $${gp3.usd}/GB-month ÷ ${HOURS_PER_MONTH} h (provisioned, billed whether used or not)`,
      ),
    ];
  }
  const iopt = db.storageType === 'io-optimized' ? table.auroraIoOptimized : null;
  if (iopt) {
    const st = iopt.storagePerGbMonth;
    return [
      assumed(
        'storage',
        `Aurora I/O-Optimized storage ${usage.auroraStorageGb} GB (assumed)`,
        usage.auroraStorageGb / HOURS_PER_MONTH,
        'GB-month',
        st.usd,
        st.source,
        `assumed ${usage.auroraStorageGb} GB × $${st.usd}/GB-month ÷ ${HOURS_PER_MONTH} h; I/O requests are not billed (I/O-Optimized)`,
      ),
    ];
  }
  const st = table.auroraStoragePerGbMonth;
  const io = table.auroraIoPerMillionRequests;
  return [
    assumed(
      'storage',
      `Aurora storage ${usage.auroraStorageGb} GB (assumed)`,
      usage.auroraStorageGb / HOURS_PER_MONTH,
      'GB-month',
      st.usd,
      st.source,
      `assumed ${usage.auroraStorageGb} GB × $${st.usd}/GB-month ÷ ${HOURS_PER_MONTH} h`,
    ),
    assumed(
      'storage',
      `Aurora I/O ${usage.auroraIoMillionsPerHour} M requests/h (assumed)`,
      usage.auroraIoMillionsPerHour,
      'million requests',
      io.usd,
      io.source,
      `assumed ${usage.auroraIoMillionsPerHour} million I/O requests per hour × $${io.usd}/million (Aurora Standard); ` +
        'a sustained write-heavy suite (TPC-B) can issue many times more and the bill follows it: ' +
        'pass --io-millions-per-hour, or set aurora.storageType "io-optimized" (no I/O charge)',
    ),
  ];
}

/** Aurora instances: one line per instance (writer, readers); CPU credits of a burstable writer. */
function auroraInstanceLines(
  lab: LabConfig,
  db: AuroraDatabaseConfig,
  table: PriceTable,
  usage: UsageAssumptions,
): CostLine[] {
  const roles = ['writer', ...Array.from({ length: db.readers }, (_, i) => `reader ${i + 1}`)];
  const cap = db.capacity;
  const iopt = db.storageType === 'io-optimized' ? table.auroraIoOptimized : null;
  if (cap.kind === 'provisioned') {
    const standard = auroraInstancePrice(table, cap.instanceClass);
    const hourly = iopt ? roundNoise(standard.usdPerHour * iopt.computeMultiplier) : standard.usdPerHour;
    const p = { ...standard, usdPerHour: hourly };
    const lines = roles.map((role, i) =>
      withResource(
        fixed(
          'database',
          `Aurora ${role} ${cap.instanceClass}${iopt ? ' (I/O-Optimized)' : ''}`,
          1,
          'instance-hour',
          hourly,
          iopt ? iopt.source : standard.source,
          iopt
            ? `1 × $${standard.usdPerHour}/h Aurora Standard × ${iopt.computeMultiplier} (I/O-Optimized) = $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`
            : `1 × $${hourly}/h on-demand (${p.vcpus} vCPU, ${p.memoryGiB} GiB)`,
        ),
        i === 0 ? undefined : `reader:${i}`,
      ),
    );
    // The suites load the writer; readers stay near idle, under their baseline.
    const credits = burstableCreditsLine(
      `Aurora writer ${cap.instanceClass}`,
      cap.instanceClass,
      p,
      iopt ? iopt.cpuCreditPerVcpuHour : table.auroraCpuCreditPerVcpuHour,
      usage.suiteCpuPercent,
    );
    if (credits) lines.push(failsOver(lab, db) ? withMovingWriter(credits, roles) : credits);
    return lines;
  }
  const acu = iopt ? iopt.serverlessPerAcuHour : table.auroraServerlessPerAcuHour;
  // minCapacity 0 is auto-pause. Assumed not to happen behind an RDS Proxy (listed as incompatible
  // with scale-to-zero in aws/agent-toolkit-for-aws's Aurora serverless notes): low end 0.5 ACU.
  const low =
    cap.minCapacityAcu === 0 && lab.proxies.length > 0 ? SERVERLESS_MIN_RUNNING_ACU : cap.minCapacityAcu;
  const why =
    low !== cap.minCapacityAcu
      ? ` (minCapacity 0 = auto-pause, assumed not to happen behind an RDS Proxy: ${low} ACU)`
      : '';
  return roles.map((role, i) =>
    withResource(
      range(
        'database',
        `Aurora ${role} serverless v2`,
        low,
        cap.maxCapacityAcu,
        'ACU-hour',
        acu.usd,
        acu.source,
        `${low}–${cap.maxCapacityAcu} ACU × $${acu.usd}/ACU-hour; bills the capacity in use, between min and max${why}`,
      ),
      i === 0 ? undefined : `reader:${i}`,
    ),
  );
}

/** What the CPU-credit line's part contains (`… CPU credits (Unlimited mode)`). */
export const CPU_CREDITS_PART = 'CPU credits (Unlimited mode)';

/**
 * The surplus-CPU-credit line of a burstable (db.t3/db.t4g) instance, null for other classes.
 *
 * RDS and Aurora run these classes in Unlimited mode and offer no other (RDS pricing: "T4g and T3
 * DB instances run in Unlimited mode, which means that you will be charged if your average CPU
 * utilization over a rolling 24-hour period exceeds the baseline of the instance"). Above its
 * baseline (baselineCpuPercent per vCPU) the instance spends credits it has earned, then surplus
 * credits; under sustained load the surplus is billed per vCPU-hour: vCPUs × (CPU − baseline) per
 * hour. From $0 (idle, or under the baseline on a 24-hour average) to that figure at the suite's
 * CPU (UsageAssumptions.suiteCpuPercent). A db.t* class without a baseline in the price table is
 * refused by name rather than costed as if it had no credits.
 */
function burstableCreditsLine(
  what: string,
  instanceClass: string,
  p: InstancePrice,
  credit: { usd: number; source: SourceId },
  cpuPercent: number,
): CostLine | null {
  if (p.baselineCpuPercent === undefined) {
    if (/^db\.t\d/i.test(instanceClass)) {
      throw new UsageError(
        `burstable class ${instanceClass} has no baselineCpuPercent in lib/cost/price-table.ts; ` +
          'add it (EC2 credit table) rather than leave its Unlimited-mode CPU credits out',
      );
    }
    return null;
  }
  const baseline = p.baselineCpuPercent;
  const surplusVcpus = (p.vcpus * Math.max(0, cpuPercent - baseline)) / 100;
  const line = range(
    'database',
    `${what} ${CPU_CREDITS_PART}`,
    0,
    roundNoise(surplusVcpus),
    'vCPU-hour',
    credit.usd,
    credit.source,
    `assumed sustained load at ${cpuPercent} % CPU while a suite runs: ${p.vcpus} vCPU × (${cpuPercent} − ${baseline} % baseline) = ` +
      `${roundNoise(surplusVcpus)} surplus vCPU-hours per hour × $${credit.usd}/vCPU-hour; $0 when idle or under the baseline on a 24-hour average`,
  );
  return { ...line, basis: 'assumption' };
}
