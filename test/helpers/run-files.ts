/**
 * Valid run-store files for tests that only care about a few fields: the readers validate every
 * file against lib/results/schemas.ts, so a partial object would (rightly) be rejected.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunManifest, StepRecord } from '../../lib/suite/types';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');

/** A complete manifest with `fields` replacing the fixture's. */
export function manifestWith(fields: Partial<RunManifest>): RunManifest {
  const base = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'manifest.json'), 'utf8')) as RunManifest;
  return { ...base, scenarioVerdicts: [], ...fields };
}

/** A complete step record with `fields` replacing the fixture's. */
export function stepRecordWith(fields: Partial<StepRecord>): StepRecord {
  const file = path.join(FIXTURE, 'steps', 'quick-e1_direct_c20_simple_persistent_r1.json');
  const base = JSON.parse(fs.readFileSync(file, 'utf8')) as StepRecord;
  return { ...base, ...fields };
}
