/**
 * What a figure in a run file can be, as zod schemas: every number a result holds is bounded to what
 * a measurement can give, so a hand-edited or corrupted file (a negative tps, a latency of -3 ms,
 * `1.7e308` tps, a time in the year 9999) is refused where it is read, naming the field, instead of
 * being drawn as data. The bounds are physical ceilings with room to spare, not expectations: a
 * figure near one is still a measurement, one beyond it cannot be.
 *
 * Used by ./schemas.ts and ./probe-schemas.ts (the run files' schemas); pure data definitions.
 */
import { z } from 'zod';

/**
 * The most cores one machine has. The largest EC2 instances have 896 vCPUs (u7in-32tb.224xlarge);
 * 1024 leaves room. Bounds what one process or machine can do in a second.
 */
export const MACHINE_CORES_MAX = 1024;

/**
 * Transactions per second no pgbench run can reach: a transaction costs the server at least ≈ 1 µs
 * of CPU (a `SELECT 1` over a Unix socket — parse, plan, execute, reply — measures 5–20 µs), so a
 * server of MACHINE_CORES_MAX cores completes at most ≈ 10⁶ per core per second. Published records
 * for PostgreSQL are below 10⁷; 1.024 × 10⁹ is two orders of magnitude above them. Bounds tps,
 * `--rate` and writes per second.
 */
export const TPS_MAX = MACHINE_CORES_MAX * 1_000_000;

/**
 * The longest a step, a latency or a wait can last: a year. A cloud lab lives at most 720 h (30
 * days, LIMITS.ttlHoursMax); a local run is one process on one machine. A latency, a lag, a
 * connection time or a duration longer than the run it was measured in cannot be.
 */
export const ELAPSED_SEC_MAX = 366 * 24 * 3600;
export const ELAPSED_MS_MAX = ELAPSED_SEC_MAX * 1000;

/**
 * Plausible times of a run: from 2000-01-01 to 2100-01-01 (UTC). proxylab needs Node ≥ 20 (2023);
 * a time before 2000 is a clock that was never set (a machine without NTP reads 1970), one after
 * 2100 a corrupted file.
 */
export const TIME_MIN = '2000-01-01T00:00:00.000Z';
export const TIME_MAX = '2100-01-01T00:00:00.000Z';

const TIME_MIN_MS = Date.parse(TIME_MIN);
const TIME_MAX_MS = Date.parse(TIME_MAX);
/** ISO 8601 with a date, a time and a zone, as `Date.prototype.toISOString` writes it (offsets accepted). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether `s` is an ISO 8601 time between TIME_MIN and TIME_MAX. */
export function isPlausibleTime(s: string): boolean {
  if (!ISO_DATE_TIME.test(s)) return false;
  const ms = Date.parse(s);
  return Number.isFinite(ms) && ms >= TIME_MIN_MS && ms < TIME_MAX_MS;
}

/** A time of the run: ISO 8601 (`2026-11-21T10:00:00.000Z`) between 2000 and 2100. */
export const timestamp = z.string().refine(isPlausibleTime, {
  message: 'expected an ISO 8601 time (2026-11-21T10:00:00.000Z) between 2000 and 2100',
});

/** A count (transactions, clients, errors, connections): an integer ≥ 0 that a double holds exactly. */
export const count = z
  .number()
  .int({ message: 'expected a whole number ≥ 0' })
  .min(0, { message: 'expected a whole number ≥ 0' });

/** A count of at least one (a runner count, a repetition, a scale). */
export const positiveCount = count.min(1, { message: 'expected a whole number ≥ 1' });

/** A rate in transactions (or writes) per second: 0 to TPS_MAX. */
export const tps = z
  .number()
  .min(0, { message: 'expected a rate ≥ 0 per second' })
  .max(TPS_MAX, { message: `expected at most ${TPS_MAX} per second (see lib/results/figures.ts TPS_MAX)` });

/** A latency, lag, wait or elapsed time in milliseconds: 0 to a year. */
export const ms = z
  .number()
  .min(0, { message: 'expected milliseconds ≥ 0' })
  .max(ELAPSED_MS_MAX, { message: `expected at most ${ELAPSED_MS_MAX} ms (a year)` });

/** A duration in seconds: 0 to a year. */
export const sec = z
  .number()
  .min(0, { message: 'expected seconds ≥ 0' })
  .max(ELAPSED_SEC_MAX, { message: `expected at most ${ELAPSED_SEC_MAX} s (a year)` });

/** Milliseconds relative to an instant (a disruption's T0): before it is negative, at most a year either way. */
export const offsetMs = z
  .number()
  .min(-ELAPSED_MS_MAX, { message: `expected at most ${ELAPSED_MS_MAX} ms (a year) before T0` })
  .max(ELAPSED_MS_MAX, { message: `expected at most ${ELAPSED_MS_MAX} ms (a year) after T0` });

/** A share of a whole in percent: 0 to 100. */
export const percent = z
  .number()
  .min(0, { message: 'expected a percentage 0–100' })
  .max(100, { message: 'expected a percentage 0–100' });

/** CPU in percent of one core (a process with threads, a machine): 0 to 100 × MACHINE_CORES_MAX. */
export const cpuPercent = z
  .number()
  .min(0, { message: 'expected a CPU percentage ≥ 0' })
  .max(100 * MACHINE_CORES_MAX, {
    message: `expected at most ${100 * MACHINE_CORES_MAX} % (1 core = 100 %)`,
  });

/** A process exit code: 0–255 (null when a signal ended it). */
export const exitCode = count.max(255, { message: 'expected an exit code 0–255' });

/** A fraction: 0 to 1 (pgbench --sampling-rate). */
export const fraction = z
  .number()
  .min(0, { message: 'expected a fraction 0–1' })
  .max(1, { message: 'expected a fraction 0–1' });

/** US dollars per hour of a target: ≥ 0, below a million (the largest RDS instance bills ≈ $100/h). */
export const usdPerHour = z
  .number()
  .min(0, { message: 'expected US dollars per hour ≥ 0' })
  .max(1_000_000, { message: 'expected less than $1,000,000 per hour' });

/**
 * The largest value a metric series holds. Every series the kit records counts or measures
 * something that cannot be negative (connections, rates per second, percent, bytes, latencies,
 * credits; counters become rates between two reads, none after a reset: lib/engine/pooler-metrics.ts),
 * and the largest quantities are bytes: an Aurora cluster stores at most 256 TiB (≈ 2.8 × 10¹⁴), so
 * 10¹⁸ (an exabyte) is far above anything a lab's database, proxy or pooler reports.
 */
export const METRIC_VALUE_MAX = 1e18;

/** A metric point's value, in its series' own unit: 0 to METRIC_VALUE_MAX. */
export const metricValue = z
  .number()
  .min(0, { message: 'expected a metric value ≥ 0 (every series counts or measures)' })
  .max(METRIC_VALUE_MAX, { message: `expected a metric value at most ${METRIC_VALUE_MAX}` });
