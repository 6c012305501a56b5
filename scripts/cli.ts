/**
 * `proxylab` command line. Thin: each subcommand lives in scripts/commands/<name>.ts and exports
 * `register(program)`; the work itself is in lib/. Exit codes: 0 ok, 1 a verdict failed or the
 * infrastructure failed, 2 usage/configuration error.
 */
import { Command, CommanderError } from 'commander';
import { exitCodeFor, InterruptedError, UsageError } from '../lib/core/errors';
import { forTerminal } from '../lib/core/terminal-text';

type Registrar = (program: Command) => void;

// One entry per subcommand, in the order `--help` lists them (the everyday path first).
// Modules are loaded lazily: `proxylab local` loads only local's module, `--help` loads them all. A
// command module imports statically only what its help needs; the rest of its work (lib/ modules
// with the AWS SDK, pg, echarts) it requires when its action runs, so `--help` loads none of those.
const COMMANDS: ReadonlyArray<readonly [string, () => { register: Registrar }]> = [
  ['local', () => commandModule('local', require('./commands/local'))],
  ['validate', () => commandModule('validate', require('./commands/validate'))],
  ['cost', () => commandModule('cost', require('./commands/cost'))],
  ['plan', () => commandModule('plan', require('./commands/plan'))],
  ['deploy', () => commandModule('deploy', require('./commands/deploy'))],
  ['doctor', () => commandModule('doctor', require('./commands/doctor'))],
  ['run', () => commandModule('run', require('./commands/run'))],
  ['status', () => commandModule('status', require('./commands/status'))],
  ['fetch', () => commandModule('fetch', require('./commands/fetch'))],
  ['report', () => commandModule('report', require('./commands/report'))],
  ['compare', () => commandModule('compare', require('./commands/compare'))],
  ['collect', () => commandModule('collect', require('./commands/collect'))],
  ['parse', () => commandModule('parse', require('./commands/parse'))],
  ['extend', () => commandModule('extend', require('./commands/extend'))],
  ['destroy', () => commandModule('destroy', require('./commands/destroy'))],
  ['iam-policy', () => commandModule('iam-policy', require('./commands/iam-policy'))],
  ['settings', () => commandModule('settings', require('./commands/settings'))],
];

/** A lazily required command module, checked: `require` is untyped. */
function commandModule(name: string, mod: unknown): { register: Registrar } {
  if (typeof mod === 'object' && mod !== null && 'register' in mod && typeof mod.register === 'function')
    return mod as { register: Registrar };
  throw new Error(`scripts/commands/${name}.ts does not export register(program)`);
}

export function buildProgram(argv: readonly string[] = []): Command {
  const program = new Command();
  program
    .name('proxylab')
    .description(
      'Lab kit for PostgreSQL connection pooling: Aurora PostgreSQL + RDS Proxy labs on AWS,\n' +
        'a pgbench suite engine, and a throwaway local PostgreSQL + PgBouncer stand-in.\n\n' +
        'Exit codes: 0 ok (every verdict held), 1 a verdict failed or infrastructure failed, 2 usage error.',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  const chosen = COMMANDS.find(([name]) => name === argv[0]);
  for (const [, load] of chosen ? [chosen] : COMMANDS) load().register(program);
  return program;
}

/**
 * A reader that goes away (`proxylab … | head`) must not crash the CLI with an unhandled EPIPE:
 * further output is dropped and the command finishes its work (a local run stops cleanly, see
 * run-local.ts).
 */
function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      // EPIPE: the reader went away; EIO: the terminal did (SIGHUP follows, handled like Ctrl-C).
      if (err.code !== 'EPIPE' && err.code !== 'EIO') throw err;
    });
  }
}

export async function main(argv: string[]): Promise<void> {
  ignoreClosedPipes();
  // AWS SDK v3 prints an 8-line "node >= 22 from January 2027" notice before every AWS command's
  // own output (even its usage errors); the README's requirements say it once instead.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const program = buildProgram(argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with exit code 0; parse errors were already printed.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    const code = exitCodeFor(err);
    // Messages can quote a run directory or a bucket (a suite name, a manifest's error): shown with
    // control characters made visible.
    const msg = forTerminal(err instanceof Error ? err.message : String(err));
    const label =
      err instanceof UsageError
        ? 'error'
        : err instanceof InterruptedError
          ? 'interrupted'
          : 'proxylab failed';
    process.stderr.write(`${label}: ${msg}\n`);
    if (process.env.PROXYLAB_DEBUG && err instanceof Error && err.stack)
      process.stderr.write(err.stack + '\n');
    process.exitCode = code;
  }
}
