/**
 * Integration tests that do not name a PgBouncer run on Debian's 1.18 — whatever `pgbouncer` comes
 * first on PATH (a user may put a newer one there): their expectations (the ps-on cells "not
 * available") are 1.18's. Set here, for the test process and every CLI it spawns; a test that wants
 * the current PgBouncer (≥ 1.21) says so with envWithPgbouncer() around the current-PgBouncer helper
 * of pgbouncer-versions.ts. An explicit $PROXYLAB_PGBOUNCER is left alone.
 *
 * jest runs this before every integration test, so scripts/preflight.ts counts the helper called
 * here as used by all of them: call no other tool helper here, and do not spell one in a comment.
 */
import { pgbouncer118 } from './pgbouncer-versions';

if (!process.env.PROXYLAB_PGBOUNCER)
  process.env.PROXYLAB_PGBOUNCER = pgbouncer118('the integration tests (their default PgBouncer)');
