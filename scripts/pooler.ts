/**
 * On-host entry of the self-hosted PgBouncer (installed as /opt/proxylab/pooler.js beside
 * runner.js). Placeholder until the bootstrap and agent land (issue 12).
 */
process.stderr.write('proxylab pooler: not built yet\n');
process.exit(2);
