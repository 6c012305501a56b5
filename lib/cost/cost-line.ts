/**
 * One line of the estimate and the totals (./estimate.ts), and how a phase makes a line: a fixed
 * quantity, a range (serverless, CPU credits) or an assumption, each priced from the table.
 */
import { SOURCES } from './price-table';
import type { SourceId } from './price-table';

/** Hours in the "8-hour day" total. */
export const HOURS_PER_DAY = 8;
/** Hours in the "30-day month left running" total. */
export const HOURS_PER_MONTH = 720;

export type CostCategory = 'database' | 'proxy' | 'pooler' | 'runner' | 'network' | 'storage' | 'other';

export interface CostLine {
  readonly category: CostCategory;
  /** What is billed, e.g. `Aurora writer db.t4g.medium`. */
  readonly part: string;
  /** How many units bill per hour at the low and high end (equal unless serverless). */
  readonly quantityMin: number;
  readonly quantityMax: number;
  /** The unit of `quantity` and `unitPriceUsd`, e.g. `instance-hour`, `vCPU-hour`. */
  readonly unit: string;
  readonly unitPriceUsd: number;
  readonly usdPerHourMin: number;
  readonly usdPerHourMax: number;
  /** `price-table`: a list price × a count the lab fixes; `assumption`: usage we assumed (see note). */
  readonly basis: 'price-table' | 'assumption';
  /** The arithmetic and any assumption, in words. */
  readonly note: string;
  readonly source: SourceId;
  /**
   * Present (true) when the line's unit price has no AWS source (its source's `unsourced` says what
   * is missing): the figure is a third party's, shown but marked (`†` in the printed table).
   */
  readonly unsourced?: true;
  /**
   * The lab resource the line bills, where it is one a run measures or not (`proxylab plan` warns
   * about a billed one none of its steps touch): `reader:<n>` (an Aurora reader, 1-based),
   * `proxy:<name>`, `pooler:<name>`. Absent on shared lines (writer, runners, network, storage).
   */
  readonly resource?: string;
}

export interface CostTotals {
  readonly perHourUsdMin: number;
  readonly perHourUsdMax: number;
  /** 8 hours. */
  readonly perDayUsdMin: number;
  readonly perDayUsdMax: number;
  /** 30 days × 24 h = 720 hours, left running. */
  readonly perMonthUsdMin: number;
  readonly perMonthUsdMax: number;
}

/** `line` marked as billing `resource` (CostLine.resource); unchanged when there is none. */
export function withResource(line: CostLine, resource: string | undefined): CostLine {
  return resource === undefined ? line : { ...line, resource };
}

/** Strips float noise (0.30000000000000004) without losing cents on a month of hours. */
export function roundNoise(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

/** A line whose quantity the lab fixes (low = high). */
export function fixed(
  category: CostCategory,
  part: string,
  quantity: number,
  unit: string,
  unitPriceUsd: number,
  source: SourceId,
  note: string,
): CostLine {
  return range(category, part, quantity, quantity, unit, unitPriceUsd, source, note);
}

/** A line whose quantity lies between `lo` and `hi` (serverless capacity, CPU credits). */
export function range(
  category: CostCategory,
  part: string,
  lo: number,
  hi: number,
  unit: string,
  unitPriceUsd: number,
  source: SourceId,
  note: string,
): CostLine {
  return {
    category,
    part,
    quantityMin: lo,
    quantityMax: hi,
    unit,
    unitPriceUsd,
    usdPerHourMin: roundNoise(lo * unitPriceUsd),
    usdPerHourMax: roundNoise(hi * unitPriceUsd),
    basis: 'price-table',
    note,
    source,
    ...(SOURCES[source].unsourced !== undefined ? { unsourced: true as const } : {}),
  };
}

/** A fixed line whose quantity is the lab's assumption, not a price-table fact. */
export function assumed(...args: Parameters<typeof fixed>): CostLine {
  return { ...fixed(...args), basis: 'assumption' };
}

/** The per-hour, 8-hour-day and 30-day-month totals of `lines` (low and high). */
export function totalsOf(lines: readonly CostLine[]): CostTotals {
  const lo = lines.reduce((s, l) => s + l.usdPerHourMin, 0);
  const hi = lines.reduce((s, l) => s + l.usdPerHourMax, 0);
  return {
    perHourUsdMin: roundNoise(lo),
    perHourUsdMax: roundNoise(hi),
    perDayUsdMin: roundNoise(lo * HOURS_PER_DAY),
    perDayUsdMax: roundNoise(hi * HOURS_PER_DAY),
    perMonthUsdMin: roundNoise(lo * HOURS_PER_MONTH),
    perMonthUsdMax: roundNoise(hi * HOURS_PER_MONTH),
  };
}
