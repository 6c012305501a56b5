/**
 * The layering rules in .dependency-cruiser.cjs catch what they promise: each case writes a tiny
 * tree with one forbidden import and runs the real dependency-cruiser with the project's config,
 * expecting the rule's name in its output. The project itself is checked by `npm run lint`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scratchDir } from '../helpers/scratch';

const ROOT = path.resolve(__dirname, '..', '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

function cruise(files: Record<string, string>): { status: number | null; out: string } {
  const dir = scratchDir('proxylab-layers-');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true } }),
  );
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  const res = spawnSync(DEPCRUISE, ['lib', '--config', CONFIG, '--output-type', 'err'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

// One tree holds every case (one dependency-cruiser run, ~3 s); each case lives in its own files, and
// the output must name the rule *and* the importing file.
const CASES: ReadonlyArray<readonly [rule: string, from: string, files: Record<string, string>]> = [
  [
    'suite-is-pure',
    'lib/suite/a.ts',
    { 'lib/suite/a.ts': "import '../cloud/b';\n", 'lib/cloud/b.ts': 'export {};\n' },
  ],
  [
    'suite-no-io',
    'lib/suite/io.ts',
    { 'lib/suite/io.ts': "import * as fs from 'node:fs';\nexport const f = fs;\n" },
  ],
  [
    'engine-imports-suite-and-core',
    'lib/engine/a.ts',
    { 'lib/engine/a.ts': "import '../local/b';\n", 'lib/local/b.ts': 'export {};\n' },
  ],
  [
    'adapters-independent',
    'lib/cloud/c.ts',
    { 'lib/cloud/c.ts': "import '../local/d';\n", 'lib/local/d.ts': 'export {};\n' },
  ],
  [
    'constructs-no-runtime',
    'lib/constructs/a.ts',
    { 'lib/constructs/a.ts': "import '../cloud/e';\n", 'lib/cloud/e.ts': 'export {};\n' },
  ],
  [
    'report-reads-results',
    'lib/report/a.ts',
    { 'lib/report/a.ts': "import '../engine/b';\n", 'lib/engine/b.ts': 'export {};\n' },
  ],
  [
    'core-imports-nothing',
    'lib/core/a.ts',
    { 'lib/core/a.ts': "import '../suite/b';\n", 'lib/suite/b.ts': 'export {};\n' },
  ],
  [
    'no-circular',
    'lib/suite/x.ts',
    {
      'lib/suite/x.ts': "import type { Y } from './y';\nexport type X = Y;\n",
      'lib/suite/y.ts': "import type { X } from './x';\nexport type Y = { x?: X };\n",
    },
  ],
];

describe('a forbidden import fails `npm run lint:layers` with the rule named', () => {
  const { status, out } = cruise(
    Object.assign({}, ...CASES.map(([, , files]) => files)) as Record<string, string>,
  );

  test('the run fails', () => expect(status).not.toBe(0));
  test.each(CASES)('%s (%s)', (rule, from) => {
    expect(out).toMatch(new RegExp(`error ${rule}: ${from.replace(/\./g, '\\.')} →`));
  });
});

test('an allowed import passes', () => {
  const { status, out } = cruise({
    'lib/engine/a.ts': "import '../suite/b';\nimport '../core/c';\n",
    'lib/suite/b.ts': "import '../core/c';\n",
    'lib/core/c.ts': 'export {};\n',
  });
  expect(out).toContain('no dependency violations');
  expect(status).toBe(0);
});
