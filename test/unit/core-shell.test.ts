import { shellQuote } from '../../lib/core/shell';

describe('shellQuote', () => {
  test.each([
    // GIVEN a word no POSIX shell treats specially, WHEN quoted, THEN it stays as it is
    ['runs/local-1', 'runs/local-1'],
    ['s3://bucket/runs/r1/request.json', 's3://bucket/runs/r1/request.json'],
    ['user@host:5432,x=1%+', 'user@host:5432,x=1%+'],
    // anything else goes in single quotes, a quote inside closed, escaped and reopened
    ['', "''"],
    ['my runs', "'my runs'"],
    ['$HOME', "'$HOME'"],
    ["it's", "'it'\\''s'"],
    ['a;rm -rf /', "'a;rm -rf /'"],
  ])('%j → %s', (arg, quoted) => {
    expect(shellQuote(arg)).toBe(quoted);
  });
});
