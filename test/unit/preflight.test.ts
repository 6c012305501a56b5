/**
 * scripts/preflight.ts, the one list of external tools: which tests it names for each tool, and the
 * one message it stops with. (Hiding tools from PATH for real is shown in the README's Tests; the
 * builds of a current PgBouncer into the cache are test/integration/pgbouncer-cache.test.ts.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PGBOUNCER_RELEASES } from '../../lib/poolers/pgbouncer/releases';
import {
  BUILD_DEPS,
  buildDepPackages,
  DEBIAN_PGBOUNCER,
  missingBuildDeps,
  pinnedRelease,
  proxylabCacheRoot,
  ROOT_CACHE_ROOT,
} from '../../scripts/pgbouncer-cache';
import {
  debianArchive,
  debianArchives,
  privateAptOptions,
  privateSourcesList,
} from '../../scripts/pgbouncer-debian';
import {
  describeTests,
  jestSetupFiles,
  missingMessage,
  importsHelper,
  notRunLines,
  pgbouncerModernTool,
  PROJECTS,
  REPO_ROOT,
  testsUsing,
  TOOLS,
  type Tool,
} from '../../scripts/preflight';

function tool(name: string): Tool {
  const found = TOOLS.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

test('unit tests need no external tool (a test that does belongs in cdk or integration), only data', () => {
  // WHEN
  const users = testsUsing(['unit']);
  // THEN
  expect(
    [...users]
      .filter(([t, tests]) => tests.length > 0 && t.dataOnly !== true)
      .map(([t, tests]) => `${t.name}: ${tests.join(', ')}`),
  ).toEqual([]);
});

test.each([
  ['shellcheck', 'test/cdk/constructs.test.ts'],
  ['cfn-lint', 'test/cdk/labs.test.ts'],
  ['moto_server', 'test/integration/collect-moto.test.ts'],
  ['botocore service models', 'test/unit/aws-model.test.ts'],
  ['botocore service models', 'test/unit/cloud-runner.test.ts'],
  ['Chromium', 'test/integration/local-smoke.test.ts'],
  ['PgBouncer', 'test/integration/local-smoke.test.ts'],
  ['PgBouncer ≥ 1.21', 'test/integration/pooler-bootstrap.test.ts'],
  ['PgDoorman', 'test/integration/local-pgdoorman.test.ts'],
  ['PgBouncer 1.18 (Debian 12)', 'test/integration/layering.test.ts'],
])('%s is needed by %s', (name, file) => {
  expect(testsUsing(['unit', 'cdk', 'integration']).get(tool(name))).toContain(file);
});

test('the message names each missing tool, its tests and one exact install command each', () => {
  // WHEN
  const text = missingMessage(
    [
      { tool: tool('shellcheck'), tests: ['test/cdk/constructs.test.ts'] },
      { tool: tool('moto_server'), tests: ['test/integration/collect-moto.test.ts'] },
      { tool: tool('PgBouncer ≥ 1.21'), tests: [] },
    ],
    'apt-get',
    'report only',
  );
  // THEN
  expect(text).toContain('(report only)');
  expect(text).toContain('✗ shellcheck');
  expect(text).toContain('needed by test/cdk/constructs.test.ts');
  expect(text).toMatch(
    /install: (sudo )?apt-get update && (sudo )?apt-get install -y --no-install-recommends shellcheck\n/,
  );
  expect(text).toContain("install: python3 -m pip install 'moto[server]'");
  expect(text).toContain('✗ PgBouncer ≥ 1.21');
  expect(text).toContain('PROXYLAB_PGBOUNCER_MODERN=');
  expect(text.match(/✗ /g)).toHaveLength(3);
});

/** Every .ts file under test/, relative to the repo. */
function allTestSources(dir = path.join(REPO_ROOT, 'test')): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? e.name === 'fixtures'
          ? []
          : allTestSources(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.relative(REPO_ROOT, path.join(dir, e.name))]
          : [],
    )
    .sort();
}

