/**
 * Disruption verdicts (lib/suite/disruption-verdict.ts) on hand-made results: the hard durability
 * check first, then the expectation matched by capability.
 */
import type { StepExpectation } from '../../../lib/suite/expand';
import { describeDisruption, judgeDisruption } from '../../../lib/suite/disruption-verdict';
import type { ProbeErrorCount } from '../../../lib/suite/disruption';
import { disruptionResult, type DisruptionResultInput } from '../../helpers/disruption-result';

const STOPPED: ProbeErrorCount = {
  class: 'server-stopped',
  sqlstate: '57P01',
  code: null,
  count: 4,
  sample: 'x',
};
const REFUSED: ProbeErrorCount = {
  class: 'connection-failed',
  sqlstate: null,
  code: 'ECONNREFUSED',
  count: 2,
  sample: 'y',
};

const GAVE_UP: ProbeErrorCount = {
  class: 'client-timeout',
  sqlstate: null,
  code: 'timeout',
  count: 3,
  sample: 'connect to 127.0.0.1:6432: no answer within 2000 ms',
};

function expect_(
  outcome: StepExpectation['outcome'],
  errorClasses: StepExpectation['errorClasses'] = [],
): StepExpectation {
  return { outcome, errorClasses, published: null, note: null };
}

describe('judgeDisruption', () => {
  test.each<[string, StepExpectation, DisruptionResultInput, boolean | null]>([
    ['errors expected, errors seen', expect_('errors'), { errors: [STOPPED] }, true],
    ['errors expected, none seen', expect_('errors'), {}, false],
    [
      'errors of a class expected, another class seen',
      expect_('errors', ['server-stopped']),
      { errors: [REFUSED] },
      false,
    ],
    [
      'errors of a class expected, that class seen',
      expect_('errors', ['server-stopped']),
      { errors: [REFUSED, STOPPED] },
      true,
    ],
    [
      'no errors expected (a stall), none seen',
      expect_('succeeds'),
      { figures: { stallWindowMs: 900 } },
      true,
    ],
    ['no errors expected, errors seen', expect_('succeeds'), { errors: [STOPPED] }, false],
    [
      'no errors expected, none seen but never writing again',
      expect_('succeeds'),
      { figures: { recovered: false } },
      false,
    ],
    [
      'no errors expected, none seen, but the stall still open when the window ended',
      expect_('succeeds'),
      { figures: { stallWindowMs: 3900, windowClosed: false, openAtEnd: 2 } },
      false,
    ],
    [
      'no errors expected, but the clients gave up at their own timeout',
      expect_('succeeds'),
      { errors: [GAVE_UP] },
      false,
    ],
    [
      'errors expected, only client timeouts seen (not the target’s error)',
      expect_('errors'),
      { errors: [GAVE_UP] },
      false,
    ],
    [
      'client timeouts expected by class and seen',
      expect_('errors', ['client-timeout']),
      { errors: [GAVE_UP] },
      true,
    ],
    ['informational, not over in the window', expect_('any'), { figures: { windowClosed: false } }, null],
    ['a refused connection expected and seen', expect_('refused'), { errors: [REFUSED] }, true],
    ['a refused connection expected, only shutdowns seen', expect_('refused'), { errors: [STOPPED] }, false],
    ['informational', expect_('any'), { errors: [STOPPED] }, null],
    ['informational, but a write lost', expect_('any'), { writes: { acknowledgedMissing: 1 } }, false],
    [
      'errors expected and seen, but a write lost',
      expect_('errors'),
      { errors: [STOPPED], writes: { acknowledgedMissing: 2 } },
      false,
    ],
    [
      'the ledger unreadable',
      expect_('any'),
      { writes: { reconciled: false, acknowledgedMissing: null, duplicates: null } },
      false,
    ],
    [
      'never disrupted (T0 missing), something expected',
      expect_('errors'),
      { t0: null, errors: [STOPPED] },
      false,
    ],
    ['never disrupted, informational', expect_('any'), { t0: null }, null],
  ])('%s', (_what, expectation, input, held) => {
    // GIVEN a result WHEN judged THEN
    expect(judgeDisruption(expectation, disruptionResult(input)).held).toBe(held);
  });

  test('the observation names the error window, the classes, the stall and the ledger', () => {
    // GIVEN errors, a stall and unknown outcomes resolved from the ledger
    const r = disruptionResult({
      errors: [STOPPED],
      figures: { errorWindowMs: 1420, stallWindowMs: 310, maxLatencyMs: 880 },
      writes: { unknown: 3, unknownCommitted: 2, unknownNotCommitted: 1, duplicates: 1 },
    });
    // WHEN / THEN
    expect(describeDisruption(r)).toBe(
      'errors 1.42 s (server-stopped 57P01 ×4), stall 0.31 s, max 880 ms; writes 196 acknowledged, 3 unknown (2 committed, 1 not), 0 lost, 1 duplicated',
    );
    expect(
      judgeDisruption(expect_('any'), disruptionResult({ writes: { acknowledgedMissing: 1 } })).observed,
    ).toMatch(/1 acknowledged write\(s\) LOST$/);
  });

  test('client timeouts and a window that did not close are named apart from the errors', () => {
    // GIVEN a pool's clients that waited, gave up twice at their 2 s timeout, and were still waiting at the end
    const r = disruptionResult({
      errors: [{ ...GAVE_UP, count: 2 }],
      clientTimeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 2000 },
      figures: { stallWindowMs: 3900, maxLatencyMs: 3900, windowClosed: false, openAtEnd: 1 },
    });
    // WHEN / THEN not an error, the client's own timeout, and not over
    expect(describeDisruption(r)).toBe(
      'no errors, client-timeout ×2 (gave up after connect 2.00 s, statement 2.00 s), stall 3.90 s, max 3900 ms, not over in the window, 1 still waiting at the end; writes 198 acknowledged, 0 lost',
    );
    expect(judgeDisruption(expect_('succeeds'), r)).toEqual({ observed: describeDisruption(r), held: false });
  });

  test('errors still coming when the window ended: said once, and "without an error" never holds', () => {
    // GIVEN errors to the end of the window (a pre-1.23 rolling restart seen so)
    const r = disruptionResult({
      errors: [REFUSED],
      figures: { errorWindowMs: null, recovered: false, windowClosed: false },
    });
    // WHEN
    const observed = describeDisruption(r);
    // THEN
    expect(observed.match(/not over/g)).toEqual(['not over']);
    expect(observed).toMatch(
      /^errors not over by the end of the window \(connection-failed ECONNREFUSED ×2\)/,
    );
    expect(judgeDisruption(expect_('succeeds'), r).held).toBe(false);
    expect(judgeDisruption(expect_('any'), r).held).toBeNull();
  });

  test('a result written before the window figure is judged by whether the clients wrote again', () => {
    // GIVEN an older result: no windowClosed, no client-timeout figures
    const base = disruptionResult({ figures: { stallWindowMs: 900 } });
    const { windowClosed: _w, clientTimeouts: _c, openAtEnd: _o, ...older } = base.figures;
    const old = { ...base, figures: older };
    // WHEN / THEN
    expect(judgeDisruption(expect_('succeeds'), old).held).toBe(true);
    expect(
      judgeDisruption(expect_('succeeds'), { ...old, figures: { ...older, recovered: false } }).held,
    ).toBe(false);
  });
});
