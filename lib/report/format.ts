/** Number and time formatting shared by the HTML and Markdown renderers. Unknown is "?", never 0. */
import type { Spread } from './cells';

export function fmtNumber(value: number | null | undefined, digits?: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '?';
  // Sub-0.1 values (a 25 µs p50 is 0.025 ms) keep three decimals: two would print 0.03 or 0.00.
  const a = Math.abs(value);
  const d = digits ?? (a >= 100 ? 0 : a >= 10 ? 1 : a >= 0.1 || a === 0 ? 2 : 3);
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

/**
 * A verdict in words that cannot be misread: ✓ means "as the experiment predicts" — which, for a
 * predicted refusal or error, means it failed — and ✗ "contrary to it". `expected` is the catalog's
 * prediction (`refused: too-many-connections`).
 */
export function fmtPrediction(held: boolean | null, expected: string): string {
  if (held === true) return `✓ as the experiment predicts: ${expected}`;
  if (held === false) return `✗ contrary to it: predicted ${expected}`;
  return `– not judged (nothing predicted)`;
}

/** `$0`, `$0.0793`, `$1.25` — dollars with the digits small amounts need; unknown is `?`. */
export function fmtUsd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '?';
  if (value === 0) return '$0';
  if (Math.abs(value) >= 1) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(3))}`;
}

/** `12.5 %` of a 0–1 fraction; unknown is `?`. */
export function fmtPercent(fraction: number | null): string {
  if (fraction === null || !Number.isFinite(fraction)) return '?';
  const pct = fraction * 100;
  return `${pct === 0 ? '0' : pct < 0.1 ? '< 0.1' : fmtNumber(pct, pct >= 10 ? 0 : 1)} %`;
}
