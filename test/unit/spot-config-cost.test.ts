/**
 * Spot runners in `proxylab cost`: the on-demand price stays the figure (a ceiling), the line and
 * the assumptions say so, and no Spot price is invented — the totals equal the on-demand lab's;
 * and the lab field itself (default false, a boolean only).
 */
import { expect } from '@jest/globals';
import { validateLab } from '../../lib/config/validate';
import type { LabConfig } from '../../lib/config/types';
import { estimateCost } from '../../lib/cost/estimate';
import { formatCostTable } from '../../lib/cost/format';

function lab(spot: boolean): LabConfig {
  const r = validateLab({ name: 'spotcost', runners: { instanceType: 'c7g.large', count: 2, spot } });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.lab;
}

test('spot runners are priced at the on-demand ceiling, said on the line and in the assumptions', () => {
  // GIVEN the same lab on spot and on-demand runners
  const spot = estimateCost(lab(true));
  const onDemand = estimateCost(lab(false));
  // THEN the totals are the same (no Spot price assumed) …
  expect(spot.totals).toEqual(onDemand.totals);
  const line = spot.lines.find((l) => l.category === 'runner');
  const odLine = onDemand.lines.find((l) => l.category === 'runner');
  expect(line?.usdPerHourMax).toBe(odLine?.usdPerHourMax);
  // … and the spot lab says the figure is a ceiling and spot is usually well below it
  expect(line?.part).toBe('Runners 2 × c7g.large (spot: on-demand as ceiling)');
  expect(line?.note).toMatch(
    /on-demand rate as a ceiling; the Spot price actually billed is usually well below it/,
  );
  expect(spot.assumptions.some((a) => a.startsWith('spot runners: '))).toBe(true);
  expect(onDemand.assumptions.some((a) => a.startsWith('spot runners: '))).toBe(false);
  expect(odLine?.part).toBe('Runners 2 × c7g.large');
  const text = formatCostTable(spot);
  expect(text).toContain('(spot: on-demand as ceiling)');
  expect(text).not.toMatch(/\$\d[\d.]*\/h spot/);
});

test('runners.spot defaults to false and takes only a boolean, the field named', () => {
  expect(lab(false).runners.spot).toBe(false);
  const none = validateLab({ name: 'x' });
  expect(none.ok && none.lab.runners.spot).toBe(false);
  // WHEN a string stands in for the boolean
  const r = validateLab({ name: 'x', runners: { spot: 'yes' } });
  // THEN one problem at runners.spot, with the value and what is allowed
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.problems).toEqual([expect.objectContaining({ path: 'runners.spot', value: 'yes' })]);
  expect(r.problems[0]?.message).toMatch(/true or false/);
});
