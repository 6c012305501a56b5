/**
 * plan.json stores each script file's text once (issue 38, item 9): a valid lab — a 60 KiB script
 * run by ~1,100 steps — made a plan.json of more than 64 MiB that `report`, resume and the runners
 * then refused. Now the text is stored once by its SHA-256 (schemaVersion 2), plans without script
 * files stay schemaVersion 1 byte for byte, and plans of earlier releases (the text in every step)
 * still read. `plan` and `validate` warn when a plan would still be too large for its readers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { loadLabFile } from '../../lib/config/load';
import { labSuite } from '../../lib/config/scenarios';
import { labTargetCapacities } from '../../lib/config/targets';
import type { LabConfig, LabScenario } from '../../lib/config/types';
import { RunFileError } from '../../lib/core/errors';
import { READ_LIMITS } from '../../lib/core/read';
import { labSuiteWarnings, previewRun } from '../../lib/cost/run-plan';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { loadRun } from '../../lib/report';
import { runFileText } from '../../lib/results/blob-store';
import { planFileBytes, planFileOf } from '../../lib/results/plan-file';
import { parseRunFile, planSchema } from '../../lib/results/schemas';
import { expandSuite } from '../../lib/suite/expand';
import { buildPlan, type RunPlan } from '../../lib/suite/plan';
import { manifestWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
const OWN = loadLabFile(path.join(ROOT, 'labs', 'own-workload.json'));
const MAX_CONNECTIONS = 1000;

/** A 60 KiB pgbench script of many short lines (each newline is two characters in JSON). */
const HEADER = '-- the team checkout, 60 KiB\n';
const SCRIPT_60K = HEADER + 'SELECT 1;\n'.repeat(Math.floor((60 * 1024 - HEADER.length) / 10));

/**
 * labs/own-workload.json with its scenario running `sql`: 30 client counts × 3 protocols × 3
 * repetitions on its 4 targets = 1,080 steps.
 */
function bigLab(sql: string): LabConfig {
  const own = OWN.scenarios[0] as LabScenario;
  const part = own.workload[0];
  if (!part || !('file' in part)) throw new Error('own-workload.json runs a script file');
  const scenario: LabScenario = {
    ...own,
    workload: [
      { ...part, file: { ...part.file, sql, sha256: createHash('sha256').update(sql).digest('hex') } },
    ],
    clients: Array.from({ length: 30 }, (_, i) => i + 1),
    protocols: ['simple', 'extended', 'prepared'],
    repetitions: 3,
  };
  return { ...OWN, scenarios: [scenario] };
}

function planOf(lab: LabConfig, runId: string): RunPlan {
  const capacities = labTargetCapacities(lab, MAX_CONNECTIONS);
  return buildPlan({
    runId,
    suite: 'lab',
    mode: 'cloud',
    createdAt: '2026-11-21T10:00:00.000Z',
    environment: {
      maxConnections: MAX_CONNECTIONS,
      serverVersion: '17.9',
      pgbenchVersion: '17.9',
      poolerVersion: null,
      cpus: 2,
    },
    targets: capacities.flatMap((c) => (c.descriptor ? [c.descriptor] : [])),
    steps: expandSuite(labSuite(lab), capacities),
    runnerCount: lab.runners.count,
  });
}

/** A plan made JSON-shaped (what a reader gives back). */
function asRead(plan: RunPlan): unknown {
  return JSON.parse(JSON.stringify(plan)) as unknown;
}

