/**
 * Figures no measurement can give are refused where a run file is read (issue 38, item 7): a
 * negative tps or latency, 1.7e308 tps, a fractional or negative count, a percentage above 100, a
 * time that is not one (lib/results/figures.ts says each bound and why). The report leaves the step
 * out, naming the field, and says PARTIAL; a manifest or plan that holds one refuses the run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadRun } from '../../lib/report';
import { ELAPSED_MS_MAX, isPlausibleTime, TPS_MAX } from '../../lib/results/figures';
import { stepPaths } from '../../lib/results/run-paths';
import { manifestSchema, metricsFileSchema, parseRunFile, stepRecordSchema } from '../../lib/results/schemas';
import type { StepRecord } from '../../lib/suite/types';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'runs', 'synthetic-repeated');
const STEP = 'quick-e1/direct/c20/simple/persistent/r1';

/** `value` set at the dotted `field` of a copy of `doc` (`result.tps`, `parts.0.cpuMaxPercent`). */
function withField(doc: unknown, field: string, value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  const keys = field.split('.');
  let at: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1] as string] = value;
  return copy;
}

/** The fixture's step, with one runner part and server connections, so every field can be set. */
function fullRecord(): StepRecord {
  const base = stepRecordWith({});
  return {
    ...base,
    parts: [{ runnerId: 'runner-0', clients: 20, jobs: 2, result: base.result, cpuMaxPercent: 41.5 }],
    serverConnections: { before: 1, peak: 21, after: 1 },
  };
}

describe('step records: every figure bounded to what can be measured', () => {
  test.each([
    ['result.tps', -1],
    ['result.tps', 1.7e308],
    ['result.tps', TPS_MAX * 2],
    ['result.latencyAvgMs', -3],
    ['result.latencyP95Ms', -0.5],
    ['result.latencyP99Ms', ELAPSED_MS_MAX * 10],
    ['result.initialConnectionMs', -1],
    ['result.transactionsProcessed', -10],
    ['result.transactionsProcessed', 2.5],
    ['result.failedTransactions', -1],
    ['result.abortedClients', -1],
    ['result.clients', 0.5],
    ['result.exitCode', 300],
    ['result.durationSec', -1],
    ['params.clients', -5],
    ['params.poolPercent', 150],
    ['params.rate', -1],
    ['params.repetition', 0],
    ['parts.0.cpuMaxPercent', -1],
    ['serverConnections.peak', -1],
    ['startedAt', 'yesterday'],
    ['startedAt', '1970-01-01T00:00:00.000Z'],
    ['endedAt', '9999-12-31T23:59:59.000Z'],
    ['endedAt', '2026-02-30T25:00:00Z'],
  ])('%s = %p is refused, naming the field', (field, value) => {
    // GIVEN a valid record with one impossible figure
    const text = JSON.stringify(withField(fullRecord(), field, value));
    // WHEN / THEN
    expect(() => parseRunFile(stepRecordSchema, 'steps/x.json', text)).toThrow(
      expect.objectContaining({ code: 'run-file-invalid', field }) as Error,
    );
  });

  test.each([
    ['result.tps', 0],
    ['result.tps', 154.6],
    ['result.latencyAvgMs', 0],
    ['result.latencyP95Ms', null],
    ['params.poolPercent', 100],
    ['parts.0.cpuMaxPercent', 390.5],
    ['startedAt', '2026-11-21T10:00:00+01:00'],
    ['endedAt', '2026-11-21T10:00:05Z'],
  ])('%s = %p is a measurement, read as it is', (field, value) => {
    const doc = withField(fullRecord(), field, value);
    expect(parseRunFile(stepRecordSchema, 'steps/x.json', JSON.stringify(doc))).toEqual(doc);
  });

  test('the report leaves a step with a negative tps out, named, and says PARTIAL; the others stay', () => {
    // GIVEN a copy of a run whose one step says -154.6 tps
    const dir = path.join(scratchDir('proxylab-bounds-'), 'run');
    fs.cpSync(FIXTURE, dir, { recursive: true });
    const file = path.join(dir, stepPaths(STEP).json);
    fs.writeFileSync(
      file,
      JSON.stringify(withField(JSON.parse(fs.readFileSync(file, 'utf8')), 'result.tps', -154.6)),
    );
    // WHEN
    const run = loadRun(dir);
    // THEN
    expect(run.problems).toEqual([
      'steps/quick-e1_direct_c20_simple_persistent_r1.json: result.tps: expected a rate ≥ 0 per second; skipped',
    ]);
    expect(run.missingStepIds).toEqual([STEP]);
    expect(run.steps).toHaveLength(36);
  });
});

describe('manifest and metrics files', () => {
  test.each([
    ['stepsCompleted', -1],
    ['stepsCompleted', 1.5],
    ['environment.maxConnections', -100],
    ['environment.cpus', -2],
    ['startedAt', 'not a time'],
  ])('manifest %s = %p is refused', (field, value) => {
    const text = JSON.stringify(withField(manifestWith({}), field, value));
    expect(() => parseRunFile(manifestSchema, 'manifest.json', text)).toThrow(
      expect.objectContaining({ field }) as Error,
    );
  });

  test.each([
    ['window.start', '1999-12-31T23:59:59.000Z'],
    ['collectedAt', ''],
    ['series.0.points.0.0', '12:00'],
    // every series counts or measures something that cannot be negative; none reaches an exabyte
    ['series.0.points.0.1', -3],
    ['series.0.points.0.1', 1.7e308],
  ])('metrics %s = %p is refused', (field, value) => {
    const file = {
      schemaVersion: 1,
      runId: 'r1',
      window: { start: '2026-11-21T10:00:00.000Z', end: '2026-11-21T11:00:00.000Z' },
      collectedAt: '2026-11-21T11:05:00.000Z',
      series: [
        {
          source: 'cloudwatch',
          name: 'CPUUtilization',
          stat: 'Average',
          unit: 'Percent',
          dimensions: {},
          points: [['2026-11-21T10:01:00.000Z', 12.5]],
          status: 'ok',
        },
      ],
    };
    expect(parseRunFile(metricsFileSchema, 'metrics/x.json', JSON.stringify(file))).toEqual(file);
    expect(() =>
      parseRunFile(metricsFileSchema, 'metrics/x.json', JSON.stringify(withField(file, field, value))),
    ).toThrow(expect.objectContaining({ field }) as Error);
  });
});

describe('plausible times', () => {
  test.each([
    ['2026-11-21T10:00:00.000Z', true],
    ['2026-11-21T10:00:00Z', true],
    ['2026-11-21T10:00Z', true],
    ['2026-11-21T11:00:00.123456+01:00', true],
    ['2000-01-01T00:00:00.000Z', true],
    ['1999-12-31T23:59:59.999Z', false],
    ['2100-01-01T00:00:00.000Z', false],
    ['2026-11-21', false],
    ['2026-11-21 10:00:00Z', false],
    ['+275760-09-13T00:00:00.000Z', false],
    ['2026-13-01T00:00:00Z', false],
  ])('%s: %p', (text, plausible) => {
    expect(isPlausibleTime(text)).toBe(plausible);
  });
});
