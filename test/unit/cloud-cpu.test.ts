/**
 * Runner CPU guard: /proc/stat parsing, busy % between samples, and the executor wrapper that
 * reports the busier of the machine and the pgbench process.
 */
import {
  CpuGuardExecutor,
  CpuSampler,
  cpuPercent,
  parseProcStat,
  RunnerCpuMetricsSampler,
} from '../../lib/runner/cpu';
import type { PgbenchExecutor, PgbenchOutcome } from '../../lib/engine/ports';

/** /proc/stat with the aggregate line: user nice system idle iowait irq softirq steal guest guest_nice. */
function stat(user: number, idle: number, iowait = 0, system = 0): string {
  return `cpu  ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 12345\n`;
}

describe('parseProcStat / cpuPercent', () => {
  test('busy excludes idle and iowait', () => {
    expect(parseProcStat(stat(100, 300, 50, 50))).toEqual({ busy: 150, total: 500 });
  });

  test.each([
    ['half busy', stat(100, 100), stat(200, 200), 50],
    ['all busy', stat(100, 100), stat(300, 100), 100],
    ['iowait is not busy', stat(100, 100, 0), stat(100, 100, 100), 0],
  ])('%s', (_name, a, b, expected) => {
    const before = parseProcStat(a);
    const after = parseProcStat(b);
    expect(before && after ? cpuPercent(before, after) : undefined).toBe(expected);
  });

  test('garbage and no elapsed time are unknown, not 0', () => {
    expect(parseProcStat('intr 1\n')).toBeNull();
    const s = parseProcStat(stat(1, 1)) as NonNullable<ReturnType<typeof parseProcStat>>;
    expect(cpuPercent(s, s)).toBeNull();
  });
});

describe('CpuGuardExecutor', () => {
  const outcome: PgbenchOutcome = { stdout: '', stderr: '', exitCode: 0, timedOut: false, logFiles: [] };
  function inner(cpuMaxPercent: number | null): PgbenchExecutor {
    return {
      workDir: (n) => Promise.resolve(`/tmp/${n}`),
      run: () => Promise.resolve({ ...outcome, cpuMaxPercent }),
    };
  }
  /** A sampler fed with successive /proc/stat texts (machine 75 % busy over the run). */
  const sampler = (): CpuSampler => {
    const texts = [stat(0, 0), stat(75, 25)];
    return new CpuSampler(() => Promise.resolve(texts.shift() ?? stat(75, 25)), 60_000);
  };

  test.each([
    ['machine busier than pgbench', 20, 75],
    ['pgbench (100 = one core) busier than the machine', 180, 180],
    ['pgbench unknown: the machine', null, 75],
  ])('%s', async (_name, own, expected) => {
    const guard = new CpuGuardExecutor(inner(own), sampler);
    const res = await guard.run({ argv: ['pgbench'], env: {}, timeoutMs: 1000, logDir: '/tmp' });
    expect(res.cpuMaxPercent).toBe(expected);
    expect(await guard.workDir('x')).toBe('/tmp/x');
  });

  test('stops sampling when pgbench throws', async () => {
    const s = sampler();
    const stop = jest.spyOn(s, 'stop');
    const guard = new CpuGuardExecutor(
      { workDir: (n) => Promise.resolve(n), run: () => Promise.reject(new Error('spawn ENOENT')) },
      () => s,
    );
    await expect(guard.run({ argv: ['pgbench'], env: {}, timeoutMs: 1000, logDir: '/tmp' })).rejects.toThrow(
      'ENOENT',
    );
    expect(stop).toHaveBeenCalledTimes(1);
  });
});

describe('RunnerCpuMetricsSampler', () => {
  test('one runner series with a point per interval, no-data when nothing was sampled', async () => {
    const texts = [stat(0, 100), stat(50, 150)];
    const s = new RunnerCpuMetricsSampler(
      'runner-1',
      () => Promise.resolve(texts.shift() ?? null),
      60_000,
      () => new Date('2026-11-21T11:00:00Z'),
    );
    await s.start();
    const [series] = await s.stop();
    expect(series).toEqual({
      source: 'runner',
      name: 'CPUUtilization',
      stat: 'Average',
      unit: 'Percent',
      dimensions: { runner: 'runner-1' },
      points: [['2026-11-21T11:00:00.000Z', 50]],
      status: 'ok',
    });
    const empty = new RunnerCpuMetricsSampler('runner-0', () => Promise.resolve(null), 60_000);
    await empty.start();
    expect((await empty.stop())[0]?.status).toBe('no-data');
  });
});