describe('a 60 KiB script × 1,080 steps', () => {
  const plan = planOf(bigLab(SCRIPT_60K), 'big-run');

  test('plan.json is written with the script once, and every reader reads it back (resume, report)', async () => {
    // GIVEN the run's plan and manifest, as a run writes them
    expect(plan.steps).toHaveLength(1080);
    const dir = path.join(scratchDir('proxylab-plan-file-'), 'big-run');
    const sink = new FileSystemSink(dir);
    await sink.writePlan(plan);
    await sink.writeManifest(
      manifestWith({
        runId: 'big-run',
        suite: 'lab',
        mode: 'cloud',
        stepIds: plan.steps.map((s) => s.stepId),
      }),
    );
    // WHEN / THEN resume (the strict reader) and the report read the plan the engine runs
    expect(await sink.readPlan()).toEqual(asRead(plan));
    const run = loadRun(dir);
    expect(run.plan?.steps).toHaveLength(1080);
    expect(run.plan?.steps[0]?.script).toEqual({
      parts: [expect.objectContaining({ file: { name: 'own-workload.sql', sql: SCRIPT_60K } })],
    });
    // AND the file is far below its readers' limit, the text in it once
    const text = fs.readFileSync(path.join(dir, 'plan.json'), 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThan(READ_LIMITS.runFile / 4);
    expect(text.split(JSON.stringify(HEADER).slice(1, -1)).length - 1).toBe(1);
  });

  test('`plan` and `validate` warn only when plan.json would still be too large for its readers', () => {
    // GIVEN the lab (its plan ≈ 5 MiB with the script stored once)
    const lab = bigLab(SCRIPT_60K);
    const bytes = planFileBytes(plan);
    const tooLarge = (ws: ReadonlyArray<{ id: string }>): number =>
      ws.filter((w) => w.id === 'proxylab:plan-too-large').length;
    // WHEN / THEN: no warning against the readers' 64 MiB
    expect(tooLarge(previewRun(lab, 'lab').warnings)).toBe(0);
    expect(tooLarge(labSuiteWarnings(lab, ['lab']))).toBe(0);
    // AND one, with the size, when the limit is below the plan
    const limit = Math.floor(bytes / 2);
    const warned = previewRun(lab, 'lab', { planFileMaxBytes: limit }).warnings.filter(
      (w) => w.id === 'proxylab:plan-too-large',
    );
    expect(warned).toEqual([
      {
        id: 'proxylab:plan-too-large',
        message: expect.stringMatching(
          /^suite lab plans 1080 steps whose plan\.json would be about \d+\.\d MiB \(each script stored once\), and `report`, resume and the runners read at most \d+\.\d MiB of it/,
        ) as unknown,
      },
    ]);
    expect(tooLarge(labSuiteWarnings(lab, ['lab'], { planFileMaxBytes: limit }))).toBe(1);
  });
});

describe('the two forms of plan.json', () => {
  const small = planOf(
    {
      ...bigLab('SELECT 1;\n'),
      scenarios: [
        {
          ...(bigLab('SELECT 1;\n').scenarios[0] as LabScenario),
          clients: [1],
          protocols: ['simple'],
          repetitions: 1,
        },
      ],
    },
    'small',
  );

  test('a plan with script files: schemaVersion 2, each text under its SHA-256, the steps naming it', () => {
    const file = planFileOf(small) as unknown as {
      schemaVersion: number;
      scripts: Record<string, string>;
      steps: Array<{ script: { parts: unknown[] } }>;
    };
    const hash = createHash('sha256').update('SELECT 1;\n').digest('hex');
    expect(file.schemaVersion).toBe(2);
    expect(file.scripts).toEqual({ [hash]: 'SELECT 1;\n' });
    expect(file.steps[0]?.script.parts).toEqual([{ file: { name: 'own-workload.sql', sha256: hash } }]);
    expect(parseRunFile(planSchema, 'plan.json', runFileText(file))).toEqual(asRead(small));
  });

  test('a plan of an earlier release (the text in every step, schemaVersion 1) reads as it did', () => {
    expect(parseRunFile(planSchema, 'plan.json', runFileText(small))).toEqual(asRead(small));
  });

  test('a plan without script files is written as schemaVersion 1, byte for byte as before', () => {
    const builtins: RunPlan = {
      ...small,
      steps: small.steps.map((s) => ({ ...s, script: { parts: [{ builtin: 'select-only' as const }] } })),
    };
    expect(planFileOf(builtins)).toBe(builtins);
    expect(planFileBytes(builtins)).toBe(Buffer.byteLength(runFileText(builtins)));
  });

  test.each([
    [
      'a text that is not its SHA-256',
      (f: Record<string, unknown>): void => {
        const scripts = f.scripts as Record<string, string>;
        for (const k of Object.keys(scripts)) scripts[k] = 'DROP TABLE x;';
      },
      /^scripts\.[0-9a-f]{64}$/,
    ],
    [
      'a step naming a script that is not stored',
      (f: Record<string, unknown>): void => {
        f.scripts = {};
      },
      /^steps\.0\.script\.parts\.0\.file\.sha256$/,
    ],
    [
      'a schemaVersion no release wrote',
      (f: Record<string, unknown>): void => {
        f.schemaVersion = 3;
      },
      /^schemaVersion$/,
    ],
  ])('schemaVersion 2 with %s is refused, naming the field', (_what, corrupt, field) => {
    const file = JSON.parse(runFileText(planFileOf(small))) as Record<string, unknown>;
    corrupt(file);
    let err: unknown;
    try {
      parseRunFile(planSchema, 'plan.json', JSON.stringify(file));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RunFileError);
    expect((err as RunFileError).field).toMatch(field);
  });
});
