import { percentile, percentiles } from '../../lib/core/stats';

describe('percentile: nearest rank over the finite values, in any order', () => {
  test.each([
    [[1, 2, 3, 4], 50, 2],
    [[1, 2, 3, 4], 100, 4],
    [[1, 2, 3, 4], 0, 1],
    [[1, 2, 3, 4], 75.1, 4],
    [[5], 99, 5],
    [[4, 1, 3, 2], 50, 2],
    [[10, 2, 33, 4], 99, 33],
    [[3, Number.NaN, 1, Number.POSITIVE_INFINITY, 2], 100, 3],
    [[], 50, null],
    [[Number.NaN], 50, null],
  ])('percentile(%j, %d) = %s', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  test('a value that occurred, never one interpolated between two', () => {
    // GIVEN 100 values 1…100 and one of 10
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    // WHEN / THEN rank ⌈p/100 × n⌉
    expect(percentiles(hundred, [50, 95, 99, 99.5])).toEqual([50, 95, 99, 100]);
    expect(percentile([10, 20], 50)).toBe(10);
  });

  test('leaves its input as it was, typed arrays included', () => {
    // GIVEN unsorted inputs
    const list = [3, 1, 2];
    const typed = Float64Array.from([3, 1, 2]);
    // WHEN
    percentiles(list, [50]);
    percentile(typed, 99);
    // THEN
    expect(list).toEqual([3, 1, 2]);
    expect([...typed]).toEqual([3, 1, 2]);
  });

  test('percentiles gives one figure per p, each null when nothing is known', () => {
    expect(percentiles([2, 1], [0, 50, 100])).toEqual([1, 1, 2]);
    expect(percentiles([], [50, 99])).toEqual([null, null]);
  });
});
