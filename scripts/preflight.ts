/**
 * Before any test runs: find every external tool the tests use, install what is missing the way
 * `proxylab local` installs PostgreSQL and PgBouncer (lib/local/binaries.ts: apt/dnf/brew as root
 * or with passwordless sudo; pip for the Python tools), or stop with ONE message that names each
 * missing tool, the tests that need it and the exact command that installs it.
 *
 *   npx tsx scripts/preflight.ts [--install | --no-install] [--project unit|cdk|integration]…
 *
 * Default: install when we can (root or passwordless sudo for OS packages; pip always), also with
 * CI=true. `--no-install` (or PROXYLAB_TEST_INSTALL=0) only reports; `--install` (or
 * PROXYLAB_TEST_INSTALL=1) installs and fails when it cannot. `--project` checks only the tools
 * that tests of those jest projects use (what `npm run test:cdk` etc. pass).
 *
 * This is the only list of test tools: `npm test`, `npm run test:*` and `.ci/run` all run it. A
 * test that needs a new tool adds an entry here; its `usedBy` pattern finds the tests to name.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  detectPackageManager,
  findPgbouncer,
  findPostgres,
  MIN_POSTGRES_MAJOR,
  packageInstallCommand,
  postgresPackages,
  privilegePrefix,
  runInstall,
  type PackageManager,
} from '../lib/local/binaries';

export const REPO_ROOT = path.resolve(__dirname, '..');
const TEST_ROOT = path.join(REPO_ROOT, 'test');
export const PROJECTS = ['unit', 'cdk', 'integration'] as const;
export type Project = (typeof PROJECTS)[number];

/** Where the tests look for PgBouncer 1.25.2 (not packaged anywhere we install from). */
export const PGBOUNCER_1_25_ENV = 'PROXYLAB_PGBOUNCER_1_25';
const PGBOUNCER_1_25_DEFAULT = path.resolve(
  REPO_ROOT,
  '..',
  'shared',
  'tools',
  'pgbouncer-1.25.2',
  'pgbouncer',
);
/** Which Chromium the report test drives (else `chromium` / `chromium-browser` on PATH). */
export const CHROMIUM_ENV = 'PROXYLAB_CHROMIUM';

/** How a tool is installed: OS packages per package manager, pip requirements, or not at all. */
type Install =
  | { readonly kind: 'os'; readonly packages: (pm: PackageManager) => readonly string[] | null }
  | { readonly kind: 'pip'; readonly requirement: string }
  | { readonly kind: 'none'; readonly how: string };

export interface Tool {
  readonly name: string;
  /** What the tests do with it. */
  readonly purpose: string;
  /** Matches the source of each test file that needs the tool (directly or through a helper). */
  readonly usedBy: RegExp;
  /** Path (or a description) when present, null when missing. */
  readonly find: () => string | null;
  readonly install: Install;
  /** Checked even when no test names it today (CI always has ../shared: a missing one is a broken CI). */
  readonly requiredInCi?: boolean;
}

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

/** Where the tests look for Debian's PgBouncer 1.18 when it is not found on PATH or in /usr/sbin. */
export const PGBOUNCER_1_18_ENV = 'PROXYLAB_PGBOUNCER_1_18';

/**
 * A PgBouncer whose version starts with `prefix`: $envVar if set (and only it), else `fallback`,
 * else the first such binary among PATH and the usual directories (lib/local/binaries.ts). null
 * unless it runs and reports that version.
 */
function findPgbouncerRelease(prefix: string, envVar: string, fallback: string | null): string | null {
  const accept = (v: string): boolean => v.startsWith(prefix);
  const fromEnv = process.env[envVar];
  if (fromEnv !== undefined && fromEnv !== '')
    return findPgbouncer(process.platform, [fromEnv], accept)?.file ?? null;
  const candidates = fallback === null ? undefined : [fallback];
  return (
    (candidates ? findPgbouncer(process.platform, candidates, accept)?.file : undefined) ??
    findPgbouncer(process.platform, undefined, accept)?.file ??
    null
  );
}

/**
 * PgBouncer 1.25.x: $PROXYLAB_PGBOUNCER_1_25, else ../shared/tools/pgbouncer-1.25.2/pgbouncer, else
 * a 1.25 on PATH (a clone elsewhere with that directory first in PATH).
 */
