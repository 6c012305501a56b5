/**
 * The product-name rule (eslint-product-branches.cjs) catches what it promises: a branch on a
 * product's or kind's name fails, a look-alike does not; and eslint.config.mjs applies it to lib/,
 * scripts/, lambda/ and bin/ but not to the product entries (lib/products/). Runs the real ESLint
 * CLI: the rule on text (with the TypeScript parser, no type information: the selectors need none),
 * the scope through `--print-config` on the project's own files.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
const ESLINT = path.join(ROOT, 'node_modules', '.bin', 'eslint');

const BRANCHES = [
  "export const a = (d: { pooler: string }) => d.pooler === 'pgbouncer';",
  "export const b = (t: { kind: string }) => 'direct' !== t.kind;",
  "export const c = (p: { id: string }) => p.id === 'rds-proxy';",
  "export const d = (x: { pooler: string }) => x.pooler !== 'none';",
  "export function e(s: { product: string }): number { switch (s.product) { case 'pgdoorman': return 1; default: return 0; } }",
];
const LOOK_ALIKES = [
  "export const f = (i: { kind: string }) => i.kind === 'none';",
  "export const g = (c: { id: string }) => c.id === 'pgbouncer-churn-vs-direct-churn';",
];

/** Every snippet in its own file, linted by one ESLint run: file name → the rule's messages. */
function lintAll(): Map<string, string[]> {
  const dir = scratchDir('proxylab-product-rule-');
  fs.writeFileSync(
    path.join(dir, 'eslint.config.cjs'),
    `module.exports = [{
  files: ['**/*.ts'],
  languageOptions: { parser: require(${JSON.stringify(require.resolve('typescript-eslint', { paths: [ROOT] }))}).parser },
  rules: { 'no-restricted-syntax': ['error', ...require(${JSON.stringify(path.join(ROOT, 'eslint-product-branches.cjs'))}).PRODUCT_BRANCHES] },
}];\n`,
  );
  [...BRANCHES, ...LOOK_ALIKES].forEach((code, i) =>
    fs.writeFileSync(path.join(dir, `s${i}.ts`), `${code}\n`),
  );
  const res = spawnSync(ESLINT, ['-c', 'eslint.config.cjs', '-f', 'json', '.'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const out = JSON.parse(res.stdout) as Array<{
    filePath: string;
    messages: Array<{ ruleId: string | null; message: string }>;
  }>;
  return new Map(
    out.map((r) => [
      path.basename(r.filePath),
      r.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`),
    ]),
  );
}

const LINTED = lintAll();

test.each(BRANCHES.map((code, i) => [code, `s${i}.ts`]))('a product-name branch fails: %s', (_, file) => {
  expect(LINTED.get(file)).toEqual([
    expect.stringMatching(/^no-restricted-syntax: product-name branch: ask the product's entry/),
  ]);
});

test.each(LOOK_ALIKES.map((code, i) => [code, `s${BRANCHES.length + i}.ts`]))(
  'a look-alike passes: %s',
  (_, file) => {
    expect(LINTED.get(file)).toEqual([]);
  },
);

describe('the project applies it everywhere but in the product entries', () => {
  function restrictedSyntax(file: string): string {
    const res = spawnSync(ESLINT, ['--print-config', file], { cwd: ROOT, encoding: 'utf8' });
    const cfg = JSON.parse(res.stdout) as { rules?: Record<string, unknown> };
    return JSON.stringify(cfg.rules?.['no-restricted-syntax'] ?? null);
  }
  test('lib/report/shape.ts (and every file of lib/, scripts/, lambda/, bin/): on', () => {
    expect(restrictedSyntax('lib/report/shape.ts')).toContain('product-name branch');
  });
  test('lib/products/index.ts: off', () => {
    expect(restrictedSyntax('lib/products/index.ts')).not.toContain('product-name branch');
  });
});
