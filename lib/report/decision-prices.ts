/**
 * The decision table's price columns (issue 41): what a target adds per hour, and what choosing it
 * costs in production per month and per million transactions at the rate the run measured. Pure:
 * the prices the run recorded (`environment.targetPrices`, priced by lib/cost when the run started)
 * and the row's measured figures in, cells' figures out.
 *
 * A self-hosted pooler whose host type the lab does not give (a local run, a pooler on the runners)
 * recorded its HA pair priced on every type of one family (`hostChoices`); the row takes the
 * smallest whose vCPUs cover the measured pooler CPU at the recorded target utilisation, and says
 * which and why. Without a CPU figure, the recorded fallback type, saying so.
 */
import type { TargetPrice, TargetProduction } from '../suite/types';
import { fmtNumber } from './format';

/** A row's production option, its host type chosen. */
export interface RowProduction {
  /** `eu-west-1 on-demand prices as of …` / `local throughput, cloud prices (eu-west-1 as of …)`. */
  readonly pricedAs: string;
  /** USD per 30-day month on top of the database; null: unknown (basis says why). */
  readonly usdPerMonth: number | null;
  readonly usdPerHour: number | null;
  /** usdPerHour ÷ (tps × 3600) × 10⁶; null when either is unknown. */
  readonly usdPerMillionTransactions: number | null;
  /** What is priced, and for a chosen host type which and why. */
  readonly basis: string;
  /** The row's $/h is this option's (a local run). */
  readonly hourlyIsProduction: boolean;
}

/** The run's price for `target`, or why there is none. */
export function priceOf(
  mode: string,
  prices: readonly TargetPrice[] | null,
  target: string,
): { usdPerHour: number | null; note: string; production: TargetProduction | null } {
  if (prices === null)
    return {
      usdPerHour: null,
      note:
        mode === 'local'
          ? 'not priced (local run; --price-region REGION prices it)'
          : 'not priced (the run records no prices)',
      production: null,
    };
  const p = prices.find((x) => x.target === target);
  if (!p) return { usdPerHour: null, note: 'not priced (no price for this target)', production: null };
  return { usdPerHour: p.usdPerHour, note: p.basis, production: p.production ?? null };
}

/** USD per million transactions of `usdPerHour` at `tps`; null when either is unknown or tps ≤ 0. */
export function perMillion(usdPerHour: number | null, tps: number | null): number | null {
  return usdPerHour !== null && tps !== null && tps > 0 ? (usdPerHour / (tps * 3600)) * 1e6 : null;
}

/**
 * The row's production option: the recorded one, or — when the host type is the report's to pick —
 * the smallest recorded type whose vCPUs cover `cpuPercent` (busiest process, % of one core) × the
 * pooler's processes at the recorded target utilisation.
 */
export function rowProduction(
  p: TargetProduction | null,
  cpuPercent: number | null,
  tps: number | null,
): RowProduction | null {
  if (p === null) return null;
  const row = (usdPerMonth: number | null, usdPerHour: number | null, basis: string): RowProduction => ({
    pricedAs: p.pricedAs,
    usdPerMonth,
    usdPerHour,
    usdPerMillionTransactions: perMillion(usdPerHour, tps),
    basis,
    hourlyIsProduction: p.hourlyIsProduction,
  });
  const choices = p.hostChoices;
  if (choices === null || choices.length === 0) return row(p.usdPerMonth, p.usdPerHour, p.basis);
  const target = `${fmtNumber(p.targetUtilisation * 100, 0)} % target utilisation`;
  if (cpuPercent === null)
    return row(p.usdPerMonth, p.usdPerHour, `pooler CPU not measured, so the default host type: ${p.basis}`);
  const processes = p.poolerProcesses > 1 ? ` × ${p.poolerProcesses} processes` : '';
  const needed = ((cpuPercent / 100) * p.poolerProcesses) / p.targetUtilisation;
  const measured = `${fmtNumber(cpuPercent, 0)} % of one core${processes}`;
  const pick = choices.find((c) => c.vcpus >= needed);
  if (pick === undefined) {
    const largest = choices[choices.length - 1];
    return row(
      null,
      null,
      `measured ${measured} needs ${fmtNumber(needed, 1)} vCPUs at ${target}: more than the largest priced type (${largest?.type ?? '?'}, ${largest?.vcpus ?? '?'} vCPUs)`,
    );
  }
  return row(
    pick.usdPerMonth,
    pick.usdPerHour,
    `${pick.type} (${pick.vcpus} vCPU), the smallest of its family covering the measured ${measured} at ${target}: ${pick.basis}`,
  );
}
