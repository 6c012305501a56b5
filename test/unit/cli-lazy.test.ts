/**
 * The CLI's command modules load their work lazily (scripts/cli.ts) through the loaders of
 * scripts/commands/lazy.ts: `const xModule = (): typeof X => require('P') as typeof X`, with
 * `import type * as X from 'P'`. The cast is what TypeScript checks the action against, so it must
 * name the very module the `require` loads: a copy-paste slip would type one module's exports and run
 * another's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const COMMANDS = path.join(__dirname, '..', '..', 'scripts', 'commands');
const ACCESSOR = /const (\w+) = \(\): typeof (\w+) =>\s*require\('([^']+)'\) as typeof (\w+);/g;

function accessors(
  file: string,
): Array<{ name: string; type: string; cast: string; module: string; typeModule: string | null }> {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(ACCESSOR)].map((m) => {
    const [, name, type, module, cast] = m as unknown as [string, string, string, string, string];
    const typeImport = new RegExp(`import type \\* as ${type} from '([^']+)';`).exec(text);
    return { name, type, cast, module, typeModule: typeImport ? (typeImport[1] as string) : null };
  });
}

// …and lib/aws/clients.ts, which loads each AWS service's package when its first client is made.
const files = [
  ...fs
    .readdirSync(COMMANDS)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => path.join(COMMANDS, f)),
  path.join(__dirname, '..', '..', 'lib', 'aws', 'clients.ts'),
];

test('the command modules do load something lazily (the pattern below still matches them)', () => {
  // GIVEN the command modules WHEN their lazy accessors are listed THEN the shared loaders have them
  const names = files.filter((f) => accessors(f).length > 0).map((f) => path.basename(f, '.ts'));
  expect(names).toEqual(expect.arrayContaining(['lazy', 'clients']));
  // AND the commands that reach AWS, the local stack or the report take their work from those loaders
  for (const command of ['status', 'run', 'deploy', 'local', 'fetch', 'report']) {
    const text = fs.readFileSync(path.join(COMMANDS, `${command}.ts`), 'utf8');
    expect({ command, lazy: /import \{[^}]+\} from '\.\/lazy';/.test(text) }).toEqual({
      command,
      lazy: true,
    });
  }
});

test.each(files.map((f) => [path.basename(f), f]))(
  '%s: every lazy require is typed as the module it loads',
  (_, file) => {
    // GIVEN each `require(P) as typeof X` accessor of the file
    for (const a of accessors(file)) {
      // THEN its return type and cast are the same `import type * as X from 'P'` of that very module
      expect({ accessor: a.name, cast: a.cast, typeModule: a.typeModule }).toEqual({
        accessor: a.name,
        cast: a.type,
        typeModule: a.module,
      });
    }
    // AND no other require slipped in untyped (local's run hooks are checked by a type guard instead)
    const text = fs
      .readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      .replace(/afterRunHook\('[^']+', require\(/g, '');
    const requires = (text.match(/\brequire\('/g) ?? []).length;
    expect(requires).toBe(accessors(file).length);
  },
);
