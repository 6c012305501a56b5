/**
 * Pure helpers shared by the expiry construct (lib/constructs/ttl.ts, at synth time) and
 * `proxylab extend` (at run time): the tag keys, the schedule's deterministic name, and the
 * EventBridge Scheduler `at(...)` expression. No aws-cdk-lib and no AWS SDK here, so the CLI can
 * load it cheaply.
 */
import { createHash } from 'node:crypto';

/** Tag keys put on every taggable resource of a lab stack. */
export const TAG_LAB = 'proxylab:lab';
export const TAG_OWNER = 'proxylab:owner';
export const TAG_EXPIRES_AT = 'proxylab:expires-at';

/** `proxylab:owner` when the lab names no owner. */
export const OWNER_UNSPECIFIED = 'unspecified';
/** `proxylab:expires-at` when the lab has no `ttlHours`. */
export const EXPIRES_NEVER = 'never';

/** EventBridge Scheduler schedule names: 1–64 of [0-9a-zA-Z-_.]. */
const SCHEDULE_NAME_MAX = 64;
const SCHEDULE_SUFFIX = '-expiry';

/**
 * The expiry schedule's name for a stack: `<stackName>-expiry`, or, when that exceeds the 64
 * characters a schedule name may have, a prefix of the stack name plus 8 hex digits of its SHA-256
 * (still deterministic, still unique per stack name). `proxylab extend` finds the schedule by it.
 */
export function expiryScheduleName(stackName: string): string {
  const safe = stackName.replace(/[^0-9A-Za-z\-_.]/g, '-');
  const plain = `${safe}${SCHEDULE_SUFFIX}`;
  if (plain.length <= SCHEDULE_NAME_MAX && safe === stackName) return plain;
  const hash = createHash('sha256').update(stackName).digest('hex').slice(0, 8);
  const room = SCHEDULE_NAME_MAX - SCHEDULE_SUFFIX.length - hash.length - 1;
  return `${safe.slice(0, room)}-${hash}${SCHEDULE_SUFFIX}`;
}

/** When a lab deployed at `now` with `ttlHours` expires: rounded UP to the whole minute. */
export function expiryTime(now: Date, ttlHours: number): Date {
  if (!Number.isFinite(ttlHours) || ttlHours <= 0) {
    throw new RangeError(`ttlHours must be a number > 0, got ${ttlHours}`);
  }
  const ms = now.getTime() + ttlHours * 3_600_000;
  return new Date(Math.ceil(ms / 60_000) * 60_000);
}

/** `2026-11-21T18:42:00Z`: the value of the `proxylab:expires-at` tag and the stack output. */
export function formatExpiresAt(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** EventBridge Scheduler one-time expression in UTC: `at(2026-11-21T18:42:00)`. */
export function formatAtExpression(at: Date): string {
  return `at(${at.toISOString().slice(0, 19)})`;
}

/**
 * Reads an `at(yyyy-mm-ddThh:mm:ss)` expression back, interpreting it in `timeZone` (only UTC is
 * supported; the construct always writes UTC). Returns null for anything else (rate/cron, other
 * zones), so the caller can say what it found instead of guessing.
 */
export function parseAtExpression(expression: string, timeZone: string | undefined = 'UTC'): Date | null {
  const m = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(expression.trim());
  if (!m) return null;
  if (timeZone !== undefined && timeZone !== 'UTC' && timeZone !== 'Etc/UTC') return null;
  const d = new Date(`${m[1]}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}
