/**
 * splitSessionOutput: the long-lived psql session learns whether each statement failed from the
 * marker line psql prints after it (`\echo marker :ERROR :SQLSTATE :LAST_ERROR_MESSAGE`), because
 * stderr is a separate pipe whose text may arrive later than the marker.
 */
import { splitSessionOutput } from '../../lib/exec/psql';

const US = '\u001f';
const MARK = '@@proxylab-result@@';

describe('splitSessionOutput', () => {
  test('one answer per marker, rows parsed, a failed statement carries its SQLSTATE and message', () => {
    const out = [
      `one${US}two`,
      `1${US}a`,
      `2${US}b`,
      `${MARK} false 00000 `,
      `${MARK} true 42P01 relation "no_such_table" does not exist`,
      '',
    ].join('\n');
    const answers = splitSessionOutput(out);
    expect(answers).toEqual([
      {
        rows: [
          { one: '1', two: 'a' },
          { one: '2', two: 'b' },
        ],
        error: null,
      },
      { rows: [], error: 'relation "no_such_table" does not exist (SQLSTATE 42P01)' },
    ]);
  });

  test('an incomplete marker line at the end is not yet an answer', () => {
    expect(splitSessionOutput(`x\n1\n${MARK} fal`)).toEqual([]);
    expect(splitSessionOutput(`x\n1\n${MARK} false 00000 \n`)).toEqual([{ rows: [{ x: '1' }], error: null }]);
  });

  test('a psql without the ERROR variable (literal ":ERROR") counts as success, not as a failure', () => {
    expect(splitSessionOutput(`x\n1\n${MARK} :ERROR :SQLSTATE :LAST_ERROR_MESSAGE\n`)).toEqual([
      { rows: [{ x: '1' }], error: null },
    ]);
  });
});
