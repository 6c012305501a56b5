/**
 * runLocked's phases on their own (lib/local/run-local.ts): a completed run with every planned step
 * recorded has nothing to run and answers with the result it ended with; and how signals (and a
 * closed stdout) stop a run: which signal it reports, what it says, whether anything is kept.
 */
import { InterruptedError } from '../../lib/core/errors';
import type { ProgressEvent } from '../../lib/engine/run-suite';
import {
  alreadyComplete,
  planLocal,
  RunStopper,
  STOP_SIGNALS,
  validateLocalInput,
} from '../../lib/local/run-local';
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

describe('RunStopper (signals and a closed stdout)', () => {
  function stopper(keptBefore = false) {
    const lines: string[] = [];
    return { stop: new RunStopper('r1', keptBefore, (l) => lines.push(l)), lines };
  }
  const stepEnd = { type: 'step-end' } as ProgressEvent;

  test.each(['SIGINT', 'SIGTERM'] as const)(
    '%s before the first step aborts the run, is the signal reported, and nothing is kept',
    (sig) => {
      // GIVEN a new run WHEN the signal arrives
      const { stop, lines } = stopper();
      stop.onSignal(sig);
      // THEN
      expect(stop.abort.signal.aborted).toBe(true);
      expect(stop.interruptedBy).toBe(sig);
      expect(lines).toEqual([`\n${sig}: stopping before the first step; nothing was measured…`]);
      expect(stop.nothingMeasured('interrupted', null)).toBe(true);
      // exit 128 + the signal's number: SIGINT 130, SIGTERM 143
      const err = stop.interrupted();
      expect(err).toBeInstanceOf(InterruptedError);
      expect(err.signal).toBe(sig);
      expect(err.exitCode).toBe(sig === 'SIGINT' ? 130 : 143);
      expect(err.message).toBe(`interrupted by ${sig} before the first step; nothing was measured`);
    },
  );

  test('after a recorded step a signal keeps the finished steps and says how to resume', () => {
    // GIVEN a step ended in this part
    const { stop, lines } = stopper();
    const seen: ProgressEvent[] = [];
    stop.progress((ev) => seen.push(ev))(stepEnd);
    // WHEN
    stop.onSignal('SIGTERM');
    // THEN the event is passed on, and the run is not "nothing measured"
    expect(seen).toEqual([stepEnd]);
    expect(lines).toEqual([
      '\nSIGTERM: stopping pgbench, PostgreSQL and PgBouncer; finished steps are kept (resume with --run-id r1)…',
    ]);
    expect(stop.nothingMeasured('interrupted', null)).toBe(false);
  });

  test.each([
    ['a pgbench step', 'pgbench'],
    ['a disruption group (its steps measured together)', 'disruption'],
  ])(
    'once %s has started, a signal keeps the run directory although no step is recorded yet',
    (_what, kind) => {
      // GIVEN the first step started in this part (step-start: settings applied, pools reset, the
      // load or the disruption's probe under way), none recorded
      const { stop, lines } = stopper();
      const started = {
        type: 'step-start',
        note: kind === 'disruption' ? '4 steps measured together (postgres-restart)' : null,
      } as ProgressEvent;
      stop.progress()(started);
      // WHEN
      stop.onSignal('SIGINT');
      // THEN the run is not "nothing measured" (the run directory stays, with the metrics sampled
      // during the step), and the line says the step itself is not recorded
      expect(stop.nothingMeasured('interrupted', null)).toBe(false);
      expect(lines).toEqual([
        '\nSIGINT: stopping the first step, PostgreSQL and PgBouncer; the step is not recorded, the run directory is kept with what was sampled during it (resume with --run-id r1)…',
      ]);
    },
  );

  test('a resumed run with steps from an earlier part keeps them even when interrupted before a step', () => {
    const { stop, lines } = stopper(true);
    stop.onSignal('SIGINT');
    expect(lines[0]).toContain('finished steps are kept');
    expect(stop.nothingMeasured('interrupted', null)).toBe(false);
  });

  test.each([
    ['completed', null, false],
    ['failed', null, false],
    ['interrupted', manifestWith({ runId: 'r1' }), false],
    ['interrupted', null, true],
  ] as const)('status %s, earlier manifest %p: nothing measured %s', (status, prev, expected) => {
    expect(stopper().stop.nothingMeasured(status, prev)).toBe(expected);
  });

  test('a second signal does not replace the first: it says the run is still stopping', () => {
    const { stop, lines } = stopper();
    stop.onSignal('SIGINT');
    stop.onSignal('SIGTERM');
    expect(stop.interruptedBy).toBe('SIGINT');
    expect(lines[1]).toBe('SIGTERM again: still stopping, please wait…');
  });

  test('a closed stdout (EPIPE) stops the run as SIGPIPE, once; other stdout errors do not', () => {
    const { stop, lines } = stopper();
    const err = (code: string) => Object.assign(new Error(code), { code });
    stop.onStdoutError(err('EAGAIN'));
    expect(stop.abort.signal.aborted).toBe(false);
    stop.onStdoutError(err('EPIPE'));
    stop.onStdoutError(err('EPIPE')); // the "stopping" line itself failing the same way
    expect(stop.interruptedBy).toBe('SIGPIPE');
    expect(lines).toHaveLength(1);
  });

  test('install puts a handler on every stop signal and stdout; its return takes them all off', () => {
    // GIVEN the listeners before
    const before = STOP_SIGNALS.map((sig) => process.listenerCount(sig));
    const stdoutBefore = process.stdout.listenerCount('error');
    const { stop } = stopper();
    // WHEN installed, a SIGTERM delivered to the process reaches the stopper
    const uninstall = stop.install();
    expect(STOP_SIGNALS.map((sig) => process.listenerCount(sig))).toEqual(before.map((n) => n + 1));
    process.emit('SIGTERM', 'SIGTERM');
    expect(stop.interruptedBy).toBe('SIGTERM');
    // THEN uninstall restores the listeners as they were
    uninstall();
    expect(STOP_SIGNALS.map((sig) => process.listenerCount(sig))).toEqual(before);
    expect(process.stdout.listenerCount('error')).toBe(stdoutBefore);
  });
});
