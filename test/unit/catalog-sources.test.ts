/**
 * Provenance (issue 25 item 7): every published experiment of the catalog cites its source, in
 * one line the findings and docs/suite.md show; proxylab's own measurements cite none as a whole.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXPERIMENT_SOURCES, experimentSource, formatSource } from '../../lib/suite/catalog';

const SUITE_MD = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'suite.md'), 'utf8');

test('E1–E6 each cite a source, in catalog order', () => {
  expect(EXPERIMENT_SOURCES.map((e) => e.id)).toEqual(['E1', 'E2', 'E3', 'E4', 'E5', 'E6']);
});

test.each(EXPERIMENT_SOURCES.map((e) => [e.id, e.source] as const))(
  '%s: title, a date or a reason, a public link or "not public", and docs/suite.md names it',
  (id, source) => {
    // GIVEN the catalog's source of a published experiment
    // THEN it has a title, its link is https (or the one line says it is not public)
    expect(source.title.trim()).not.toBe('');
    if (source.url !== null) expect(source.url).toMatch(/^https:\/\/\S+$/);
    expect(experimentSource(id)).toEqual(source);
    const line = formatSource(source);
    expect(line.startsWith(`${source.title} — `)).toBe(true);
    expect(line).toContain(source.url ?? 'not public');
    expect(SUITE_MD).toContain(source.title);
  },
);

test.each([['SESSION'], ['LATENCY'], ['DISRUPT']] as const)(
  '%s is proxylab’s own measurement: no one write-up (its rules cite theirs)',
  (id) => {
    expect(experimentSource(id)).toBeNull();
  },
);

test('formatSource says "not public" rather than guessing a link', () => {
  expect(formatSource({ title: 'T', publisher: null, date: '2024-01', url: null })).toBe(
    'T — 2024-01, not public',
  );
  expect(formatSource({ title: 'T', publisher: 'P', date: null, url: 'https://x.example/a' })).toBe(
    'T — P, https://x.example/a',
  );
});
