/**
 * Will a run end before its lab expires? (issue 14 item 6). `proxylab run` estimates the suite's
 * duration from the lab file alone (before any AWS call: the run plan of lib/cost/run-plan.ts,
 * the same `proxylab plan` prints), reads when the expiry schedule fires, and refuses a run whose
 * estimated end — plus the wait for the metrics to settle and a margin — is past it, unless told
 * to extend the lab (`--extend`), by exactly the hours missing.
 */
import { UsageError } from '../core/errors';
import { EXPIRY_MARGIN_SEC } from '../config/run-estimate';

export { EXPIRY_MARGIN_SEC };

export type ExpiryDecision =
  | { readonly kind: 'fits'; readonly estimatedEnd: Date }
  | { readonly kind: 'no-expiry' }
  | { readonly kind: 'extend'; readonly estimatedEnd: Date; readonly hours: number };

/**
 * The decision for a run starting at `now`: fits, extend by `hours` (when allowed), or a
 * UsageError that names the estimate, the expiry and the two ways out.
 */
export function decideRunExpiry(input: {
  readonly now: Date;
  readonly estimatedSec: number;
  readonly expiresAt: Date | null;
  readonly allowExtend: boolean;
  readonly suite: string;
  readonly labFile: string;
  /** What the lab costs per hour (lib/cost), to say what `--extend` would cost; null/absent: not said. */
  readonly usdPerHour?: number | null;
}): ExpiryDecision {
  if (input.expiresAt === null) return { kind: 'no-expiry' };
  const estimatedEnd = new Date(input.now.getTime() + (input.estimatedSec + EXPIRY_MARGIN_SEC) * 1000);
  if (estimatedEnd.getTime() <= input.expiresAt.getTime()) return { kind: 'fits', estimatedEnd };
  const hours = Math.ceil((estimatedEnd.getTime() - input.expiresAt.getTime()) / 3_600_000);
  if (input.allowExtend) return { kind: 'extend', estimatedEnd, hours };
  const cost =
    input.usdPerHour !== undefined && input.usdPerHour !== null
      ? ` (${hours} h more at $${input.usdPerHour.toFixed(2)}/h ≈ $${(hours * input.usdPerHour).toFixed(2)})`
      : '';
  throw new UsageError(
    `suite ${input.suite} takes about ${Math.ceil(input.estimatedSec / 60)} min (with the metrics collection and a ` +
      `${EXPIRY_MARGIN_SEC / 60}-min margin it would end at ${iso(estimatedEnd)}), but the lab expires at ` +
      `${iso(input.expiresAt)} and its results would go with it. Extend first ` +
      `(npx proxylab extend --lab ${input.labFile} --hours ${hours}) or run with --extend${cost}`,
  );
}

function iso(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
