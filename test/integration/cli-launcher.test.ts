/**
 * The launcher users and tests run (scripts/proxylab.js, the package's `bin`): the first start builds
 * the CLI's bundle with esbuild into the cache, later starts reuse it, starts side by side all work,
 * `--help` loads no AWS client, pg or echarts, and the bundled code still finds the checkout
 * (lib/core/repo-root.ts). Each test has its own cache directory ($PROXYLAB_CLI_CACHE_DIR), so the
 * repository's own cache — which the other CLI tests use — is never touched. It is inside the
 * checkout, as the real one: the bundle loads packages from the node_modules above it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, REPO_ROOT } from '../helpers/cli';
import { scratchDir } from '../helpers/scratch';
import { spawnToEnd } from '../helpers/spawn';

interface Started {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function start(args: readonly string[], env: NodeJS.ProcessEnv, cwd = REPO_ROOT): Promise<Started> {
  return spawnToEnd(process.execPath, [CLI, ...args], { cwd, env });
}

const caches: string[] = [];

/** An empty cache directory of this test's own, under node_modules/.cache/proxylab (removed afterwards). */
function freshCache(): string {
  const parent = path.join(REPO_ROOT, 'node_modules', '.cache', 'proxylab');
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, 'test-launcher-'));
  caches.push(dir);
  return path.join(dir, 'bundles');
}

afterAll(() => {
  for (const dir of caches.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A clean environment with its own bundle cache (no AWS settings of the developer's). */
function envWithCache(cache: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: os.tmpdir(), PROXYLAB_CLI_CACHE_DIR: cache, ...extra };
}

/** The cache's entries: content-keyed directories, each with the bundle. */
function entries(cache: string): string[] {
  return fs.existsSync(cache) ? fs.readdirSync(cache).sort() : [];
}

test('first start builds the bundle, silently; the next start reuses it', async () => {
  // GIVEN an empty cache (a fresh clone after npm ci)
  const cache = freshCache();
  // WHEN the CLI starts twice
  const first = await start(['--help'], envWithCache(cache));
  const built = entries(cache);
  const entry = built.find((e) => /^cli-[0-9a-f]{32}$/.test(e));
  const bundle = path.join(cache, entry ?? 'none', 'out', 'cli.js');
  const mtime = fs.statSync(bundle).mtimeMs;
  const second = await start(['--help'], envWithCache(cache));
  // THEN both print the help and nothing else; one entry was built and then reused as it was
  expect(first).toEqual({
    code: 0,
    stdout: expect.stringMatching(/^Usage: proxylab /) as unknown,
    stderr: '',
  });
  expect(second).toEqual(first);
  expect(entry).toBeDefined();
  expect(built).toHaveLength(2);
  expect(built).toEqual(
    expect.arrayContaining([expect.stringMatching(/^cli-[0-9a-f]{16}\.inputs\.json$/), entry]),
  );
  expect(entries(cache)).toEqual(built);
  expect(fs.statSync(bundle).mtimeMs).toBe(mtime);
});

test('CLIs started side by side on an empty cache all run, and one entry is filed', async () => {
  // GIVEN an empty cache WHEN four CLIs start at once (as test.concurrent cases do)
  const cache = freshCache();
  const runs = await Promise.all(
    [1, 2, 3, 4].map(() => start(['validate', 'labs/default.json'], envWithCache(cache))),
  );
  // THEN each validated the lab, as the tsx-run sources do
  const reference = await start(
    ['validate', 'labs/default.json'],
    envWithCache(cache, { PROXYLAB_NO_BUNDLE: '1' }),
  );
  expect(reference.code).toBe(0);
  for (const r of runs) expect(r).toEqual(reference);
  // … and the cache holds one bundle and no half-built directory
  expect(entries(cache).filter((e) => /^cli-[0-9a-f]{32}$/.test(e))).toHaveLength(1);
  expect(entries(cache).filter((e) => e.startsWith('build-') || e.includes('unsettled'))).toEqual([]);
});

test('--help runs from the bundle and loads no AWS SDK client, pg or echarts', async () => {
  // GIVEN a hook that lists every module the process loaded, at exit
  const dir = scratchDir('proxylab-cli-launcher-');
  const hook = path.join(dir, 'modules.js');
  const list = path.join(dir, 'modules.json');
  fs.writeFileSync(
    hook,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));\n`,
  );
  // WHEN `proxylab --help` runs with it
  const res = await start(['--help'], envWithCache(freshCache(), { NODE_OPTIONS: `--require ${hook}` }));
  // THEN the CLI came from the cache, not from tsx, and none of the heavy packages was loaded
  expect(res.code).toBe(0);
  const loaded = JSON.parse(fs.readFileSync(list, 'utf8')) as string[];
  expect(loaded).toContainEqual(expect.stringMatching(/bundles\/cli-[0-9a-f]{32}\/out\/cli\.js$/));
  const heavy = loaded.filter((m) => /node_modules\/(@aws-sdk\/client-|pg\/|echarts\/|tsx\/)/.test(m));
  expect(heavy).toEqual([]);
});

test('bundled, the CLI still finds the checkout from anywhere (cdk.out under the repository root)', async () => {
  // GIVEN a working directory outside the checkout
  const elsewhere = scratchDir('proxylab-cli-launcher-cwd-');
  // WHEN a deploy dry run names where cdk writes the stack outputs
  const res = await start(
    ['deploy', '--lab', path.join(REPO_ROOT, 'labs', 'default.json'), '--dry-run', '--region', 'us-east-1'],
    envWithCache(freshCache()),
    elsewhere,
  );
  // THEN that path is in the checkout (lib/operator/operator.ts REPO_ROOT), not in the cache or the cwd
  expect(res.code).toBe(0);
  expect(res.stdout).toContain(`--outputs-file ${path.join(REPO_ROOT, 'cdk.out', 'outputs-default.json')}`);
});

test('PROXYLAB_NO_BUNDLE=1 runs the TypeScript sources through tsx and builds nothing', async () => {
  // GIVEN an empty cache WHEN the CLI starts with the developer switch
  const cache = freshCache();
  const res = await start(['--help'], envWithCache(cache, { PROXYLAB_NO_BUNDLE: '1' }));
  // THEN the same help, and no bundle
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(/^Usage: proxylab /);
  expect(entries(cache)).toEqual([]);
});
