/**
 * CONTRIBUTING.md's recipes (add a pooler product, a target kind, an experiment, a disruption) list
 * the source files each touches. This checks each list against the code as it is: for the recipe's
 * example (PgDoorman, `pgdoorman-session`, E6, each disruption action), every file of lib/, scripts/,
 * bin/ and lambda/ whose code — comments aside — names the example is in the list (or among the
 * recipe's optional files), every file the list says is new exists, and the list stays within its
 * goal (ten files for a product, four for a disruption).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const CONTRIBUTING = fs.readFileSync(path.join(ROOT, 'CONTRIBUTING.md'), 'utf8');

interface Recipe {
  readonly params: Record<string, string>;
  readonly files: Array<{ readonly how: string; readonly file: string }>;
  readonly optional: string[];
}

function block(marker: string): { params: Record<string, string>; lines: string[] } | null {
  const m = new RegExp(`<!-- ${marker}( [^>]*)? -->\\n\`\`\`\\n([\\s\\S]*?)\`\`\``).exec(CONTRIBUTING);
  if (!m) return null;
  const params = Object.fromEntries(
    (m[1] ?? '')
      .trim()
      .split(/\s+/)
      .filter((p) => p.includes('='))
      .map((p) => p.split('=') as [string, string]),
  );
  return { params, lines: (m[2] ?? '').split('\n').filter((l) => l.trim() !== '') };
}

function recipe(name: string): Recipe {
  const main = block(`recipe:${name}`);
  if (main === null) throw new Error(`CONTRIBUTING.md has no <!-- recipe:${name} --> block`);
  const optional = block(`recipe-optional:${name}`);
  const parse = (l: string) => {
    const [how, file] = l.trim().split(/\s+/);
    return { how: how ?? '', file: file ?? '' };
  };
  return {
    params: main.params,
    files: main.lines.map(parse),
    optional: (optional?.lines ?? []).map((l) => parse(l).file),
  };
}

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  for (const d of ['lib', 'scripts', 'bin', 'lambda']) walk(d);
  return out;
}

/** The file's code without its comments (a name in a comment is documentation, not a dependency). */
function code(file: string): string {
  return fs
    .readFileSync(path.join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1');
}

const FILES = sourceFiles();
const naming = (pattern: RegExp): string[] => FILES.filter((f) => pattern.test(code(f))).sort();

function globRe(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+')}$`);
}
const within = (file: string, globs: readonly string[]): boolean => globs.some((g) => globRe(g).test(file));
const subst = (file: string, params: Record<string, string>): string =>
  file.replace(/<(\w+)>/g, (_, k: string) => params[k] ?? `<${k}>`);

describe('add a pooler product', () => {
  const r = recipe('pooler-product');
  const product = r.params.example ?? '';
  const listed = r.files.map((f) => subst(f.file, { product }));
  const optional = r.optional.map((f) => subst(f, { product }));

  test('at most ten files', () => expect(r.files.length).toBeLessThanOrEqual(10));
  test('every file it says is new exists for the example', () => {
    for (const f of r.files.filter((x) => x.how === 'new'))
      expect([f.file, fs.existsSync(path.join(ROOT, subst(f.file, { product })))]).toEqual([f.file, true]);
  });
  test(`every file whose code names ${product} is listed (or optional)`, () => {
    const outside = naming(new RegExp(product, 'i')).filter(
      (f) => !listed.includes(f) && !within(f, optional),
    );
    expect(outside).toEqual([]);
  });
});

describe('add a target kind', () => {
  const r = recipe('target-kind');
  const listed = r.files.map((f) => subst(f.file, r.params));
  test(`every file whose code names '${r.params.example}' is listed`, () => {
    expect(naming(new RegExp(`'${r.params.example}'`)).filter((f) => !listed.includes(f))).toEqual([]);
  });
});

describe('add an experiment', () => {
  const r = recipe('experiment');
  const listed = r.files.map((f) => subst(f.file, r.params));
  test(`the files whose code names ${r.params.example} are exactly the list`, () => {
    const id = r.params.example ?? '';
    expect(naming(new RegExp(`'${id}'|\\b${id}_|${r.params.file}`))).toEqual([...listed].sort());
  });
});

describe('add a disruption', () => {
  const r = recipe('disruption');
  const listed = r.files.map((f) => f.file);
  test('at most four files besides the product entries', () => expect(r.files.length).toBeLessThanOrEqual(4));
  test.each((r.params.example ?? '').split(','))(
    "every file whose code names '%s' is listed (or a product entry)",
    (action) => {
      const outside = naming(new RegExp(`'${action}'`)).filter(
        (f) => !listed.includes(f) && !within(f, r.optional),
      );
      expect(outside).toEqual([]);
    },
  );
});
