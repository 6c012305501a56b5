/**
 * A lookup made while a test file loads — its answer may name the tests (`PgBouncer ${version}`) —
 * whose failure fails only the tests that need it: a throw at load time would fail the whole file,
 * its other tests unrun. `value` is what `find` returned, null when it threw; `get()` returns it or
 * throws what `find` threw (in the test that needs it: a failing test, nothing skipped).
 */
export interface LookedUp<T> {
  readonly value: T | null;
  get(): T;
}

export function lookUp<T>(find: () => T): LookedUp<T> {
  try {
    const value = find();
    return { value, get: () => value };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    return {
      value: null,
      get: () => {
        throw error;
      },
    };
  }
}
