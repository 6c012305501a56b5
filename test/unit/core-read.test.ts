/** Bounded reading: what a hostile or odd input file gets, quickly and by name. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import { parseJsonText, readJsonFile, readTextFile } from '../../lib/core/read';
import { forTerminal, forTerminalLine } from '../../lib/core/terminal-text';
import { scratchDir } from '../helpers/scratch';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof UsageError) return err.code;
    throw err;
  }
  throw new Error('expected a UsageError');
}

describe('readTextFile', () => {
  test('a character device (/dev/zero) is refused before reading', () => {
    // GIVEN a device that would never end / WHEN read as a lab / THEN refused by type
    expect(codeOf(() => readTextFile('/dev/zero', 'lab'))).toBe('not-a-file');
    expect(() => readTextFile('/dev/urandom', 'capture')).toThrow(
      /a character device; expected a regular file/,
    );
  });

  test('a FIFO is refused without blocking', () => {
    const dir = scratchDir('proxylab-read-');
    const fifo = path.join(dir, 'lab.json');
    execFileSync('mkfifo', [fifo]);
    expect(() => readTextFile(fifo, 'lab')).toThrow(
      /lab\.json is a FIFO \(named pipe\); expected a regular file/,
    );
  });

  test('a directory, a missing file and a file over the limit are named', () => {
    const dir = scratchDir('proxylab-read-');
    expect(codeOf(() => readTextFile(dir, 'lab'))).toBe('not-a-file');
    expect(codeOf(() => readTextFile(path.join(dir, 'nope.json'), 'lab'))).toBe('file-missing');
    const big = path.join(dir, 'big.json');
    fs.writeFileSync(big, 'x'.repeat(2048));
    expect(() => readTextFile(big, 'lab', 1024)).toThrow(/big\.json is 0\.00 MiB; a lab file may be at most/);
    expect(readTextFile(big, 'lab', 2048)).toHaveLength(2048);
  });

  test('a UTF-8 byte order mark is dropped', () => {
    const dir = scratchDir('proxylab-read-');
    const f = path.join(dir, 'bom.json');
    fs.writeFileSync(f, '\ufeff{"name":"x"}');
    expect(readJsonFile(f, 'lab')).toEqual({ name: 'x' });
  });
});

describe('parseJsonText', () => {
  const src = { source: 'lab.json' };

  test('5000-deep nesting is refused by depth, not by a stack overflow', () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    expect(() => parseJsonText(deep, src)).toThrow(/^lab\.json: \S+: nested deeper than 64 levels/);
    const obj = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    expect(codeOf(() => parseJsonText(obj, src))).toBe('json-too-deep');
  });

  test('nesting within the limit parses', () => {
    expect(parseJsonText('[[[[1]]]]', { ...src, maxDepth: 4 })).toEqual([[[[1]]]]);
    expect(codeOf(() => parseJsonText('[[[[[1]]]]]', { ...src, maxDepth: 4 }))).toBe('json-too-deep');
  });

  test('duplicate keys are refused with their path when asked, kept (last wins) otherwise', () => {
    const text = '{"name":"a","aurora":{"instanceClass":"db.t4g.medium","instanceClass":"db.r6g.large"}}';
    expect(() => parseJsonText(text, { ...src, rejectDuplicateKeys: true })).toThrow(
      'lab.json: aurora.instanceClass: duplicate key "instanceClass"',
    );
    expect(parseJsonText(text, src)).toEqual({ name: 'a', aurora: { instanceClass: 'db.r6g.large' } });
    // the same key in sibling objects is not a duplicate; keys inside strings are not keys
    expect(
      parseJsonText('{"a":{"x":1},"b":{"x":2},"c":"\\"a\\":1","d":[{"x":1},{"x":2}]}', {
        ...src,
        rejectDuplicateKeys: true,
      }),
    ).toEqual({ a: { x: 1 }, b: { x: 2 }, c: '"a":1', d: [{ x: 1 }, { x: 2 }] });
  });

  test('numbers beyond a double are named, not turned into null', () => {
    expect(() => parseJsonText('{"ttlHours":1e400}', src)).toThrow(
      "lab.json: ttlHours: the number 1e400 is out of JSON's range",
    );
    expect(() => parseJsonText('{"proxies":[{"a":1},{"b":-2e999}]}', src)).toThrow(
      /proxies\[1\]\.b: the number -2e999/,
    );
    expect(parseJsonText('{"a":1e300,"b":-0.5,"c":5e-324}', src)).toEqual({ a: 1e300, b: -0.5, c: 5e-324 });
  });

  test('invalid JSON is a usage error naming the source', () => {
    expect(() => parseJsonText('{"a":', src)).toThrow(/^lab\.json is not valid JSON: /);
  });
});

describe('forTerminal', () => {
  test('escape sequences and other controls become visible', () => {
    expect(forTerminal('run\u001b]0;pwned\u0007-1\u001b[2J')).toBe('run\\x1b]0;pwned\\x07-1\\x1b[2J');
    expect(forTerminal('a\u009bb\u202ec')).toBe('a\\x9bb\\u202ec');
    expect(forTerminal('tab\tand\nnewline stay')).toBe('tab\tand\nnewline stay');
    expect(forTerminalLine('two\nlines')).toBe('two\\nlines');
  });
});