export function findPgbouncer125(): string | null {
  return findPgbouncerRelease('1.25.', PGBOUNCER_1_25_ENV, PGBOUNCER_1_25_DEFAULT);
}

/** Debian's PgBouncer 1.18 (no max_prepared_statements): $PROXYLAB_PGBOUNCER_1_18, else on PATH or in /usr/sbin. */
export function findPgbouncer118(): string | null {
  return findPgbouncerRelease('1.18.', PGBOUNCER_1_18_ENV, null);
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
  {
    name: 'PgBouncer 1.25.2',
    purpose: 'prepared statements through a transaction pool (max_prepared_statements)',
    usedBy: /\bfindPgbouncer125\(/,
    find: findPgbouncer125,
    install: {
      kind: 'none',
      how:
        `build it (../shared/tools/pgbouncer-1.25.2/README.md says how) and set ${PGBOUNCER_1_25_ENV}=/path/to/pgbouncer, ` +
        `or clone next to ../shared (CI has it)`,
    },
    requiredInCi: true,
  },
  {
    name: 'PgBouncer 1.18 (Debian 12)',
    purpose: 'the default pooler of the integration tests: the behaviour before max_prepared_statements',
    usedBy: /\bfindPgbouncer118\(/,
    find: findPgbouncer118,
    install: {
      kind: 'none',
      how: `Debian 12's \`apt-get install pgbouncer\` (1.18.0); elsewhere build 1.18 and set ${PGBOUNCER_1_18_ENV}=/path/to/pgbouncer`,
    },
    requiredInCi: true,
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
    usedBy: /['"]cfn-lint['"]|\bcfnLint\(/,
    find: () => onPath('cfn-lint'),
    install: { kind: 'pip', requirement: 'cfn-lint' },
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

/** Test files (relative to the repo) of these projects that need each tool. */
export function testsUsing(projects: readonly Project[]): Map<Tool, string[]> {
  const sources = projects.flatMap((p) =>
    testFiles(path.join(TEST_ROOT, p)).map((f) => ({
      file: path.relative(REPO_ROOT, f),
      text: fs.readFileSync(f, 'utf8'),
    })),
  );
  // The test of this list spells every tool's name without using any.
  const users = sources.filter((s) => s.file !== path.join('test', 'unit', 'preflight.test.ts'));
  return new Map(TOOLS.map((t) => [t, users.filter((s) => t.usedBy.test(s.text)).map((s) => s.file)]));
}

interface Missing {
  readonly tool: Tool;
  readonly tests: readonly string[];
}

const pipCommand = (reqs: readonly string[]): string[] => ['python3', '-m', 'pip', 'install', ...reqs];
const shellQuote = (arg: string): string =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
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
        : inst.kind === 'none'
          ? inst.how
          : pkgs !== null
            ? osCommand(pm ?? 'apt-get', pkgs)
            : `install ${m.tool.name} with your package manager`;
    const tests = m.tests.length > 0 ? m.tests.join(', ') : 'no test yet (checked because CI=true)';
    lines.push(`  ✗ ${m.tool.name}: ${m.tool.purpose}`, `      needed by ${tests}`, `      install: ${how}`);
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
}

/** null when every tool is there (after installing what we could), else the message to stop with. */
export function preflight(opts: PreflightOptions): string | null {
  const users = testsUsing(opts.projects);
  const ci = process.env.CI === 'true';
  const needed = TOOLS.filter((t) => (users.get(t) ?? []).length > 0 || (ci && t.requiredInCi === true));
  const missingNow = (): Missing[] =>
    needed.filter((t) => t.find() === null).map((tool) => ({ tool, tests: users.get(tool) ?? [] }));

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
  missing = missingNow();
  if (missing.length === 0) return null;
  return missingMessage(missing, pm, notes.length > 0 ? notes.join('; ') : 'still missing after installing');
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
  const message = preflight(opts);
  if (message !== null) {
    console.error(message);
    process.exit(1);
  }
  console.error(`preflight: every tool the ${opts.projects.join(', ')} tests use is here.`);
}