const HELPERS = 'test/helpers/pgbouncer-versions.ts';
const SETUP_FILES = new Set(PROJECTS.flatMap((p) => jestSetupFiles(p)));
const TEST_FILES = new Set(allTestSources().filter((f) => f.endsWith('.test.ts')));

describe.each([
  {
    tool: 'PgBouncer ≥ 1.21',
    helper: importsHelper('pgbouncerModern'),
    // Any other way to a current binary: the finder, its variable, the cache, the builds.
    direct:
      /\bfindPgbouncerModern\b|PGBOUNCER_MODERN_ENV|PROXYLAB_PGBOUNCER_MODERN|\bcachedPgbouncer\b|\bcheckCachedPgbouncer\b|\bbuildPgbouncer\b|\bbuildFromDebianSource\b/,
    // Only these start a current PgBouncer today; a new one joins this list on purpose.
    users: [
      'test/integration/local-disruptions.test.ts',
      'test/integration/local-server-stop.test.ts',
      'test/integration/local-smoke.test.ts',
      'test/integration/local-stack.test.ts',
      'test/integration/local-variants.test.ts',
      'test/integration/pgbouncer-stop.test.ts',
      'test/integration/pooler-bootstrap.test.ts',
      'test/integration/pooler-roll.test.ts',
      'test/integration/session-state.test.ts',
    ],
  },
  {
    tool: 'PgBouncer 1.18 (Debian 12)',
    helper: importsHelper('pgbouncer118'),
    direct: /\bfindPgbouncer118\b|PGBOUNCER_1_18_ENV|PROXYLAB_PGBOUNCER_1_18/,
    // jest's setup file for the integration project hands it to every integration test.
    users: [...TEST_FILES].filter((f) => f.startsWith('test/integration/')),
  },
])(
  '$tool: every test that can start it is named by the preflight',
  ({ tool: name, helper, direct, users }) => {
    const sources = allTestSources().map((file) => ({
      file,
      text: fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'),
    }));
    // This file spells the names; the cache build test builds a fake that only prints the version.
    const exempt = new Set([
      HELPERS,
      'test/unit/preflight.test.ts',
      'test/integration/pgbouncer-cache.test.ts',
    ]);

    test(`no test file or helper reaches it except through ${HELPERS}`, () => {
      expect(sources.filter((s) => !exempt.has(s.file) && direct.test(s.text)).map((s) => s.file)).toEqual(
        [],
      );
    });

    test('its helper is used only by test files and jest setup files (a helper in between would hide them)', () => {
      const through = sources.filter((s) => !exempt.has(s.file) && helper.test(s.text)).map((s) => s.file);
      expect(through.filter((f) => !TEST_FILES.has(f) && !SETUP_FILES.has(f))).toEqual([]);
    });

    test('the preflight names exactly the test files that use the helper, directly or through a setup file', () => {
      // GIVEN the tests that can start it: they call the helper, or a setup file of their project does
      const viaSetup = (file: string): boolean =>
        PROJECTS.some(
          (p) =>
            file.startsWith(`test/${p}/`) &&
            jestSetupFiles(p).some((f) => helper.test(fs.readFileSync(path.join(REPO_ROOT, f), 'utf8'))),
        );
      const starters = sources
        .filter((s) => TEST_FILES.has(s.file) && s.file !== 'test/unit/preflight.test.ts')
        .filter((s) => helper.test(s.text) || viaSetup(s.file))
        .map((s) => s.file);
      // WHEN
      const named = testsUsing([...PROJECTS]).get(tool(name));
      // THEN
      expect(named).toEqual(starters);
      expect(named).toEqual(users);
    });
  },
);

test('a project all of whose tests need a tool is named once, the others one by one', () => {
  // GIVEN every integration test and one cdk test
  const integration = [...TEST_FILES].filter((f) => f.startsWith('test/integration/'));
  // WHEN
  const text = describeTests([...integration, 'test/cdk/labs.test.ts'], [...PROJECTS]);
  // THEN
  expect(text).toBe(`every test in test/integration/ (${integration.length} files), test/cdk/labs.test.ts`);
  expect(describeTests(integration.slice(1), [...PROJECTS])).toBe(integration.slice(1).join(', '));
});

