/**
 * Layering rules, checked by `npm run lint` (dependency-cruiser). Data flows one way:
 * config → plan → execution → results → report (../README.md, CONTRIBUTING.md "Layering").
 *
 *   lib/core         errors with codes, formatting: imports nothing of the project
 *   lib/suite        pure suite model (catalog, expansion, argv, parser, verdicts): core only, no I/O
 *   lib/engine       runs steps through ports: suite + core only
 *   lib/local        local adapters  ┐ never import each other; may use engine, suite, config, core
 *   lib/cloud        AWS adapters    ┘
 *   lib/collector    CloudWatch / PI collector (Lambda and CLI): suite, config, core
 *   lib/config       lab files, defaults, validation, the stack's output contract
 *   lib/cost         price table and estimates: config, suite, core
 *   lib/constructs   CDK constructs (synth time): config, core — never runtime adapters
 *   lib/report       reads a run directory: suite (result types), core, the collector's metric catalog
 *   lib/cli          terminal presentation for the CLI
 *   lib/pgbouncer    PgBouncer layout and configuration (pure): core only; read by local, cloud, constructs
 *   scripts/, bin/, lambda/   entry points: thin, may import lib/
 *
 * Type-only imports count (tsPreCompilationDeps), so a cycle through `import type` is a cycle too.
 */
const PROJECT = '^(lib|scripts|bin|lambda|bench|test)/';

/** A rule: files matching `from` may import, of the project's own modules, only those matching `allowed`. */
function onlyImports(name, comment, from, allowed) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: from },
    to: { path: PROJECT, pathNot: allowed },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles hide which module owns what; break them by moving the shared piece down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    onlyImports(
      'core-imports-nothing',
      'lib/core is the base every layer may import.',
      '^lib/core/',
      '^lib/core/',
    ),
    onlyImports(
      'suite-is-pure',
      'lib/suite is the pure suite model: it imports only itself and lib/core.',
      '^lib/suite/',
      '^lib/(suite|core)/',
    ),
    {
      name: 'suite-no-io',
      comment: 'lib/suite does no I/O: no file system, processes, network or OS calls.',
      severity: 'error',
      from: { path: '^lib/suite/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|child_process|net|os|http|https|dgram|cluster|worker_threads)$',
      },
    },
    onlyImports(
      'pgbouncer-config-is-pure',
      'lib/pgbouncer renders PgBouncer configuration as text: core only, no I/O, shared by local and cloud.',
      '^lib/pgbouncer/',
      '^lib/(pgbouncer|core)/',
    ),
    {
      name: 'pgbouncer-config-no-io',
      comment: 'lib/pgbouncer does no I/O; the adapters write the files and start the processes.',
      severity: 'error',
      from: { path: '^lib/pgbouncer/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|child_process|net|os|http|https|dgram|cluster|worker_threads)$',
      },
    },
    onlyImports(
      'engine-imports-suite-and-core',
      'lib/engine runs steps through ports; it knows nothing of AWS, local processes or the CLI.',
      '^lib/engine/',
      '^lib/(engine|suite|core)/',
    ),
    {
      name: 'adapters-independent',
      comment: 'The local and cloud adapters never import each other; what both need moves down a layer.',
      severity: 'error',
      from: { path: '^lib/(local|cloud)/' },
      to: { path: '^lib/(local|cloud)/', pathNot: '^lib/$1/' },
    },
    onlyImports(
      'adapters-below-cli',
      'Adapters import engine, suite, config, collector (cloud) and core — never the CLI, report or constructs.',
      '^lib/(local|cloud)/',
      '^lib/(local|cloud|engine|suite|config|collector|pgbouncer|core)/',
    ),
    onlyImports(
      'constructs-no-runtime',
      'CDK constructs run at synth time: config and core only, never runtime adapters, engine or cost.',
      '^lib/(constructs/|lab-stack\\.ts$)',
      '^lib/(constructs/|config/|pgbouncer/|core/|lab-stack\\.ts$)',
    ),
    onlyImports(
      'report-reads-results',
      'The report reads only the run directory: result types (suite), core and the metric catalog.',
      '^lib/report/',
      '^lib/(report|suite|core)/|^lib/collector/catalog\\.ts$',
    ),
    onlyImports(
      'collector-below-adapters',
      'The collector (Lambda and CLI) uses suite, config and core only.',
      '^lib/collector/',
      '^lib/(collector|suite|config|core)/',
    ),
    onlyImports(
      'config-below-adapters',
      'Lab configuration is read by everyone and reads only suite names and core.',
      '^lib/config/',
      '^lib/(config|suite|pgbouncer|core)/',
    ),
    onlyImports(
      'cost-reads-config',
      'The cost estimate reads lab configuration and suite durations only.',
      '^lib/cost/',
      '^lib/(cost|config|suite|core)/',
    ),
    onlyImports(
      'cli-presentation',
      'lib/cli formats what the engine and adapters produce; nothing below imports it.',
      '^lib/cli/',
      '^lib/(cli|engine|suite|config|core)/',
    ),
    {
      name: 'lib-not-entry-points',
      comment: 'Library code never imports entry points or tests.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(scripts|bin|lambda|bench|test)/' },
    },
    onlyImports(
      'lambda-thin',
      'The Lambda handlers (collector, spot-request canceller) are thin: they wire lib code and need nothing else.',
      '^lambda/',
      '^lambda/|^lib/(collector|core|suite|config)/',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|runs|coverage)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
