/**
 * `proxylab local`: the embedded default. Starts a throwaway PostgreSQL + PgBouncer on this machine,
 * runs a suite (default `quick`) through the suite engine into runs/<runId>/, prints a table per
 * scenario, and stops everything (also on failure and Ctrl-C). Thin: the work is lib/local.
 */
import * as os from 'node:os';
import { Option, type Command } from 'commander';
import { checkOutDir } from '../../lib/core/out-dir';
import { shellQuote } from '../../lib/core/shell';
import { forTerminal } from '../../lib/core/terminal-text';
import { formatResultTables, formatSummary, ProgressPrinter } from '../../lib/cli/terminal';
import { UsageError } from '../../lib/core/errors';
import { appHostsFlag } from '../../lib/cost/production';
import type { LocalRunOptions, LocalRunResult } from '../../lib/local/run-local';
import type { TargetPrice } from '../../lib/suite/types';
import {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_OUT_DIR,
  DEFAULT_POOL_PERCENT,
  DEFAULT_SUITE,
} from '../../lib/local/defaults';
import { getSuite, SUITE_NAMES } from '../../lib/suite/catalog';
import { loadModule, localPricesModule, pricesModule, runLocalModule } from './lazy';

interface LocalFlags {
  readonly lab?: string;
  readonly suite?: string;
  /** Test-only, hidden from --help: a suite of lib/suite/test-suites.ts (CONTRIBUTING.md "A run to interrupt"). */
  readonly testSuite?: string;
  /** Test-only, hidden from --help: a data directory to copy instead of running initdb (test/helpers/pg-template.ts). */
  readonly testPgdataTemplate?: string;
  readonly out?: string;
  readonly runId?: string;
  readonly maxConnections?: string;
  readonly poolPercent?: string;
  readonly poolerProcesses?: string;
  readonly poolers?: string;
  readonly keep?: boolean;
  /** false with --no-install. */
  readonly install: boolean;
  /** false with --no-report. */
  readonly report: boolean;
  readonly json?: boolean;
  readonly priceRegion?: string;
  readonly appHosts?: string;
}

/**
 * Called after every finished local run, in order (the HTML report; none with --no-report). One line per hook:
 * `() => require('../../lib/report/after-local-run')`, exporting afterLocalRun(result, print).
 */
type AfterLocalRun = (result: LocalRunResult, print: (line: string) => void) => Promise<void>;
const AFTER_RUN: Array<() => { afterLocalRun: AfterLocalRun }> = [
  () => afterRunHook('lib/report/after-local-run', require('../../lib/report/after-local-run')),
];

/** A lazily required hook module, checked: `require` is untyped. */
function afterRunHook(name: string, mod: unknown): { afterLocalRun: AfterLocalRun } {
  if (
    typeof mod === 'object' &&
    mod !== null &&
    'afterLocalRun' in mod &&
    typeof mod.afterLocalRun === 'function'
  )
    return mod as { afterLocalRun: AfterLocalRun };
  throw new Error(`${name}.ts does not export afterLocalRun(result, print)`);
}

