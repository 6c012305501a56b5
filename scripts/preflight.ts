/**
 * Before any test runs: find every external tool the tests use, install what is missing the way
 * `proxylab local` installs PostgreSQL and PgBouncer (lib/local/binaries.ts: apt/dnf/brew as root
 * or with passwordless sudo; pip for the Python tools; a current PgBouncer built from Debian's
 * source package into a per-user cache, scripts/pgbouncer-debian.ts), or stop with ONE message
 * that names each missing tool, the tests that need it and the exact command that installs it.
 * PgDoorman, which no registry here provides, is optional: without a binary its tests do not run
 * and the preflight (and `npm test`, after jest) names them.
 *
 *   npx tsx scripts/preflight.ts [--install | --no-install] [--project unit|cdk|integration]…
 *
 * Default: install when we can (root or passwordless sudo for OS packages; pip always), also with
 * CI=true. `--no-install` (or PROXYLAB_TEST_INSTALL=0) only reports; `--install` (or
 * PROXYLAB_TEST_INSTALL=1) installs and fails when it cannot. `--project` checks only the tools
 * that tests of those jest projects use (what `npm run test:cdk` etc. pass).
 *
 * This is the only list of test tools: `npm test`, `npm run test:*` and `.ci/run` all run it. A
 * test that needs a new tool adds an entry here; its `usedBy` pattern finds the tests to name. A
 * pattern is matched against each test file and the jest setup files of its project
 * (jest.config.js), so a tool a setup file uses is needed by every test of that project. A tool a
 * test reaches through a helper is matched by the helper's name: the two PgBouncers only through
 * pgbouncerModern() / pgbouncer118() (test/helpers/pgbouncer-versions.ts), which
 * test/unit/preflight.test.ts holds to.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { shellQuote } from '../lib/core/shell';
import { pgdoormanDriver } from '../lib/poolers/pgdoorman/driver';
import {
  detectPackageManager,
  findPoolerBinary,
  findPgbouncer,
  findPostgres,
  MIN_POSTGRES_MAJOR,
  packageInstallCommand,
  postgresPackages,
  privilegePrefix,
  runInstall,
  type PackageManager,
} from '../lib/local/binaries';
import type { Install, Tool } from './preflight-tool';
import {
  findPgbouncer118,
  importsHelper,
  pgbouncerModernTool,
  PGBOUNCER_1_18_ENV,
} from './preflight-pgbouncer';

export type { BuildContext, Install, Tool } from './preflight-tool';
export {
  findPgbouncer118,
  findPgbouncerModern,
  importsHelper,
  pgbouncerModernTool,
  PGBOUNCER_1_18_ENV,
  PGBOUNCER_MODERN_ENV,
  type ModernBuild,
} from './preflight-pgbouncer';

export const REPO_ROOT = path.resolve(__dirname, '..');
const TEST_ROOT = path.join(REPO_ROOT, 'test');
export const PROJECTS = ['unit', 'cdk', 'integration'] as const;
export type Project = (typeof PROJECTS)[number];

/** Which Chromium the report test drives (else `chromium` / `chromium-browser` on PATH). */
export const CHROMIUM_ENV = 'PROXYLAB_CHROMIUM';

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first `names` found on PATH (what spawn('name') would run), or null. */
export function onPath(...names: string[]): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of names) if (isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

/** The Chromium the report test drives: $PROXYLAB_CHROMIUM, else chromium on PATH. */
export function findChromium(): string | null {
  const fromEnv = process.env[CHROMIUM_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return isExecutable(fromEnv) ? fromEnv : null;
  const found = onPath('chromium', 'chromium-browser');
  if (found !== null) return found;
  const mac = '/Applications/Chromium.app/Contents/MacOS/Chromium';
  return process.platform === 'darwin' && isExecutable(mac) ? mac : null;
}

/** Where botocore's service models are, when not the botocore python3 imports. */
export const BOTOCORE_DATA_ENV = 'PROXYLAB_BOTOCORE_DATA';

/**
 * botocore's data directory (its JSON service models: `<service>/<api-version>/service-2.json.gz`):
 * $PROXYLAB_BOTOCORE_DATA if set (and only it), else the botocore python3 imports; null when absent.
 */
export function findBotocoreModels(): string | null {
  const isModels = (dir: string): boolean => dir !== '' && fs.existsSync(path.join(dir, 'pi'));
  const fromEnv = process.env[BOTOCORE_DATA_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return isModels(fromEnv) ? fromEnv : null;
  const res = spawnSync(
    'python3',
    ['-c', 'import botocore, os; print(os.path.join(os.path.dirname(botocore.__file__), "data"))'],
    { encoding: 'utf8' },
  );
  const dir = res.status === 0 ? res.stdout.trim() : '';
  return isModels(dir) ? dir : null;
}

function osPackages(apt: string, dnf: string | null, brew: string | null): Install {
  return {
    kind: 'os',
    packages: (pm) => {
      const pkg = pm === 'apt-get' ? apt : pm === 'brew' ? brew : dnf;
      return pkg === null ? null : [pkg];
    },
  };
}

/** The test helpers that start servers, or the CLI's `local` command. */
const USES_LOCAL_SERVERS = /\bstartLocalStack\(|\bspawnCli\(|\bfindBinaries\(|\[\s*'local',/;

/** Every external tool a test uses. */
export const TOOLS: readonly Tool[] = [
  {
    name: `PostgreSQL >= ${MIN_POSTGRES_MAJOR} (initdb, postgres, pgbench, psql)`,
    purpose: 'throwaway servers and pgbench for the local stack and CLI runs',
    usedBy: USES_LOCAL_SERVERS,
    find: () => {
      const pg = findPostgres(process.platform);
      return pg.found ? `${pg.found.bindir} (PostgreSQL ${pg.found.version})` : null;
    },
    install: { kind: 'os', packages: (pm) => postgresPackages(pm, { postgres: true, pgbouncer: false }) },
  },
  {
    name: 'PgBouncer',
    purpose: 'the pooler in the local stack',
    usedBy: USES_LOCAL_SERVERS,
    find: () => {
      const b = findPgbouncer(process.platform);
      return b ? `${b.file} (PgBouncer ${b.version})` : null;
    },
    install: { kind: 'os', packages: (pm) => postgresPackages(pm, { postgres: false, pgbouncer: true }) },
  },
  pgbouncerModernTool(),
  {
    name: 'PgBouncer 1.18 (Debian 12)',
    purpose: 'the default pooler of the integration tests: the behaviour before max_prepared_statements',
    usedBy: importsHelper('pgbouncer118'),
    find: findPgbouncer118,
    install: {
      kind: 'none',
      how: `Debian 12's \`apt-get install pgbouncer\` (1.18.0); elsewhere build 1.18 and set ${PGBOUNCER_1_18_ENV}=/path/to/pgbouncer`,
    },
    requiredInCi: true,
  },
  {
    name: 'PgDoorman',
    purpose:
      'the second self-hosted pooler: its driver against the real binary (local stack, --poolers, e6-local)',
    // A test gets it through test/helpers/pgdoorman.ts's describeWithPgdoorman().
    usedBy: /import\s*\{[^}]*\bdescribeWithPgdoorman\b[^}]*\}\s*from\s*['"][^'"]*helpers\/pgdoorman['"]/,
    find: () => {
      const b = findPoolerBinary(pgdoormanDriver);
      return b ? `${b.file} (PgDoorman ${b.version})` : null;
    },
    install: {
      kind: 'none',
      how: (pgdoormanDriver.localBinary.howToGet ?? []).join('\n        '),
    },
    optional: `PgDoorman is on no package registry this machine reaches: give a binary with $${pgdoormanDriver.localBinary.envVar} or PATH to run them`,
  },
  {
    name: 'shellcheck',
    purpose: "checks the runners' user data scripts",
    usedBy: /['"]shellcheck['"]/,
    find: () => onPath('shellcheck'),
    install: osPackages('shellcheck', 'ShellCheck', 'shellcheck'),
  },
  {
    name: 'Chromium',
    purpose: 'loads report.html headless (report browser test)',
    usedBy: /\bfindChromium\(/,
    find: findChromium,
    install: osPackages('chromium', 'chromium', null),
  },
  {
    name: 'cfn-lint',
    purpose: 'lints every synthesized CloudFormation template',
    usedBy: /['"]cfn-lint['"]|\bcfnLint(?:InBackground)?\(/,
    find: () => onPath('cfn-lint'),
    install: { kind: 'pip', requirement: 'cfn-lint' },
  },
  {
    name: 'botocore service models',
    purpose:
      "AWS's published API models: every mocked AWS call's input is checked against them (test/helpers/aws-calls/model.ts)",
    // The unit project's setup file checks every aws-sdk-client-mock call (tests make their mocks with
    // mockAws from aws-calls/recorder, which also model-checks recorded SDK clients); others import the checker.
    usedBy: /aws-calls\/(model|recorder)|['"]aws-sdk-client-mock['"]/,
    find: findBotocoreModels,
    install: { kind: 'pip', requirement: 'botocore' },
    dataOnly: true,
  },
  {
    name: 'moto_server',
    purpose: 'stands in for S3, CloudWatch, Scheduler (never real AWS)',
    usedBy: /helpers\/moto['"]/,
    find: () => onPath('moto_server'),
    install: { kind: 'pip', requirement: 'moto[server]' },
  },
];

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out.sort();
}

interface JestProjectConfig {
  readonly displayName?: unknown;
  readonly setupFiles?: unknown;
  readonly setupFilesAfterEnv?: unknown;
}

/**
 * The files jest runs before every test file of `project` (setupFiles, setupFilesAfterEnv in
 * jest.config.js), relative to the repo: what they use, every test of the project uses.
 */
export function jestSetupFiles(project: Project): string[] {
  const config = createRequire(__filename)(path.join(REPO_ROOT, 'jest.config.js')) as {
    projects?: readonly JestProjectConfig[];
  };
  const entry = (config.projects ?? []).find((p) => p.displayName === project);
  if (entry === undefined) throw new Error(`jest.config.js has no project with displayName '${project}'`);
  const list = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  return [...list(entry.setupFiles), ...list(entry.setupFilesAfterEnv)].map((f) =>
    path.relative(REPO_ROOT, f.replace('<rootDir>', REPO_ROOT)),
  );
}

/**
 * Test files (relative to the repo) of these projects that need each tool: its `usedBy` matches
 * the test file, or a setup file jest runs before it.
 */
export function testsUsing(
  projects: readonly Project[],
  tools: readonly Tool[] = TOOLS,
): Map<Tool, string[]> {
  const read = (rel: string): string => fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8');
  const sources = projects.flatMap((p) => {
    const setup = jestSetupFiles(p).map(read);
    return testFiles(path.join(TEST_ROOT, p)).map((f) => {
      const file = path.relative(REPO_ROOT, f);
      return { file, texts: [read(file), ...setup] };
    });
  });
  // The test of this list spells every tool's name without using any.
  const users = sources.filter((s) => s.file !== path.join('test', 'unit', 'preflight.test.ts'));
  return new Map(
    tools.map((t) => [t, users.filter((s) => s.texts.some((x) => t.usedBy.test(x))).map((s) => s.file)]),
  );
}

export interface Missing {
  readonly tool: Tool;
  readonly tests: readonly string[];
  /** Why the preflight did not build it (a 'build' tool whose build was tried). */
  readonly notBuilt?: string;
}

/**
 * `tests` for the message: a project all of whose test files are in it is named once ("every test
 * in test/integration/ (24 files)"), the rest one by one.
 */
export function describeTests(tests: readonly string[], projects: readonly Project[]): string {
  const parts: string[] = [];
  let rest = [...tests];
  for (const p of projects) {
    const all = testFiles(path.join(TEST_ROOT, p)).map((f) => path.relative(REPO_ROOT, f));
    if (all.length > 1 && all.every((f) => rest.includes(f))) {
      parts.push(`every test in test/${p}/ (${all.length} files)`);
      rest = rest.filter((f) => !all.includes(f));
    }
  }
  return [...parts, ...rest].join(', ');
}

const pipCommand = (reqs: readonly string[]): string[] => ['python3', '-m', 'pip', 'install', ...reqs];
const show = (argv: readonly string[]): string => argv.map(shellQuote).join(' ');

/** OS packages and pip requirements for the missing tools; the tools nothing installs. */
function plan(
  missing: readonly Missing[],
  pm: PackageManager | null,
): { os: string[]; pip: string[]; manual: Missing[] } {
  const os: string[] = [];
  const pip: string[] = [];
  const manual: Missing[] = [];
  for (const m of missing) {
    const inst = m.tool.install;
    const pkgs = inst.kind === 'os' && pm !== null ? inst.packages(pm) : null;
    if (inst.kind === 'pip') pip.push(inst.requirement);
    else if (pkgs !== null) os.push(...pkgs.filter((p) => !os.includes(p)));
    else manual.push(m);
  }
  return { os, pip, manual };
}

/** One line per missing tool with the tests that need it and its install command, then all at once. */
export function missingMessage(missing: readonly Missing[], pm: PackageManager | null, why: string): string {
  const sudo =
    pm === 'brew' || (typeof process.getuid === 'function' && process.getuid() === 0) ? '' : 'sudo ';
  const osCommand = (p: PackageManager, pkgs: readonly string[]): string =>
    (p === 'apt-get' ? `${sudo}apt-get update && ` : '') + sudo + show(packageInstallCommand(p, pkgs));
  const lines = [`The tests need tools that are missing (${why}):`];
  for (const m of missing) {
    const inst = m.tool.install;
    const pkgs = inst.kind === 'os' && pm !== null ? inst.packages(pm) : null;
    const how =
      inst.kind === 'pip'
        ? show(pipCommand([inst.requirement]))
        : inst.kind === 'none' || inst.kind === 'build'
          ? inst.how
          : pkgs !== null
            ? osCommand(pm ?? 'apt-get', pkgs)
            : `install ${m.tool.name} with your package manager`;
    const tests =
      m.tests.length > 0 ? describeTests(m.tests, PROJECTS) : 'no test yet (checked because CI=true)';
    lines.push(`  ✗ ${m.tool.name}: ${m.tool.purpose}`, `      needed by ${tests}`);
    if (m.notBuilt !== undefined) lines.push(`      not built: ${m.notBuilt.replace(/\n/g, '\n        ')}`);
    lines.push(`      install: ${how}`);
    if (m.tool.name === 'Chromium')
      lines.push(`      or point ${CHROMIUM_ENV} at a Chromium or Chrome binary`);
  }
  const all = plan(missing, pm);
  const cmds = [
    all.os.length > 0 && pm !== null ? osCommand(pm, all.os) : null,
    all.pip.length > 0 ? show(pipCommand(all.pip)) : null,
  ].filter((c): c is string => c !== null);
  if (cmds.length > 1 || (cmds.length === 1 && missing.length > 1)) {
    lines.push('All at once:', ...cmds.map((c) => `  ${c}`));
  }
  lines.push(
    'Then run the tests again. npm test installs these itself when it runs as root or with passwordless sudo;',
    'PROXYLAB_TEST_INSTALL=0 (or --no-install) only reports.',
  );
  return lines.join('\n');
}

export interface PreflightOptions {
  /** true: install (fail when we cannot); false: report only; 'auto': install when we can. */
  readonly install: boolean | 'auto';
  readonly projects: readonly Project[];
  readonly log: (line: string) => void;
  /** Default: TOOLS (tests pass a current-PgBouncer entry with a local archive or URL and cache). */
  readonly tools?: readonly Tool[];
}

/** null when every tool is there (after installing or building what we could), else the message to stop with. */
export async function preflight(opts: PreflightOptions): Promise<string | null> {
  const tools = opts.tools ?? TOOLS;
  const users = testsUsing(opts.projects, tools);
  const ci = process.env.CI === 'true';
  const needed = tools.filter(
    (t) => t.optional === undefined && ((users.get(t) ?? []).length > 0 || (ci && t.requiredInCi === true)),
  );
  for (const line of notRunLines(opts.projects, tools)) opts.log(line);
  const notBuilt = new Map<Tool, string>();
  const missingNow = (): Missing[] =>
    needed
      .filter((t) => t.find() === null)
      .map((tool) => {
        const why = notBuilt.get(tool);
        const tests = users.get(tool) ?? [];
        return why === undefined ? { tool, tests } : { tool, tests, notBuilt: why };
      });

  let missing = missingNow();
  if (missing.length === 0) return null;
  const pm = detectPackageManager();
  if (opts.install === false)
    return missingMessage(missing, pm, 'report only: --no-install / PROXYLAB_TEST_INSTALL=0');

  const todo = plan(missing, pm);
  const prefix = pm !== null ? privilegePrefix(pm) : null;
  const notes: string[] = [];
  if (todo.os.length > 0 && pm !== null && prefix !== null) {
    opts.log(`preflight: installing ${todo.os.join(', ')}`);
    if (!runInstall(prefix, packageInstallCommand(pm, todo.os), opts.log)) notes.push(`${pm} install failed`);
    // Debian starts a system PgBouncer on install; the tests start their own throwaway ones.
    if (pm === 'apt-get' && todo.os.includes('pgbouncer')) {
      const stop = [...prefix, 'systemctl', 'stop', 'pgbouncer'];
      spawnSync(stop[0] ?? 'systemctl', stop.slice(1), { stdio: 'ignore' });
    }
  } else if (todo.os.length > 0) {
    notes.push(pm === null ? 'no apt-get/dnf/yum/brew found' : 'not root and no passwordless sudo');
  }
  if (todo.pip.length > 0) {
    opts.log(`preflight: installing ${show(pipCommand(todo.pip))}`);
    const res = spawnSync('python3', pipCommand(todo.pip).slice(1), { stdio: 'inherit' });
    if (res.status !== 0) notes.push('pip install failed');
  }
  // Built after the OS packages: a build may need some of them (or install its own requirements).
  for (const m of missingNow()) {
    if (m.tool.install.kind !== 'build') continue;
    const canInstall = pm !== null && prefix !== null;
    const why = await m.tool.install.build({
      log: opts.log,
      packageManager: pm,
      installPackages: canInstall
        ? (pkgs) => runInstall(prefix, packageInstallCommand(pm, pkgs), opts.log)
        : null,
    });
    if (why !== null) notBuilt.set(m.tool, why);
  }
  missing = missingNow();
  if (missing.length === 0) return null;
  if (missing.some((m) => m.notBuilt !== undefined)) notes.push('a build did not succeed, see "not built"');
  return missingMessage(missing, pm, notes.length > 0 ? notes.join('; ') : 'still missing after installing');
}

/**
 * One line per optional tool that is missing, naming each test file that will not run and why
 * (printed by the preflight before jest and by scripts/test.ts after it); [] when all are here.
 */
export function notRunLines(projects: readonly Project[], tools: readonly Tool[] = TOOLS): string[] {
  const optional = tools.filter((t) => t.optional !== undefined);
  if (optional.length === 0) return [];
  const users = testsUsing(projects, optional);
  return optional
    .filter((t) => (users.get(t) ?? []).length > 0 && t.find() === null)
    .map(
      (t) => `not run: ${(users.get(t) ?? []).join(', ')} — no ${t.name} binary found; ${t.optional ?? ''}.`,
    );
}

/** What the tests will use of the tools whose version decides expectations (printed after the check). */
export function usedToolLines(projects: readonly Project[], tools: readonly Tool[] = TOOLS): string[] {
  const users = testsUsing(projects, tools);
  return tools
    .filter((t) => /^PgBouncer [≥1]|^PgDoorman/.test(t.name) && (users.get(t) ?? []).length > 0)
    .map((t) => `preflight: ${t.name}: ${t.find() ?? 'not found'}`);
}

function parseArgs(argv: readonly string[]): PreflightOptions {
  const env = process.env.PROXYLAB_TEST_INSTALL;
  let install: boolean | 'auto' = env === '0' ? false : env === '1' ? true : 'auto';
  const projects: Project[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--install') install = true;
    else if (arg === '--no-install') install = false;
    else if (arg === '--project') {
      const p = argv[++i];
      if (!PROJECTS.includes(p as Project))
        throw new Error(`--project must be one of ${PROJECTS.join(', ')}, got ${p}`);
      projects.push(p as Project);
    } else
      throw new Error(`unknown argument ${arg}; usage: preflight [--install | --no-install] [--project P]…`);
  }
  return { install, projects: projects.length > 0 ? projects : [...PROJECTS], log: (l) => console.error(l) };
}

if (require.main === module) {
  let opts: PreflightOptions;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`preflight: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  const started = Date.now();
  preflight(opts).then(
    (message) => {
      const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
      if (message !== null) {
        console.error(message);
        console.error(`preflight: stopped before any test (${took}).`);
        process.exit(1);
      }
      for (const line of usedToolLines(opts.projects)) console.error(line);
      console.error(`preflight: every tool the ${opts.projects.join(', ')} tests use is here (${took}).`);
    },
    (err: unknown) => {
      console.error(`preflight: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(2);
    },
  );
}
