import {
  expiryScheduleName,
  expiryTime,
  formatAtExpression,
  formatExpiresAt,
  parseAtExpression,
} from '../../lib/config/expiry';

describe('expiryScheduleName', () => {
  test('short stack names get a readable suffix', () => {
    expect(expiryScheduleName('proxylab-default')).toBe('proxylab-default-expiry');
  });

  test('long names stay ≤ 64 characters, deterministic and distinct', () => {
    // GIVEN two 70-character names that differ only at the end
    const a = `proxylab-${'x'.repeat(60)}a`;
    const b = `proxylab-${'x'.repeat(60)}b`;
    // WHEN
    const na = expiryScheduleName(a);
    const nb = expiryScheduleName(b);
    // THEN
    expect(na.length).toBeLessThanOrEqual(64);
    expect(na).toMatch(/^[0-9A-Za-z\-_.]+-[0-9a-f]{8}-expiry$/);
    expect(na).toBe(expiryScheduleName(a));
    expect(na).not.toBe(nb);
  });
});

describe('expiry time and expressions', () => {
  test.each([
    ['2026-11-21T10:00:00.000Z', 8, '2026-11-21T18:00:00Z'],
    ['2026-11-21T10:00:30.000Z', 8, '2026-11-21T18:01:00Z'], // rounded up to the minute
    ['2026-11-21T23:30:00.000Z', 0.5, '2026-11-22T00:00:00Z'],
  ])('%s + %s h → %s', (now, hours, expected) => {
    expect(formatExpiresAt(expiryTime(new Date(now), hours))).toBe(expected);
  });

  test.each([0, -1, Number.NaN])('ttlHours %s is rejected', (h) => {
    expect(() => expiryTime(new Date(), h)).toThrow(/ttlHours must be a number > 0/);
  });

  test('at() round trip in UTC', () => {
    const d = new Date('2026-11-21T18:01:00Z');
    expect(formatAtExpression(d)).toBe('at(2026-11-21T18:01:00)');
    expect(parseAtExpression('at(2026-11-21T18:01:00)')?.toISOString()).toBe('2026-11-21T18:01:00.000Z');
  });

  test.each([
    ['rate(1 hour)', 'UTC'],
    ['cron(0 12 * * ? *)', 'UTC'],
    ['at(2026-11-21T18:01:00)', 'Europe/Paris'],
    ['at(2026-13-45T99:01:00)', 'UTC'],
  ])('%s in %s is not read as a deadline', (expr, tz) => {
    expect(parseAtExpression(expr, tz)).toBeNull();
  });
});