export function register(program: Command): void {
  program
    .command('local')
    .description(
      'Run a suite against a throwaway PostgreSQL + PgBouncer (and, with --poolers, PgDoorman) on this machine (the embedded default). ' +
        'Finds PostgreSQL >= 14 and PgBouncer (installs them with apt-get/dnf/brew when it can, unless --no-install), ' +
        'starts them on free ports on 127.0.0.1 in a temporary directory, runs the suite, writes ' +
        'OUT/RUN_ID/ (manifest.json, steps/*.json with raw pgbench output, metrics/local.json), prints a table ' +
        'per scenario and stops everything — also on failure and Ctrl-C. Re-running with the same --run-id ' +
        "resumes: finished steps are kept and not repeated. With --lab FILE it runs that lab's suites (by default " +
        'its first: `lab`, its own scenarios, when it has them) on the local counterparts of its targets — direct ' +
        'and one local pooler per lab pooler, with its name, product, settings and (when this machine has it, e.g. ' +
        "in the proxylab cache) the version it pins, else it says which version ran instead and what that changes; an RDS Proxy has none and is named as not measured — with its poolers' pool share.\n\n" +
        'Exit codes: 0 every verdict held, 1 a verdict did not hold or the infrastructure failed, 2 usage error,\n' +
        '130 interrupted by Ctrl-C (129 SIGHUP, 131 SIGQUIT, 143 SIGTERM, 141 output pipe closed): servers stopped,\n' +
        'finished steps kept; an interrupt before the first step leaves no run directory.',
    )
    .addHelpText(
      'after',
      `\nSuites:\n${SUITE_NAMES.map((n) => `  ${n.padEnd(14)} ${getSuite(n).description}`).join('\n')}\n` +
        `  ${'lab'.padEnd(14)} With --lab FILE: the lab file's own scenarios (its \`scenarios\`; docs/lab-file.md).\n`,
    )
    .option(
      '--lab <file>',
      'a lab file: run its suites (and its own scenarios, `--suite lab`) here, on the local counterparts of its targets',
    )
    .option(
      '--suite <name>',
      `suite to run: ${SUITE_NAMES.join(', ')}, or \`lab\` (with --lab) (default: ${DEFAULT_SUITE}, with --lab the lab's first suite)`,
    )
    .option('--out <dir>', 'directory for run directories', DEFAULT_OUT_DIR)
    .option(
      '--run-id <id>',
      'run id (letters, digits, . _ -); default local-YYYYMMDD-HHMMSS-xxxx (UTC, xxxx random hex so two runs started in the same second differ). An existing run id resumes that run',
    )
    .option(
      '--max-connections <n>',
      `the server's max_connections (10–5000); small so "more clients than the server allows" is cheap`,
      String(DEFAULT_MAX_CONNECTIONS),
    )
    .option(
      '--pool-percent <n>',
      `each PgBouncer pool's size as % of max_connections (1–100), the local analogue of RDS Proxy's MaxConnectionsPercent (default ${DEFAULT_POOL_PERCENT}; with --lab its poolers' poolPercent)`,
    )
    .option(
      '--pooler-processes <n>',
      'PgBouncer processes sharing the port with so_reuseport (1–32), as on a multi-core pooler host; ' +
        'the pool is split across them, each is reset, resized and sampled through its own admin console ' +
        '(unix socket); SHOW POOLS/STATS are summed, CPU is recorded per process',
      '1',
    )
    .option(
      '--poolers <list>',
      'the self-hosted poolers to run side by side, each with a transaction and a session pool: ' +
        'product[:processes], comma-separated, e.g. pgbouncer,pgbouncer:2,pgdoorman (targets pgbouncer-1p-…, ' +
        "pgbouncer-2p-…, pgdoorman-…). Default: the suite's own list (e6-local runs all three), else pgbouncer. " +
        'PgDoorman is found through $PROXYLAB_PGDOORMAN or PATH; when it is missing the run says ' +
        'how to get it and goes on without it. Not with --lab (the lab names its poolers)',
    )
    .option(
      '--keep',
      'leave PostgreSQL and PgBouncer running afterwards and print how to connect (trust auth on 127.0.0.1)',
    )
    .option('--no-install', 'never install missing PostgreSQL/PgBouncer packages; print the command instead')
    .option(
      '--no-report',
      'do not write report.html and summary.md into the run directory afterwards (`proxylab report RUN_DIR` writes them later)',
    )
    .option('--json', 'print a JSON summary on stdout at the end (progress goes to stderr)')
    .option(
      '--price-region <region>',
      "price the targets at a cloud region's on-demand prices (any commercial region; the AWS Price List, " +
        'cached per region and date, else for us-east-1 the committed table): the decision table shows $/h, ' +
        '$ per M tx and the production bill (a pooler as an HA pair behind an NLB, on the smallest host type ' +
        'whose vCPUs cover the measured pooler CPU), marked "local throughput, cloud prices"',
    )
    .option(
      '--app-hosts <n>',
      'with --price-region: price each pooler in the production column on N application hosts (as `cost --app-hosts N` does) ' +
        'instead of as an HA pair behind an NLB',
    )
    // For proxylab's own tests only, so not in --help or the docs (CONTRIBUTING.md "Test time"): a
    // cheap run to interrupt, kill and resume through this same command (lib/suite/test-suites.ts),
    // and a data directory initdb made once, copied instead of running initdb (test/helpers/pg-template.ts).
    .addOption(new Option('--test-suite <name>').hideHelp())
    .addOption(new Option('--test-pgdata-template <dir>').hideHelp())
    .action((flags: LocalFlags, command: Command) => localCommand(flags, command));
}

