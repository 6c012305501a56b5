import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import * as path from 'path';
import { runCliInProcess as run } from '../../helpers/cli';
import { scratchDir } from '../../helpers/scratch';

const FIX = path.resolve(__dirname, '../../fixtures/pgbench');

describe('proxylab parse', () => {
  test('combined capture: one JSON object with the issue fields', async () => {
    // WHEN
    const { out, code } = await run(['parse', path.join(FIX, 'pg14-rds/direct_6.out')]);
    // THEN
    expect(code).toBe(0);
    const json = JSON.parse(out) as Record<string, unknown>;
    for (const field of [
      'pgbenchVersion',
      'serverVersion',
      'transactionType',
      'protocol',
      'clients',
      'threads',
      'durationSec',
      'transactionsProcessed',
      'transactionsExpected',
      'failedTransactions',
      'tps',
      'tpsMode',
      'latencyAvgMs',
      'latencyStddevMs',
      'initialConnectionMs',
      'avgConnectionMs',
      'scheduleLagAvgMs',
      'abortedClients',
      'complete',
      'errors',
    ]) {
      expect(json).toHaveProperty(field);
    }
    expect(json).toMatchObject({
      clients: 600,
      tps: null,
      complete: false,
      errors: [{ class: 'too-many-connections', count: 20 }],
    });
  });

  test('split capture with exit code and two aggregate thread logs merged', async () => {
    const base = path.join(FIX, 'pg15-local/pgb_sel1_prepared_c5');
    const { out, code } = await run([
      'parse',
      '--stdout',
      `${base}.stdout`,
      '--stderr',
      `${base}.stderr`,
      '--exit-code',
      '2',
      '--log',
      path.join(FIX, 'pg15-local/logs/aggregate-interval-1.thread0.log'),
      '--log',
      path.join(FIX, 'pg15-local/logs/aggregate-interval-1.thread1.log'),
    ]);
    expect(code).toBe(0);
    const json = JSON.parse(out) as {
      exitCode: number;
      abortedClients: number;
      series: Array<{ transactions: number; lagAvgMs: number | null }>;
      logKind: string;
    };
    expect(json.exitCode).toBe(2);
    expect(json.abortedClients).toBe(4);
    expect(json.logKind).toBe('aggregate');
    expect(json.series.map((p) => p.transactions)).toEqual([1077, 11553, 11839, 11474, 11995]);
    expect(json.series[0]?.lagAvgMs).toBeNull(); // no --rate in the summary → lag unknown
  });

  test('per-transaction log gives percentiles; proxy_5 warnings', async () => {
    const { out } = await run([
      'parse',
      path.join(FIX, 'pg14-rds/proxy_5.out'),
      '--log',
      path.join(FIX, 'pg15-local/logs/per-transaction.thread0.head200.log'),
    ]);
    const json = JSON.parse(out) as { latencyP50Ms: number; warnings: string[] };
    expect(json.latencyP50Ms).toBe(0.317);
    expect(json.warnings.length).toBe(2);
  });

  test.each([
    [['parse', '/nonexistent/pgbench.out'], /capture: \/nonexistent\/pgbench.out does not exist/],
    [['parse'], /nothing to parse/],
    [
      ['parse', path.join(FIX, 'pg14-rds/direct_1.out'), '--stdout', path.join(FIX, 'pg14-rds/direct_1.out')],
      /not both/,
    ],
    [
      ['parse', path.join(FIX, 'pg14-rds/direct_1.out'), '--exit-code', 'x'],
      /--exit-code must be a non-negative integer/,
    ],
    [
      ['parse', path.join(FIX, 'pg14-rds/direct_1.out'), '--log', path.join(FIX, 'pg14-rds/direct_2.out')],
      /not a pgbench log/,
    ],
  ])('usage errors exit 2: %j', async (args, message) => {
    const { code, err } = await run(args);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe('proxylab parse on hostile or wrong input', () => {
  const dir = scratchDir('proxylab-parse-');

  test.each([
    ['/dev/zero', /^error: capture: \/dev\/zero is a character device; expected a regular file$/m],
    ['/dev/urandom', /^error: capture: \/dev\/urandom is a character device; expected a regular file$/m],
  ])('%s is refused at once (exit 2), not read until memory runs out', async (file, message) => {
    const t0 = Date.now();
    const { code, out, err } = await run(['parse', file]);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(message);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('a FIFO is refused at once instead of blocking forever', async () => {
    const fifo = path.join(dir, 'capture.fifo');
    execFileSync('mkfifo', [fifo]);
    const t0 = Date.now();
    const { code, err } = await run(['parse', '--stdout', fifo, '--stderr', fifo]);
    expect(code).toBe(2);
    expect(err).toMatch(/--stdout: .*capture\.fifo is a FIFO \(named pipe\); expected a regular file/);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('random bytes are refused (exit 2) instead of an all-null result with exit 0', async () => {
    const file = path.join(dir, 'random.bin');
    writeFileSync(file, randomBytes(64 * 1024));
    const { code, out, err } = await run(['parse', file]);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(/nothing in .*random\.bin is pgbench output/);
  });

  test('a capture of a pgbench that failed at start-up is still parsed (its error line counts)', async () => {
    const file = path.join(dir, 'refused.txt');
    writeFileSync(
      file,
      'pgbench: error: connection to server at "127.0.0.1", port 5432 failed: Connection refused\n',
    );
    const { code, out } = await run(['parse', file, '--exit-code', '1']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      errors: [expect.objectContaining({ class: 'connection-failed' })],
    });
  });
});
