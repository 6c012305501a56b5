/**
 * runLocked's phases on their own (lib/local/run-local.ts): a completed run with every planned step
 * recorded has nothing to run and answers with the result it ended with.
 */
import { alreadyComplete, planLocal, validateLocalInput } from '../../lib/local/run-local';
import { manifestWith, stepRecordWith } from '../helpers/run-files';
import { scratchDir } from '../helpers/scratch';

function smokeRun() {
  const out = scratchDir('proxylab-local-phases-');
  const opts = validateLocalInput({ suite: 'smoke', runId: 'r1', out }, out);
  const planned = planLocal(opts);
  // stored in reverse order: the answer is in plan order
  const records = [...planned].reverse().map((s) => stepRecordWith({ runId: 'r1', stepId: s.stepId }));
  return { opts, planned, records, runDir: `${out}/r1` };
}

describe('alreadyComplete', () => {
  test('a completed run with every step recorded: its records in plan order and its own duration', () => {
    // GIVEN
    const { opts, planned, records, runDir } = smokeRun();
    const prev = manifestWith({
      runId: 'r1',
      suite: 'smoke',
      status: 'completed',
      startedAt: '2026-11-25T00:00:00.000Z',
      endedAt: '2026-11-25T00:01:30.000Z',
      scenarioVerdicts: [],
    });
    // WHEN
    const got = alreadyComplete(prev, null, records, opts, runDir);
    // THEN
    expect(got?.alreadyComplete).toBe(true);
    expect(got?.records.map((r) => r.stepId)).toEqual(planned.map((s) => s.stepId));
    expect(got?.wallSec).toBe(90);
    expect(got?.manifest).toBe(prev);
  });

  test.each([
    ['a step is missing', 'completed' as const, 1],
    ['the run was interrupted', 'interrupted' as const, 0],
  ])('%s: there is something to run', (_what, status, drop) => {
    const { opts, records, runDir } = smokeRun();
    const prev = manifestWith({ runId: 'r1', suite: 'smoke', status });
    expect(alreadyComplete(prev, null, records.slice(drop), opts, runDir)).toBeNull();
  });
});
