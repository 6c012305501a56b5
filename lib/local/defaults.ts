/**
 * `proxylab local`'s defaults, apart from the code that uses them: `proxylab local --help` shows
 * them without loading the stack (node-postgres, the pooler drivers).
 */

/** The suite a local run measures without --suite or --lab. */
export const DEFAULT_SUITE = 'quick';
/** Where run directories go without --out. */
export const DEFAULT_OUT_DIR = 'runs';
/** The local server's max_connections: small, so that "more clients than the server allows" is cheap. */
export const DEFAULT_MAX_CONNECTIONS = 40;
/** Each PgBouncer pool's size, % of max_connections (RDS Proxy's MaxConnectionsPercent analogue). */
export const DEFAULT_POOL_PERCENT = 25;
