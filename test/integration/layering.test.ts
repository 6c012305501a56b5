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
  const roots = ['lib', 'scripts', 'lambda'].filter((d) => fs.existsSync(path.join(dir, d)));
  const res = spawnSync(DEPCRUISE, [...roots, '--config', CONFIG, '--output-type', 'err'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

// One tree holds every case (one dependency-cruiser run, ~3 s); each case lives in its own files, and
// the output must name the rule *and* the importing file.
const CASES: ReadonlyArray<readonly [rule: string, from: string, files: Record<string, string>]> = [
  [
    'products-at-the-bottom',
    'lib/products/a.ts',
    { 'lib/products/a.ts': "import '../suite/pb';\n", 'lib/suite/pb.ts': 'export {};\n' },
  ],
  [
    'products-no-io',
    'lib/products/io.ts',
    { 'lib/products/io.ts': "import * as os from 'node:os';\nexport const o = os;\n" },
  ],
  [
    'exec-runs-processes',
    'lib/exec/a.ts',
    { 'lib/exec/a.ts': "import '../local/eb';\n", 'lib/local/eb.ts': 'export {};\n' },
  ],
  [
    'pooler-host-alone',
    'lib/pooler-host/a.ts',
    { 'lib/pooler-host/a.ts': "import '../runner/hb';\n", 'lib/runner/hb.ts': 'export {};\n' },
  ],
  [
    'collector-below-adapters',
    'lib/collector/a.ts',
    { 'lib/collector/a.ts': "import '../aws/cb';\n", 'lib/aws/cb.ts': 'export {};\n' },
  ],
  [
    'config-below-adapters',
    'lib/config/a.ts',
    { 'lib/config/a.ts': "import '../engine/gb';\n", 'lib/engine/gb.ts': 'export {};\n' },
  ],
  [
    'cost-reads-config',
    'lib/cost/a.ts',
    { 'lib/cost/a.ts': "import '../operator/ob';\n", 'lib/operator/ob.ts': 'export {};\n' },
  ],
  [
    'cli-presentation',
    'lib/cli/a.ts',
    { 'lib/cli/a.ts': "import '../aws/lb';\n", 'lib/aws/lb.ts': 'export {};\n' },
  ],
  [
    'lib-not-entry-points',
    'lib/report/e.ts',
    { 'lib/report/e.ts': "import '../../scripts/eb';\n", 'scripts/eb.ts': 'export {};\n' },
  ],
  [
    'lambda-thin',
    'lambda/h.ts',
    { 'lambda/h.ts': "import '../lib/aws/tb';\n", 'lib/aws/tb.ts': 'export {};\n' },
  ],
  // each edge of lambda → collector is allowed; the chain on to lib/aws is not shipped in a Lambda
  [
    'lambda-bundles',
    'lambda/h2.ts',
    {
      'lambda/h2.ts': "import '../lib/collector/lc';\n",
      'lib/collector/lc.ts': "import '../aws/ly';\n",
      'lib/aws/ly.ts': 'export {};\n',
    },
  ],
  [
    'suite-is-pure',
    'lib/suite/a.ts',
    { 'lib/suite/a.ts': "import '../aws/b';\n", 'lib/aws/b.ts': 'export {};\n' },
  ],
  [
    'suite-no-io',
    'lib/suite/io.ts',
    { 'lib/suite/io.ts': "import * as fs from 'node:fs';\nexport const f = fs;\n" },
  ],
  [
    'engine-imports-model',
    'lib/engine/a.ts',
    { 'lib/engine/a.ts': "import '../local/b';\n", 'lib/local/b.ts': 'export {};\n' },
  ],
  [
    'local-adapters',
    'lib/local/c.ts',
    { 'lib/local/c.ts': "import '../runner/d';\n", 'lib/runner/d.ts': 'export {};\n' },
  ],
  [
    'runner-not-operator',
    'lib/runner/r.ts',
    { 'lib/runner/r.ts': "import '../operator/o';\n", 'lib/operator/o.ts': 'export {};\n' },
  ],
  [
    'operator-not-hosts',
    'lib/operator/p.ts',
    { 'lib/operator/p.ts': "import '../pooler-host/h';\n", 'lib/pooler-host/h.ts': 'export {};\n' },
  ],
  [
    'aws-shared-by-cloud-sides',
    'lib/aws/a.ts',
    { 'lib/aws/a.ts': "import '../runner/s';\n", 'lib/runner/s.ts': 'export {};\n' },
  ],
  [
    'results-below-readers',
    'lib/results/a.ts',
    { 'lib/results/a.ts': "import '../engine/r';\n", 'lib/engine/r.ts': 'export {};\n' },
  ],
  [
    'poolers-are-drivers',
    'lib/poolers/x/a.ts',
    { 'lib/poolers/x/a.ts': "import '../../local/p';\n", 'lib/local/p.ts': 'export {};\n' },
  ],
  [
    'constructs-no-runtime',
    'lib/constructs/a.ts',
    { 'lib/constructs/a.ts': "import '../runner/e';\n", 'lib/runner/e.ts': 'export {};\n' },
  ],
  // scripts/ may import anything, but what a bundle carries is checked through every chain.
  [
    'runner-bundle',
    'scripts/runner.ts',
    { 'scripts/runner.ts': "import '../lib/report/r';\n", 'lib/report/r.ts': 'export {};\n' },
  ],
  // Each edge is allowed (pooler host → aws → collector), yet the pooler bundle does not ship the collector.
  [
    'pooler-bundle',
    'scripts/pooler.ts',
    {
      'scripts/pooler.ts': "import '../lib/pooler-host/h2';\n",
      'lib/pooler-host/h2.ts': "import '../aws/c';\n",
      'lib/aws/c.ts': "import '../collector/z';\n",
      'lib/collector/z.ts': 'export {};\n',
    },
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

test('every rule of .dependency-cruiser.cjs has a case above that makes it fail', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const config = require(CONFIG) as { forbidden: ReadonlyArray<{ name: string }> };
  const covered = new Set(CASES.map(([rule]) => rule));
  expect(config.forbidden.map((r) => r.name).filter((n) => !covered.has(n))).toEqual([]);
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