test("a current PgBouncer is built from Debian's source package, or the release the pooler host pins", () => {
  // WHEN
  const release = pinnedRelease();
  const entry = tool('PgBouncer ≥ 1.21');
  // THEN the Debian version is pinned once, with its .dsc checksum, and the upstream way is the very
  // entry of the one table the pooler host uses
  expect(DEBIAN_PGBOUNCER).toMatchObject({
    sourcePackage: 'pgbouncer',
    upstreamVersion: '1.24.1',
    dsc: `pgbouncer_${DEBIAN_PGBOUNCER.debianVersion}.dsc`,
  });
  expect(DEBIAN_PGBOUNCER.debianVersion.startsWith(`${DEBIAN_PGBOUNCER.upstreamVersion}-`)).toBe(true);
  expect(DEBIAN_PGBOUNCER.dscSha256).toMatch(/^[0-9a-f]{64}$/);
  expect(PGBOUNCER_RELEASES).toContain(release);
  expect(entry.install.kind).toBe('build');
  const how = entry.install.kind === 'build' ? entry.install.how : '';
  expect(how).toContain(`Debian's source package pgbouncer ${DEBIAN_PGBOUNCER.debianVersion}`);
  expect(how).toContain(path.join(proxylabCacheRoot(), 'pgbouncer-1.24.1', 'bin', 'pgbouncer'));
  expect(how).toContain('dpkg-dev');
  expect(how).toContain(`curl -fLO ${release.url}`);
  expect(how).toContain(`echo '${release.sha256}  pgbouncer-${release.version}.tar.gz' | sha256sum -c`);
});

test.each([
  [{ XDG_CACHE_HOME: '/var/cache/u' }, 1000, '/var/cache/u/proxylab'],
  [{ XDG_CACHE_HOME: '/var/cache/u' }, 0, '/var/cache/u/proxylab'],
  [{ XDG_CACHE_HOME: 'relative/ignored', HOME: '/home/u' }, 1000, null],
  [{ XDG_CACHE_HOME: '' }, 1000, null],
  [{}, 0, ROOT_CACHE_ROOT],
])('the build cache for %j as uid %d', (env, uid, expected) => {
  // THEN XDG_CACHE_HOME when absolute, else ~/.cache — for root /var/cache/proxylab, which the
  // unprivileged user that runs the servers can enter
  expect(proxylabCacheRoot(env, uid)).toBe(expected ?? path.join(os.homedir(), '.cache', 'proxylab'));
});

test('a current PgBouncer the preflight could not build: its tests, why, and every way to provide it', () => {
  // WHEN
  const text = missingMessage(
    [
      {
        tool: pgbouncerModernTool(),
        tests: ['test/integration/local-smoke.test.ts, test/integration/local-stack.test.ts'],
        notBuilt: 'http://deb.debian.org/debian: `apt-get … update --error-on=any` exited with 100',
      },
    ],
    'apt-get',
    'still missing after installing',
  );
  // THEN
  expect(text).toContain('✗ PgBouncer ≥ 1.21');
  expect(text).toContain(
    'needed by test/integration/local-smoke.test.ts, test/integration/local-stack.test.ts',
  );
  expect(text).toContain(
    'not built: http://deb.debian.org/debian: `apt-get … update --error-on=any` exited with 100',
  );
  expect(text).toContain('export PROXYLAB_PGBOUNCER_MODERN=/path/to/pgbouncer');
  expect(text).toContain('a distribution package of PgBouncer ≥ 1.21');
  expect(text).toContain('PROXYLAB_PGBOUNCER_SOURCE=upstream');
  expect(text).toContain('./configure --prefix=');
  expect(text).not.toContain('../shared');
});

