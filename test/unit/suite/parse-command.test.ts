import * as path from 'path';
import { main } from '../../../scripts/cli';

const FIX = path.resolve(__dirname, '../../fixtures/pgbench');

async function run(args: string[]): Promise<{ out: string; err: string; code: number }> {
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  process.exitCode = undefined;
  try {
    await main(args);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  process.exitCode = undefined;
  return { out, err, code };
}

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
    [['parse', '/nonexistent/pgbench.out'], /cannot read capture/],
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
