/**
 * The local stand-in of `minor-upgrade` (issue 42 item 1): a restart onto another installed minor
 * build of the stack's PostgreSQL major when one is found, else a fast restart — named as such, never
 * as an upgrade — and the `planned` suite's scenario in local timing with informational expectations.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findOtherMinorBuild } from '../../lib/local/binaries';
import { LOCAL_DISRUPTIONS, minorUpgradeStandIn, withLocalStandIns } from '../../lib/local/disruptions';
import { getSuite } from '../../lib/suite/catalog';
import { scratchDir } from '../helpers/scratch';

const CURRENT = { bindir: '/usr/lib/postgresql/15/bin', version: '15.18' };

test('no second build of the major: a fast restart, said plainly, no claim of an upgrade', () => {
  const seen: unknown[] = [];
  const s = minorUpgradeStandIn(CURRENT, (c) => {
    seen.push(c);
    return null;
  });
  expect(seen).toEqual([CURRENT]);
  const what =
    "fast restart (no second PostgreSQL 15 minor build installed; a real minor upgrade restarts the engine like this, plus AWS's preparation)";
  expect(s).toEqual({ kind: 'fast-restart', what, words: `stand-in: ${what}` });
});

test('another minor build of the major found: a restart onto it, both versions and its directory named', () => {
  const other = { bindir: '/opt/pg-15.19/bin', version: '15.19' };
  const s = minorUpgradeStandIn(CURRENT, () => other);
  expect(s.kind).toBe('other-build');
  expect(s.kind === 'other-build' && [s.from, s.to]).toEqual([CURRENT, other]);
  expect(s.words).toMatch(
    /^stand-in: fast restart onto another installed PostgreSQL 15 minor build, 15\.18 → 15\.19 \(\/opt\/pg-15\.19\/bin;/,
  );
  expect(s.words).toContain("AWS's preparation is not reproduced");
});

test('the local stack can do it', () => {
  expect(LOCAL_DISRUPTIONS).toContain('minor-upgrade');
});

test('locally the planned suite runs the stand-in: same name, its words in the title, seconds long, informational', () => {
  const planned = getSuite('planned');
  const cloud = planned.scenarios.find((s) => s.name === 'minor-upgrade');
  const standIn = minorUpgradeStandIn(CURRENT, () => null);
  const local = withLocalStandIns(planned, standIn);
  const s = local.scenarios.find((x) => x.name === 'minor-upgrade');
  expect(s?.title).toBe(`Minor-version upgrade, local ${standIn.words}`);
  expect(s?.note).toBe(`local ${standIn.words}`);
  const p = s?.probe;
  if (p?.kind !== 'disruption') throw new Error('no disruption probe');
  expect({ action: p.disruption.action, repetitions: s?.repetitions }).toEqual({
    action: 'minor-upgrade',
    repetitions: 1,
  });
  // the cloud window (AWS's preparation) is 920 s; the local one is seconds (a run grows it to its
  // targets' recovery bound, 18 s for a default PgBouncer)
  expect(p.warmupSec + p.recoverySec).toBeLessThanOrEqual(10);
  expect(cloud?.probe?.kind === 'disruption' && cloud.probe.recoverySec).toBe(900);
  expect(s?.expectations.map((r) => r.outcome)).toEqual(cloud?.expectations.map((r) => r.outcome));
  expect(s?.expectations.every((r) => r.outcome === 'any')).toBe(true);
  // a suite without a minor upgrade is left as it is
  const disruption = getSuite('disruption');
  expect(withLocalStandIns(disruption, standIn)).toBe(disruption);
});

/** A fake `postgres` that prints `version` for --version. */
function fakePostgres(dir: string, version: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'postgres');
  fs.writeFileSync(file, `#!/bin/sh\necho "postgres (PostgreSQL) ${version}"\n`, { mode: 0o755 });
  return dir;
}

test('the finder: the first other build of the same major with another version; its own, other majors and the same version skipped', () => {
  const root = scratchDir('proxylab-minor-builds-');
  const own = fakePostgres(path.join(root, 'own'), '15.18');
  const link = path.join(root, 'link');
  fs.mkdirSync(link);
  fs.symlinkSync(path.join(own, 'postgres'), path.join(link, 'postgres'));
  const same = fakePostgres(path.join(root, 'same'), '15.18');
  const major16 = fakePostgres(path.join(root, 'sixteen'), '16.4');
  const minor = fakePostgres(path.join(root, 'minor'), '15.19');
  const empty = path.join(root, 'empty');
  fs.mkdirSync(empty);
  const current = { bindir: own, version: '15.18' };
  expect(findOtherMinorBuild(current, [own, link, same, major16, empty, minor])).toEqual({
    bindir: minor,
    version: '15.19',
  });
  expect(findOtherMinorBuild(current, [own, link, same, major16, empty])).toBeNull();
});
