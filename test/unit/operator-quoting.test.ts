/**
 * Command lines the operator prints to be copied (issue 38): `deploy --dry-run`'s and `destroy`'s
 * "would run:" line and the teardown command after a deploy quote every word for a POSIX shell
 * (lib/core/shell.ts shellQuote), so a lab file named `x;touch pwned;.json` stays one argument when
 * the line is pasted — unquoted, the shell would run what the name holds.
 */
import { cdkInvocation, formatInvocation, teardownCommand } from '../../lib/operator/operator';

/**
 * The words a POSIX shell reads from `line`, for the quoting shellQuote writes: bare words, `'…'`
 * and `\'`; anything a shell would treat as syntax outside quotes (`; | & $ ( ) < > ` and others)
 * is returned as its own `OPERATOR:` word, so a test sees a command split in two.
 */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      word = (word ?? '') + (line[i + 1] ?? '');
      i += 1;
    } else if (/[\w@%+=:,./-]/.test(c)) word = (word ?? '') + c;
    else {
      if (word !== null) words.push(word);
      words.push(`OPERATOR:${c}`);
      word = null;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

const HOSTILE = [
  'labs/x;touch pwned;.json',
  'labs/$(id).json',
  "labs/it's `id`.json",
  'labs/a b|sh.json',
  'labs/new\nline.json',
];

describe('the cdk command line as printed', () => {
  test.each(HOSTILE)('lab file %j stays one argument, every word as cdk gets it', (labFile) => {
    // GIVEN
    const inv = cdkInvocation(
      'deploy',
      labFile,
      { profile: 'lab', region: 'eu-west-1' },
      '/home/me/proxylab',
    );
    // WHEN
    const line = formatInvocation(inv);
    // THEN the shell reads back exactly the environment and argv the CLI itself runs
    expect(shellWords(line)).toEqual([
      'AWS_PROFILE=lab',
      'AWS_REGION=eu-west-1',
      'AWS_DEFAULT_REGION=eu-west-1',
      'CDK_DEFAULT_REGION=eu-west-1',
      'npx',
      ...inv.args,
    ]);
    expect(inv.args[3]).toBe(`lab=/home/me/proxylab/${labFile}`);
  });

  test('a plain lab path prints as before (nothing to quote)', () => {
    const inv = cdkInvocation('destroy', '/x/lab.json', { profile: 'lab' });
    expect(formatInvocation(inv)).toBe('AWS_PROFILE=lab npx cdk destroy -c lab=/x/lab.json --force');
  });
});

describe('the teardown command printed after a deploy', () => {
  test.each(HOSTILE)('lab file %j stays one argument', (labFile) => {
    expect(shellWords(teardownCommand(labFile, { profile: 'lab', region: 'eu-west-1' }))).toEqual([
      'npx',
      'proxylab',
      'destroy',
      '--lab',
      labFile,
      '--profile',
      'lab',
      '--region',
      'eu-west-1',
    ]);
  });
});