/** `proxylab local`: validate, run the suite here, print its tables and summary, then the report hooks. */
async function localCommand(flags: LocalFlags, command: Command): Promise<void> {
  // Validate everything before starting anything.
  checkOutDir(flags.out ?? DEFAULT_OUT_DIR);
  const appHosts = appHostsFlag(flags.appHosts);
  if (appHosts !== undefined && flags.priceRegion === undefined)
    throw new UsageError(
      `--app-hosts ${flags.appHosts ?? ''} prices the production column, which needs --price-region REGION: give both or neither`,
    );
  const suiteGiven = command.getOptionValueSource('suite') !== 'default';
  let opts = runLocalModule().validateLocalInput(
    {
      ...(flags.lab !== undefined ? { lab: flags.lab } : {}),
      suite: flags.testSuite === undefined || suiteGiven ? flags.suite : undefined,
      testSuite: flags.testSuite,
      testPgdataTemplate: flags.testPgdataTemplate,
      out: flags.out,
      runId: flags.runId,
      maxConnections: flags.maxConnections,
      poolPercent: flags.poolPercent,
      poolerProcesses: flags.poolerProcesses,
      poolers: flags.poolers,
      keep: flags.keep,
      install: flags.install,
    },
    process.cwd(),
  );
  const human = flags.json ? process.stderr : process.stdout;
  // Lines can quote a resumed run's files (step records, verdicts, errors): shown with control
  // characters made visible.
  const print = (line: string): void => {
    human.write(forTerminal(line) + '\n');
  };
  // --price-region: priced as every command prices a region, before anything starts.
  if (flags.priceRegion !== undefined)
    opts = { ...opts, targetPrices: await localPrices(flags, opts, print, appHosts) };
  if (opts.lab) for (const line of runLocalModule().describeCounterparts(opts.lab)) print(line);
  const printer = new ProgressPrinter({ stream: human });
  let result: LocalRunResult;
  try {
    result = await runLocalModule().runLocal(opts, { progress: printer.handle, log: print });
  } finally {
    printer.close();
  }
  print('');
  // the suite as run: a minor upgrade's local stand-in is titled as such, not as the cloud's upgrade
  print(formatResultTables(result.suite ?? opts.suite, result.records, result.scenarioVerdicts));
  print(formatSummary(result.manifest, result.records, result.runDir, result.wallSec));
  if (result.manifest.status === 'interrupted' || result.manifest.status === 'failed') {
    print(
      `Resume (finished steps are kept): ${resumeCommand(flags, opts.suite.name, result.manifest.runId)}`,
    );
  }
  if (result.keptConnectionHelp !== null) {
    print('\nServers left running (--keep):');
    print(result.keptConnectionHelp);
  }
  if (flags.report) for (const load of AFTER_RUN) await load().afterLocalRun(result, print);
  else print(`Report not written (--no-report): proxylab report ${shellQuote(result.runDir)} writes it`);
  if (flags.json) printJsonSummary(result);
  // Interrupted: the shell's convention, 128 + signal number (Ctrl-C → 130), the same code
  // whether run directly or through npx.
  if (result.interruptedBy !== null)
    process.exitCode = 128 + (os.constants.signals[result.interruptedBy] ?? 0);
  else if (!result.allHeld) process.exitCode = 1;
}

