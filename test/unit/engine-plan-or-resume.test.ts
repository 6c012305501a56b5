/**
 * One plan-or-resume path for `proxylab local` and the cloud runners (lib/engine/plan-or-resume.ts):
 * a stored plan is checked and run again, never re-expanded; a new plan is made once and stored
 * when asked; a step the infrastructure failed in is not finished.
 */
import { UsageError } from '../../lib/core/errors';
import { finishedSteps, planOrResume } from '../../lib/engine/plan-or-resume';
import { getSuite } from '../../lib/suite/catalog';
import { expandSuite } from '../../lib/suite/expand';
import { buildPlan, type RunPlan } from '../../lib/suite/plan';
import { describeTarget } from '../../lib/suite/targets';
import { stepRecordWith } from '../helpers/run-files';

function smokePlan(runnerCount: number): RunPlan {
  const descriptor = describeTarget({ kind: 'direct', name: 'direct' }, { version: '16.4' });
  const steps = expandSuite(getSuite('smoke'), [
    { ref: { kind: 'direct', name: 'direct' }, descriptor, maxConnections: 40, poolSize: null },
  ]);
  return buildPlan({
    runId: 'r1',
    suite: 'smoke',
    mode: 'cloud',
    createdAt: '2026-11-25T00:00:00.000Z',
    environment: {
      maxConnections: 40,
      serverVersion: '16.4',
      pgbenchVersion: null,
      poolerVersion: null,
      cpus: 2,
    },
    targets: [descriptor],
    steps,
    runnerCount,
  });
}

class PlanSink {
  readonly written: RunPlan[] = [];
  writePlan(plan: RunPlan): Promise<void> {
    this.written.push(plan);
    return Promise.resolve();
  }
}

describe('planOrResume', () => {
  test('a stored plan is checked and resumed: never expanded again, never rewritten', async () => {
    // GIVEN a stored plan
    const stored = smokePlan(1);
    const sink = new PlanSink();
    const fresh = jest.fn(() => smokePlan(1));
    const check = jest.fn();
    // WHEN
    const got = await planOrResume(sink, { stored, check, fresh, write: true });
    // THEN
    expect(check).toHaveBeenCalledWith(stored);
    expect(fresh).not.toHaveBeenCalled();
    expect(sink.written).toEqual([]);
    expect(got.isNew).toBe(false);
    expect(got.steps.map((s) => s.stepId)).toEqual(stored.steps.map((s) => s.stepId));
    expect(got.steps.every((s) => !('shares' in s))).toBe(true);
  });

  test('a stored plan the check refuses stops the run before anything is written', async () => {
    // GIVEN a plan made for two runners, resumed on one
    const sink = new PlanSink();
    const check = (plan: RunPlan): void => {
      if (plan.runnerCount !== 1)
        throw new UsageError(`its plan is for ${plan.runnerCount} runner(s), not 1`);
    };
    // WHEN / THEN
    await expect(
      planOrResume(sink, { stored: smokePlan(2), check, fresh: () => smokePlan(1), write: true }),
    ).rejects.toThrow('its plan is for 2 runner(s), not 1');
    expect(sink.written).toEqual([]);
  });

  test.each([
    [true, 1],
    [false, 0],
  ])('a new run gets a fresh plan, stored when write is %s', async (write, stores) => {
    // GIVEN no stored plan
    const sink = new PlanSink();
    const plan = smokePlan(1);
    // WHEN
    const got = await planOrResume(sink, { stored: null, check: jest.fn(), fresh: () => plan, write });
    // THEN
    expect(got.isNew).toBe(true);
    expect(got.plan).toBe(plan);
    expect(sink.written).toHaveLength(stores);
    expect(got.steps).toHaveLength(plan.steps.length);
  });

  test('a fresh plan that fails (no step for these targets) writes nothing', async () => {
    const sink = new PlanSink();
    const fresh = (): RunPlan => {
      throw new UsageError('suite smoke has no step for this lab');
    };
    await expect(planOrResume(sink, { stored: null, check: jest.fn(), fresh, write: true })).rejects.toThrow(
      /no step/,
    );
    expect(sink.written).toEqual([]);
  });
});

describe('finishedSteps', () => {
  test('measured and not-available steps are done; an infrastructure error is measured again', () => {
    // GIVEN three stored records, one the infrastructure failed in, one of a step no longer planned
    const a = stepRecordWith({ stepId: 'a', status: 'completed' });
    const b = stepRecordWith({ stepId: 'b', status: 'infrastructure-error' });
    const c = stepRecordWith({ stepId: 'c', status: 'not-available' });
    const old = stepRecordWith({ stepId: 'old', status: 'completed' });
    // WHEN
    const { done, records } = finishedSteps([a, b, c, old], ['a', 'b', 'c']);
    // THEN
    expect([...done].sort()).toEqual(['a', 'c', 'old']);
    expect([...records.keys()].sort()).toEqual(['a', 'c']);
    expect(records.get('a')).toBe(a);
  });
});
