/**
 * Layering rules, checked by `npm run lint` (dependency-cruiser). Data flows one way:
 * config → plan → execution → results → report (docs/architecture.md, CONTRIBUTING.md "Layering").
 *
 *   lib/core         errors with codes, formatting, safe file reads: imports nothing of the project
 *   lib/products     what each product is and can do (kinds, capabilities, settings catalogue): core only, no I/O
 *   lib/suite        pure suite model (catalog, expansion, argv, parser, verdicts, target descriptors): core only, no I/O
 *   lib/results      the run directory: result schemas, run paths, blob and run stores: suite, core
 *   lib/poolers      pooler drivers, one folder per product (lib/poolers/<product>/): results, suite, core
 *   lib/config       lab files, defaults, validation, the stack's output contract: suite, poolers, core
 *   lib/engine       runs steps through ports: results, suite, poolers, core
 *   lib/exec         host processes both the local stack and the runner start (process, psql, pgbench)
 *   lib/local        `proxylab local`'s adapters (throwaway PostgreSQL and poolers)
 *   lib/aws          AWS plumbing shared by the cloud sides, and the contracts between them (run request,
 *                    runner arguments, spot record, result sink, pooler agent client, collector invocation)
 *   lib/operator     the CLI side of the cloud (deploy, run, status, doctor …): never the runner or pooler host
 *   lib/runner       the code on the EC2 runners: never the operator, the pooler host or lib/local
 *   lib/pooler-host  the code on a self-hosted pooler's EC2 host: never the operator, runner or lib/local
 *   lib/collector    CloudWatch / PI collector (Lambda and CLI): results, suite, config, core
 *   lib/cost         price table and estimates: config, poolers, suite, core
 *   lib/constructs   CDK constructs (synth time): config, poolers, core — never runtime adapters
 *   lib/report       reads a run directory through lib/results: results, suite, core, the metric catalog
 *   lib/cli          terminal presentation for the CLI
 *   scripts/, bin/, lambda/   entry points: thin, may import lib/
 * Each bundle that ships (scripts/runner.ts, scripts/pooler.ts, lambda/*) may reach, through any chain
 * of imports, only the layers it ships with (the *-bundle rules below).
 *
 * Type-only imports count (tsPreCompilationDeps), so a cycle through `import type` is a cycle too.
 */
const PROJECT = '^(lib|scripts|bin|lambda|bench|test)/';
const NODE_IO = '^(node:)?(fs|fs/promises|child_process|net|os|http|https|dgram|cluster|worker_threads)$';

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