test("the private apt configuration: one deb-src line on the machine's Debian archive, its own directories", () => {
  // GIVEN apt sources in both formats, the security archive among them
  const deb822 = [
    'Types: deb',
    '# http://snapshot.debian.org/archive/debian/20250520T000000Z',
    'URIs: http://deb.debian.org/debian',
    'Suites: bookworm bookworm-updates',
    '',
    'Types: deb',
    'URIs: http://deb.debian.org/debian-security',
  ].join('\n');
  const oneLine = 'deb [arch=amd64] http://mirror.example/debian/ bookworm main\n# deb http://old/debian x y';
  // WHEN / THEN
  expect(debianArchives(deb822)).toEqual(['http://deb.debian.org/debian']);
  expect(debianArchives(oneLine)).toEqual(['http://mirror.example/debian']);
  expect(debianArchives('deb https://download.docker.com/linux/debian bookworm stable')).toEqual([
    'https://download.docker.com/linux/debian',
  ]);
  expect(debianArchive({ PROXYLAB_DEBIAN_ARCHIVE: 'http://127.0.0.1:9/debian/' })).toBe(
    'http://127.0.0.1:9/debian',
  );
  expect(debianArchive({}, '/nonexistent')).toBe('http://deb.debian.org/debian');
  expect(privateSourcesList('http://deb.debian.org/debian')).toBe(
    'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main\n',
  );
  // every directory apt reads sources from or writes to is the private one
  const opts = privateAptOptions('/tmp/b/apt', false).filter((o) => o !== '-o');
  expect(opts.filter((o) => o.startsWith('Dir::'))).toEqual([
    'Dir::Etc::SourceList=/tmp/b/apt/sources.list',
    'Dir::Etc::SourceParts=/tmp/b/apt/sources.list.d',
    'Dir::State::Lists=/tmp/b/apt/lists',
    'Dir::Cache=/tmp/b/apt/cache',
  ]);
  expect(opts).toContain('Acquire::Retries=0');
  expect(opts).not.toContain('APT::Sandbox::User=root');
  expect(privateAptOptions('/tmp/b/apt', true)).toContain('APT::Sandbox::User=root');
});

test('PgDoorman is optional: its missing binary names the tests that will not run instead of stopping', () => {
  // GIVEN a PgDoorman entry that finds nothing
  const doorman = { ...tool('PgDoorman'), find: () => null };
  // WHEN
  const lines = notRunLines(['integration'], [doorman]);
  // THEN one line, each file that starts a real one, and why
  expect(lines).toEqual([
    'not run: test/integration/local-pgdoorman.test.ts, test/integration/session-state-pgdoorman.test.ts — ' +
      'no PgDoorman binary found; PgDoorman is on no package registry this machine reaches: give a binary ' +
      'with $PROXYLAB_PGDOORMAN or PATH to run them.',
  ]);
  // and none when one is found
  expect(
    notRunLines(['integration'], [{ ...doorman, find: () => '/usr/bin/pg_doorman (PgDoorman 3.10.7)' }]),
  ).toEqual([]);
});

test.each([
  ['apt-get', ['gcc', 'libevent-dev'], []],
  ['dnf', ['gcc', 'libevent-devel'], []],
  ['brew', ['libevent'], ['a C compiler (cc)']],
  [null, [], ['a C compiler (cc)', 'libevent headers (pkg-config libevent)']],
] as const)(
  'the build requirements that are missing, and the %s packages that provide them',
  (pm, packages, unpackaged) => {
    // GIVEN no C compiler and no libevent headers; everything else probes fine
    const probed: string[] = [];
    const probe = (argv: readonly string[]): boolean => {
      probed.push(argv.join(' '));
      return !(argv[0] === 'cc' || argv.includes('libevent'));
    };
    // WHEN
    const missing = missingBuildDeps(BUILD_DEPS, probe);
    const plan = buildDepPackages(missing, pm);
    // THEN
    expect(probed).toEqual(BUILD_DEPS.map((d) => d.probe.join(' ')));
    expect(missing.map((d) => d.name)).toEqual([
      'a C compiler (cc)',
      'libevent headers (pkg-config libevent)',
    ]);
    expect(plan.packages).toEqual(packages);
    expect(plan.unpackaged.map((d) => d.name)).toEqual(unpackaged);
  },
);
