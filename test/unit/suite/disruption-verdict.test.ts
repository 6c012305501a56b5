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
});