/** A rule: the bundle entry `entry` may reach, through any chain of imports, only `allowed` of lib/. */
function bundleShips(name, comment, entry, allowed) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: entry },
    to: { path: '^lib/', pathNot: allowed, reachable: true },
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
      'products-at-the-bottom',
      'lib/products holds what each product IS and CAN do (kinds, capabilities by version, settings catalogue): the bottom of the pure layer, it imports only itself and lib/core.',
      '^lib/products/',
      '^lib/(products|core)/',
    ),
    {
      name: 'products-no-io',
      comment: 'lib/products is data and pure functions: no file system, processes, network or OS calls.',
      severity: 'error',
      from: { path: '^lib/products/' },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    onlyImports(
      'suite-is-pure',
      'lib/suite is the pure suite model: it imports only itself and lib/core.',
      '^lib/suite/',
      '^lib/(suite|products|core)/',
    ),
    {
      name: 'suite-no-io',
      comment: 'lib/suite does no I/O: no file system, processes, network or OS calls.',
      severity: 'error',
      from: { path: '^lib/suite/' },
      to: { dependencyTypes: ['core'], path: NODE_IO },
    },
    onlyImports(
      'results-below-readers',
      'lib/results is the one reader and writer of a run directory: engine, report and collector import it; it imports suite and core.',
      '^lib/results/',
      '^lib/(results|suite|products|core)/',
    ),
    onlyImports(
      'poolers-are-drivers',
      'A pooler driver (lib/poolers/<product>) knows its product, not who runs it: results, suite and core only.',
      '^lib/poolers/',
      '^lib/(poolers|results|suite|products|core)/',
    ),
    onlyImports(
      'engine-imports-model',
      'lib/engine runs steps through ports; it knows nothing of AWS, local processes or the CLI.',
      '^lib/engine/',
      '^lib/(engine|results|poolers|suite|products|core)/',
    ),
    onlyImports(
      'exec-runs-processes',
      'lib/exec starts host processes for the local stack and the runner alike: engine ports, results, poolers, suite, core.',
      '^lib/exec/',
      '^lib/(exec|engine|results|poolers|suite|products|core)/',
    ),
    onlyImports(
      'local-adapters',
      "proxylab local's adapters: never the cloud sides, the CLI, report or constructs.",
      '^lib/local/',
      '^lib/(local|exec|engine|results|poolers|suite|products|config|core)/',
    ),
    onlyImports(
      'aws-shared-by-cloud-sides',
      'lib/aws is shared by the operator, runner and pooler host: it imports none of them.',
      '^lib/aws/',
      '^lib/(aws|exec|engine|results|poolers|suite|products|config|collector|core)/',
    ),
    onlyImports(
      'operator-not-hosts',
      'The operator (CLI side) never imports the code on the runners or the pooler host; what both need lives in lib/aws.',
      '^lib/operator/',
      '^lib/(operator|aws|engine|results|poolers|suite|products|config|collector|core)/',
    ),
    onlyImports(
      'runner-not-operator',
      'The runner never imports the operator, the pooler host or lib/local; what it shares lives in lib/aws or lib/exec.',
      '^lib/runner/',
      '^lib/(runner|aws|exec|engine|results|poolers|suite|products|config|collector|core)/',
    ),
    onlyImports(
      'pooler-host-alone',
      'The pooler host imports neither the operator, the runner nor lib/local.',
      '^lib/pooler-host/',
      '^lib/(pooler-host|aws|exec|engine|results|poolers|suite|products|config|core)/',
    ),
    onlyImports(
      'constructs-no-runtime',
      'CDK constructs run at synth time: config, poolers and core only, never runtime adapters, engine or cost.',
      '^lib/(constructs/|lab-stack\\.ts$)',
      '^lib/(constructs/|config/|poolers/|products/|core/|lab-stack\\.ts$)',
    ),
    onlyImports(
      'report-reads-results',
      'The report reads only the run directory: results, suite, core and the metric catalog.',
      '^lib/report/',
      '^lib/(report|results|suite|products|core)/|^lib/collector/catalog\\.ts$',
    ),
    onlyImports(
      'collector-below-adapters',
      'The collector (Lambda and CLI) uses results, suite, config and core only.',
      '^lib/collector/',
      '^lib/(collector|results|suite|products|config|core)/',
    ),
    onlyImports(
      'config-below-adapters',
      'Lab configuration is read by everyone and reads only suite names, pooler drivers, results and core.',
      '^lib/config/',
      '^lib/(config|suite|products|poolers|results|core)/',
    ),
    onlyImports(
      'cost-reads-config',
      'The cost estimate reads lab configuration, pooler drivers (their host) and suite durations only.',
      '^lib/cost/',
      '^lib/(cost|config|poolers|suite|products|results|core)/',
    ),
    onlyImports(
      'cli-presentation',
      'lib/cli formats what the engine and adapters produce; nothing below imports it.',
      '^lib/cli/',
      '^lib/(cli|engine|results|suite|products|config|core)/',
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
      '^lambda/|^lib/(collector|results|core|suite|products|config)/',
    ),
    bundleShips(
      'runner-bundle',
      'The runner bundle (scripts/runner.ts) ships the runner side only.',
      '^scripts/runner\\.ts$',
      '^lib/(runner|aws|exec|engine|results|poolers|suite|products|config|collector|core)/',
    ),
    bundleShips(
      'pooler-bundle',
      'The pooler host bundle (scripts/pooler.ts) ships the pooler host side only.',
      '^scripts/pooler\\.ts$',
      '^lib/(pooler-host|aws|exec|engine|results|poolers|suite|products|config|core)/',
    ),
    bundleShips(
      'lambda-bundles',
      'Each Lambda bundle ships the collector side only.',
      '^lambda/',
      '^lib/(collector|results|suite|products|config|core)/',
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
