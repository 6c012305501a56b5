/**
 * The value, or a test failure naming what was missing: for indexed reads (`rows[0]`, `m[1]`) and
 * nullable results whose absence means the code under test broke its contract, where the test
 * cannot meaningfully carry on.
 */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`expected ${what}, got ${String(value)}`);
  return value;
}