/**
 * `--price-region R`: R's prices as `validate`, `plan` and `cost` get them (`preparePrices`: the
 * Price List, its cache, or us-east-1's committed table), or a usage error with the same one-line
 * reason; then each target of the run priced at them (lib/cost/local-prices.ts), a pooler on
 * `appHosts` application hosts when given (`--app-hosts N`), else as an HA pair.
 */
async function localPrices(
  flags: LocalFlags,
  opts: LocalRunOptions,
  print: (line: string) => void,
  appHosts: number | undefined,
): Promise<readonly TargetPrice[]> {
  const region = flags.priceRegion ?? '';
  const prices = await pricesModule().preparePrices(region);
  if (!prices.ok)
    throw new UsageError(`--price-region ${region}: ${prices.reason}`, { code: 'unpriced-region' });
  print(`Prices: ${pricesModule().pricesLine(prices)} (local throughput, cloud prices)`);
  const lab = flags.lab !== undefined ? loadModule().loadLabFile(flags.lab) : null;
  const refs = runLocalModule().localTargetsOf(opts.lab, opts.poolers);
  return localPricesModule().localRunPrices(
    prices.table,
    refs,
    opts.poolers,
    lab,
    appHosts !== undefined ? { appHosts } : {},
  );
}

/** `--json`: the run's summary on stdout (progress went to stderr). */
function printJsonSummary(result: LocalRunResult): void {
  process.stdout.write(
    JSON.stringify(
      {
        runId: result.manifest.runId,
        runDir: result.runDir,
        status: result.manifest.status,
        allHeld: result.allHeld,
        wallSec: Math.round(result.wallSec * 10) / 10,
        steps: result.records.map((r) => ({
          stepId: r.stepId,
          status: r.status,
          tps: r.result?.tps ?? null,
          latencyP95Ms: r.result?.latencyP95Ms ?? null,
          held: r.verdict.held,
        })),
        scenarioVerdicts: result.scenarioVerdicts,
        error: result.manifest.error ?? null,
      },
      null,
      2,
    ) + '\n',
  );
}

/** The command that resumes this run: same lab, suite and settings, the run id made explicit. */
function resumeCommand(flags: LocalFlags, suite: string, runId: string): string {
  const parts = [
    'npx proxylab local',
    ...(flags.lab !== undefined ? [`--lab ${shellQuote(flags.lab)}`] : []),
    flags.testSuite !== undefined ? `--test-suite ${flags.testSuite}` : `--suite ${suite}`,
    `--run-id ${runId}`,
  ];
  if (flags.out !== undefined && flags.out !== DEFAULT_OUT_DIR) parts.push(`--out ${shellQuote(flags.out)}`);
  if (flags.maxConnections !== undefined && flags.maxConnections !== String(DEFAULT_MAX_CONNECTIONS))
    parts.push(`--max-connections ${flags.maxConnections}`);
  if (flags.poolPercent !== undefined && flags.poolPercent !== String(DEFAULT_POOL_PERCENT))
    parts.push(`--pool-percent ${flags.poolPercent}`);
  if (flags.poolerProcesses !== undefined && flags.poolerProcesses !== '1')
    parts.push(`--pooler-processes ${flags.poolerProcesses}`);
  if (flags.poolers !== undefined) parts.push(`--poolers ${shellQuote(flags.poolers)}`);
  if (flags.priceRegion !== undefined) parts.push(`--price-region ${shellQuote(flags.priceRegion)}`);
  if (flags.appHosts !== undefined) parts.push(`--app-hosts ${shellQuote(flags.appHosts)}`);
  return parts.join(' ');
}
