/** Bounded reading: what a hostile or odd input file gets, quickly and by name. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../../lib/core/errors';
import {
  checkWritableDirIn,
  invalidUtf8Offset,
  listDirIn,
  parseJsonText,
  readFileIn,
  readJsonFile,
  readTextFile,
} from '../../lib/core/read';
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

  test.each([
    ['{"a":1,}', "'}' after ',' (JSON allows no trailing comma) (line 1, column 8)"],
    ['[1,]', "']' after ',' (JSON allows no trailing comma) (line 1, column 4)"],
    ['{"a":"x', 'a string that never ends (no closing ") (line 1, column 6)'],
    ['{"a":"\u0001"}', 'U+0001 inside a string (write control characters as \\u00XX) (line 1, column 7)'],
    ['{"a":"\\q"}', "an unknown escape \\'q' in a string (line 1, column 7)"],
    ['{"a":"\\u12"}', 'a \\u escape without 4 hex digits (line 1, column 7)'],
    ['{"a":01}', "'1' where ',' or '}' was expected (line 1, column 7)"],
    ['{"a":.5}', "'.' where a value was expected (line 1, column 6)"],
    ['{"a":1} x', "'x' after the end of the JSON value (line 1, column 9)"],
    ['{a:1}', "'a' where a quoted key was expected (line 1, column 2)"],
    ['{"a" 1}', "'1' where ':' after a key was expected (line 1, column 6)"],
    ['', 'there is no JSON value (the text is empty) (line 1, column 1)'],
    ['[\n  tru\n]', "'t' where a value was expected (line 2, column 3)"],
  ])('%j: named by line and column, without quoting the text', (text, detail) => {
    expect(() => parseJsonText(text, src)).toThrow(`lab.json is not valid JSON: ${detail}`);
  });

  test('what the grammar accepts parses as JSON.parse would', () => {
    const text = '{"a":[1,-0.5,2e3,true,false,null,"\\u00e9\\n"],"b":{},"c":[]}';
    expect(parseJsonText(text, src)).toEqual(JSON.parse(text));
  });
});

describe('UTF-8', () => {
  test.each([
    [[0x61, 0xff], 1],
    [[0xc0, 0xaf], 0], // overlong '/'
    [[0xe0, 0x80, 0xaf], 1], // overlong
    [[0xed, 0xa0, 0x80], 1], // a surrogate
    [[0xf4, 0x90, 0x80, 0x80], 1], // beyond U+10FFFF
    [[0x61, 0xe2, 0x82], 1], // truncated at the end
    [[0x61, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], -1], // € and an emoji
  ])('%j: first bad byte at %i', (bytes, at) => {
    expect(invalidUtf8Offset(Uint8Array.from(bytes))).toBe(at);
  });
});

describe('readFileIn / listDirIn / checkWritableDirIn', () => {
  function runDir(): string {
    const dir = scratchDir('proxylab-read-in-');
    fs.mkdirSync(path.join(dir, 'steps'));
    fs.writeFileSync(path.join(dir, 'steps', 'a.json'), '{}');
    return dir;
  }

  test('a file, a missing file, and paths that would leave the directory', () => {
    const dir = runDir();
    expect(readFileIn(dir, 'steps/a.json', 'stepRecord')).toBe('{}');
    expect(readFileIn(dir, 'steps/none.json', 'stepRecord')).toBeNull();
    expect(readFileIn(dir, 'none/a.json', 'stepRecord')).toBeNull();
    for (const rel of ['../x.json', '/etc/passwd', 'steps//a.json', 'steps/./a.json'])
      expect(codeOf(() => readFileIn(dir, rel, 'runFile'))).toBe('path-escapes');
  });

  test('a link inside the run directory is refused too, even to a file inside it', () => {
    const dir = runDir();
    fs.symlinkSync(path.join(dir, 'steps', 'a.json'), path.join(dir, 'steps', 'b.json'));
    expect(codeOf(() => readFileIn(dir, 'steps/b.json', 'stepRecord'))).toBe('symlink-refused');
    expect(listDirIn(dir, 'steps')?.map((e) => [e.name, e.type])).toEqual([
      ['a.json', 'file'],
      ['b.json', 'symlink'],
    ]);
  });

  test('the run directory itself may be a link (the user named it)', () => {
    const dir = runDir();
    const link = path.join(scratchDir('proxylab-read-in-'), 'latest');
    fs.symlinkSync(dir, link);
    expect(readFileIn(link, 'steps/a.json', 'stepRecord')).toBe('{}');
  });

  test('writers: a linked or plain-file directory on the way is refused, a missing one is fine', () => {
    const dir = runDir();
    expect(() => checkWritableDirIn(dir, 'steps')).not.toThrow();
    expect(() => checkWritableDirIn(dir, 'metrics')).not.toThrow();
    fs.symlinkSync(scratchDir('proxylab-read-in-'), path.join(dir, 'metrics'));
    expect(codeOf(() => checkWritableDirIn(dir, 'metrics'))).toBe('symlink-refused');
    fs.writeFileSync(path.join(dir, 'raw'), '');
    expect(codeOf(() => checkWritableDirIn(dir, 'raw/x'))).toBe('not-a-directory');
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
