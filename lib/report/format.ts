/** Number and time formatting shared by the HTML and Markdown renderers. Unknown is "?", never 0. */
import type { Spread } from './cells';

export function fmtNumber(value: number | null | undefined, digits?: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '?';
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** `1,234` or, with repetitions, `1,234 (best 1,300 / worst 1,100, n=3)`. */
export function fmtSpread(spread: Spread | null, digits?: number): string {
  if (!spread) return '?';
  if (spread.n < 2) return fmtNumber(spread.median, digits);
  return `${fmtNumber(spread.median, digits)} (best ${fmtNumber(spread.best, digits)} / worst ${fmtNumber(spread.worst, digits)}, n=${spread.n})`;
}

export function fmtDuration(startIso: string, endIso: string | null): string {
  if (endIso === null) return '?';
  const sec = (Date.parse(endIso) - Date.parse(startIso)) / 1000;
  if (!Number.isFinite(sec) || sec < 0) return '?';
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = Math.round(sec % 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}

export function fmtVerdict(held: boolean | null): string {
  return held === true ? '✓' : held === false ? '✗' : '–';
}

export function fmtConnect(connect: 'persistent' | 'per-transaction'): string {
  return connect === 'per-transaction' ? '-C' : 'persistent';
}

/** Settings values for display: strings as is, everything else as compact JSON. */
export function fmtSetting(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '?';
  return JSON.stringify(value);
}
