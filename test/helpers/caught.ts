/** What `fn` throws; throws itself when `fn` throws nothing (so the test fails). */
export function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
