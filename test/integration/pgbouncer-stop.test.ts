/**
 * Stopping the local PgBouncer while a client is connected is immediate on both PgBouncers the kit
 * meets (Debian's 1.18 and the current one, ≥ 1.21, that test/helpers/pgbouncer-versions.ts finds):
 * since 1.23 SIGTERM waits for every client to leave and SIGQUIT is the immediate shutdown; before
 * 1.23 SIGTERM is immediate and SIGQUIT is ignored (lib/poolers/pgbouncer/signals.ts). A stop that
 * sent SIGTERM to a PgBouncer ≥ 1.23 would sit out its whole grace period (10 s) and end in SIGKILL.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from '@jest/globals';
import { PsqlSession } from '../../lib/exec/psql';
import { SESSION_DB, startPgbouncer, type Pgbouncer } from '../../lib/local/pgbouncer';
import { isAlive } from '../../lib/exec/process';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';
import { lookUp } from '../helpers/looked-up';
import { pgbouncer118, pgbouncerModern } from '../helpers/pgbouncer-versions';

const FILE = 'test/integration/pgbouncer-stop.test.ts';
/** The current PgBouncer, looked up as the file loads: its version names its test. */
const modern = lookUp(() => pgbouncerModern(FILE));

/** Well under the 10 s grace after which the old SIGTERM stop fell back to SIGKILL. */
const IMMEDIATE_MS = 3000;

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ maxConnections: 30, poolPercent: 20 });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test.each([
  ['1.18.0', () => ({ file: pgbouncer118(FILE), version: '1.18.0' })],
  [modern.value?.version ?? '≥ 1.21 (none found)', () => modern.get()],
])(
  'PgBouncer %s with a client connected stops at once, and the client is dropped',
  async (_label, which) => {
    // GIVEN a PgBouncer of that version and a client holding a session-pool connection
    const { file, version } = which();
    const baseDir = path.join(stack.baseDir, `stop-${version}`);
    fs.mkdirSync(baseDir, { mode: 0o755 });
    const pgb: Pgbouncer = await startPgbouncer({
      bins: { ...stack.bins, pgbouncer: file, poolerVersion: version },
      baseDir,
      runAs: stack.runAs,
      server: stack.postgres,
      poolPercent: 20,
    });
    expect(pgb.version).toBe(version);
    const client = new PsqlSession({
      ...stack.postgres.benchTarget(),
      port: pgb.port,
      dbname: SESSION_DB,
    });
    try {
      const [[row]] = (await client.query(['SELECT 1 AS one'])) as [[{ one: string }]];
      expect(row.one).toBe('1');
      // WHEN the stack stops it
      const t0 = Date.now();
      await pgb.stop();
      const tookMs = Date.now() - t0;
      // THEN it ended well within the grace, by its own shutdown, and the client lost its connection
      expect(tookMs).toBeLessThan(IMMEDIATE_MS);
      expect(isAlive(pgb.pid)).toBe(false);
      await expect(client.query(['SELECT 1'], 3000)).rejects.toThrow();
    } finally {
      await client.close();
      await pgb.stop();
    }
  },
  60_000,
);
