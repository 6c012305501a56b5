/**
 * Spot interruption handling without AWS: the IMDSv2 exchange (token, then the item; 404 = no
 * notice; a 401 fetches a new token once), the watcher's one notice, the interruption record's
 * lifecycle in a blob store (notice → signal → closed by the resumed attempt), and what
 * `proxylab status` prints while an interruption is open and after the resume.
 */
import { expect } from '@jest/globals';
import type { BlobStore } from '../../lib/results/blob-store';
import type { Clock } from '../../lib/engine/ports';
import { computeProgress, formatProgress } from '../../lib/operator/runs';
import {
  imdsEndpointFrom,
  imdsV2,
  interruptionPath,
  InterruptionRecorder,
  onSpotNotice,
  parseInstanceAction,
  readInterruptions,
  SpotNoticeWatcher,
  type InstanceMetadata,
} from '../../lib/aws/spot';
import type { RunManifest } from '../../lib/suite/types';

class MemoryBlobs implements BlobStore {
  readonly files = new Map<string, string>();
  where(key: string): string {
    return `mem://run/${key}`;
  }
  read(key: string): Promise<string | null> {
    return Promise.resolve(this.files.get(key) ?? null);
  }
  write(key: string, body: string): Promise<void> {
    this.files.set(key, body);
    return Promise.resolve();
  }
  list(prefix: string): Promise<string[]> {
    return Promise.resolve([...this.files.keys()].filter((k) => k.startsWith(prefix)).sort());
  }
  exists(key: string): Promise<boolean> {
    return Promise.resolve(this.files.has(key));
  }
}

function clockAt(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return { now: () => now, sleep: () => Promise.resolve(), set: (t) => (now = new Date(t)) };
}

describe('IMDSv2', () => {
  test('token first, then the item with the token; 404 means no notice', async () => {
    // GIVEN a metadata service with no interruption scheduled
    const calls: string[] = [];
    const imds = imdsV2('http://imds.test/', (url, init) => {
      calls.push(`${init.method} ${url} ${JSON.stringify(init.headers)}`);
      if (init.method === 'PUT')
        return Promise.resolve({ status: 200, text: () => Promise.resolve('tok-1') });
      return Promise.resolve({ status: 404, text: () => Promise.resolve('') });
    });
    // WHEN / THEN
    await expect(imds.instanceAction()).resolves.toBeNull();
    expect(calls[0]).toBe(
      'PUT http://imds.test/latest/api/token {"X-aws-ec2-metadata-token-ttl-seconds":"21600"}',
    );
    expect(calls[1]).toBe(
      'GET http://imds.test/latest/meta-data/spot/instance-action {"X-aws-ec2-metadata-token":"tok-1"}',
    );
  });

  test('a notice is parsed; a refused (expired) token is renewed once', async () => {
    let tokens = 0;
    const imds = imdsV2('http://imds.test', (_url, init) => {
      if (init.method === 'PUT')
        return Promise.resolve({ status: 200, text: () => Promise.resolve(`tok-${++tokens}`) });
      if (init.headers['X-aws-ec2-metadata-token'] === 'tok-1')
        return Promise.resolve({ status: 401, text: () => Promise.resolve('') });
      return Promise.resolve({
        status: 200,
        text: () => Promise.resolve('{"action": "stop", "time": "2026-03-01T10:02:00Z"}'),
      });
    });
    await expect(imds.instanceAction()).resolves.toEqual({ action: 'stop', time: '2026-03-01T10:02:00Z' });
    expect(tokens).toBe(2);
  });

  test('parseInstanceAction: anything but {action, time} is not a notice', () => {
    expect(parseInstanceAction('{"action":"terminate","time":"t"}')).toEqual({
      action: 'terminate',
      time: 't',
    });
    expect(parseInstanceAction('not json')).toBeNull();
    expect(parseInstanceAction('{"action":1}')).toBeNull();
  });

  test('the endpoint follows the SDK variables; AWS_EC2_METADATA_DISABLED turns it off', () => {
    expect(imdsEndpointFrom({})).toBe('http://169.254.169.254');
    expect(imdsEndpointFrom({ AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:9' })).toBe(
      'http://127.0.0.1:9',
    );
    expect(imdsEndpointFrom({ AWS_EC2_METADATA_DISABLED: 'true' })).toBeNull();
  });
});

describe('SpotNoticeWatcher', () => {
  const fake = (lifeCycle: string | null, actions: Array<{ action: string; time: string } | null>) => {
    let polls = 0;
    const imds: InstanceMetadata = {
      lifeCycle: () =>
        lifeCycle === null ? Promise.reject(new Error('no IMDS')) : Promise.resolve(lifeCycle),
      instanceAction: () => Promise.resolve(actions[Math.min(polls++, actions.length - 1)] ?? null),
    };
    return { imds, polls: () => polls };
  };

  /** A clock whose sleep moves "now" on at once (no real waiting). */
  function steppingClock(iso: string): Clock & { sleeps: number[] } {
    let now = Date.parse(iso);
    const sleeps: number[] = [];
    return {
      sleeps,
      now: () => new Date(now),
      sleep: (ms) => {
        sleeps.push(ms);
        now += ms;
        return Promise.resolve();
      },
    };
  }

  test('on a spot instance: polls every interval until the notice, reports it once, then stops polling', async () => {
    // GIVEN the notice appears at the third poll
    const f = fake('spot', [null, null, { action: 'stop', time: 'T' }]);
    const clock = steppingClock('2026-03-01T10:00:00Z');
    const notices: string[] = [];
    const w = new SpotNoticeWatcher({
      imds: f.imds,
      onNotice: (a) => void notices.push(a.action),
      log: () => undefined,
      clock,
    });
    // WHEN
    await expect(w.start()).resolves.toBe(true);
    await w.done();
    // THEN two waits of the recommended 5 s, one notice, no poll after it
    expect(clock.sleeps).toEqual([5000, 5000]);
    expect(notices).toEqual(['stop']);
    expect(f.polls()).toBe(3);
  });

  test('on-demand or off EC2: nothing is polled', async () => {
    for (const lifeCycle of ['on-demand', null]) {
      const f = fake(lifeCycle, [{ action: 'stop', time: 'T' }]);
      const w = new SpotNoticeWatcher({
        imds: f.imds,
        onNotice: () => undefined,
        log: () => undefined,
        clock: steppingClock('2026-03-01T10:00:00Z'),
      });
      await expect(w.start()).resolves.toBe(false);
      await w.done();
      expect(f.polls()).toBe(0);
    }
  });

  test('stop() ends a wait between polls at once', async () => {
    // GIVEN a clock whose sleep never ends by itself
    const f = fake('spot', [null]);
    const w = new SpotNoticeWatcher({
      imds: f.imds,
      onNotice: () => undefined,
      log: () => undefined,
      clock: { now: () => new Date(0), sleep: () => new Promise<void>(() => undefined) },
    });
    await w.start();
    // WHEN / THEN
    w.stop();
    await expect(w.done()).resolves.toBeUndefined();
    expect(f.polls()).toBe(1);
  });
});

describe('the two-minute notice, without waiting for a signal (issue 20, defect 7)', () => {
  test('a notice from IMDSv2 writes the interruption record, then stops the run, before EC2 acts', async () => {
    // GIVEN a spot runner whose metadata service schedules a stop at 10:02:00 from the third poll on
    // (an injected fetch speaking IMDSv2: token PUT, then GETs carrying it; 404 = no notice yet)
    const start = Date.parse('2026-03-01T10:00:00Z');
    let now = start;
    const clock: Clock = {
      now: () => new Date(now),
      sleep: (ms) => {
        now += ms;
        return Promise.resolve();
      },
    };
    const notice = { action: 'stop', time: '2026-03-01T10:02:00Z' };
    let actionPolls = 0;
    const imds = imdsV2('http://imds.test', (url, init) => {
      const reply = (status: number, body = '') =>
        Promise.resolve({ status, text: () => Promise.resolve(body) });
      if (init.method === 'PUT') return reply(200, 'tok');
      if (init.headers['X-aws-ec2-metadata-token'] !== 'tok') return reply(401);
      if (url.endsWith('/instance-life-cycle')) return reply(200, 'spot');
      if (url.endsWith('/spot/instance-action'))
        return ++actionPolls >= 3 ? reply(200, JSON.stringify(notice)) : reply(404);
      return reply(404);
    });
    const blobs = new MemoryBlobs();
    const events: string[] = [];
    const write = blobs.write.bind(blobs);
    blobs.write = (key, body) => {
      events.push(`write ${key} at ${clock.now().toISOString()}`);
      return write(key, body);
    };
    const recorder = new InterruptionRecorder(blobs, 0, clock);
    recorder.setStepInFlight('e1/0003');
    const abort = new AbortController();
    const lines: string[] = [];
    const watcher = new SpotNoticeWatcher({
      imds,
      clock,
      log: (l) => lines.push(l),
      onNotice: onSpotNotice({
        recorder,
        clock,
        log: (l) => lines.push(l),
        stop: () => {
          events.push(`stop at ${clock.now().toISOString()}`);
          abort.abort();
        },
      }),
    });
    // WHEN the runner watches (no SIGTERM ever comes)
    await watcher.start();
    await watcher.done();
    // THEN the record was written, then the run was stopped, both before the notice's time
    expect(events).toEqual([
      'write interruptions/runner-0.json at 2026-03-01T10:00:10.000Z',
      'stop at 2026-03-01T10:00:10.000Z',
    ]);
    expect(abort.signal.aborted).toBe(true);
    const record = JSON.parse(blobs.files.get(interruptionPath(0)) ?? 'null') as Record<string, unknown>;
    expect(record).toEqual({
      runnerIndex: 0,
      interruptedAt: '2026-03-01T10:00:10.000Z',
      cause: 'spot-notice',
      signal: null,
      notice,
      stepInFlight: 'e1/0003',
      resumedAt: null,
    });
    expect(Date.parse(record.interruptedAt as string)).toBeLessThan(Date.parse(notice.time));
    expect(lines).toContain('interruption recorded; stopping the run 110 s before EC2 acts');
  });
});

describe('interruption record and status', () => {
  const manifest = (status: RunManifest['status']): RunManifest =>
    ({
      runId: 'r1',
      suite: 'smoke',
      status,
      stepIds: ['a', 'b', 'c'],
      startedAt: '2026-03-01T10:00:00Z',
      endedAt: status === 'running' ? null : '2026-03-01T10:03:00Z',
    }) as unknown as RunManifest;

  test('notice, then SIGTERM: one open record; status names the runner, the time and the step', async () => {
    // GIVEN runner 2 of a run, mid-step, when the notice arrives
    const blobs = new MemoryBlobs();
    const clock = clockAt('2026-03-01T10:00:30Z');
    const rec = new InterruptionRecorder(blobs, 1, clock);
    rec.setStepInFlight('smoke-churn/direct/c5/simple/per-transaction/r1');
    // WHEN the notice comes, then the shutdown's SIGTERM two minutes later
    await rec.notice({ action: 'stop', time: '2026-03-01T10:02:30Z' });
    clock.set('2026-03-01T10:02:29Z');
    await rec.signal('SIGTERM');
    // THEN one record, dated by the notice, with the signal and the step in flight
    const records = await readInterruptions(blobs);
    expect(records).toEqual([
      {
        runnerIndex: 1,
        interruptedAt: '2026-03-01T10:00:30.000Z',
        cause: 'spot-notice',
        signal: 'SIGTERM',
        notice: { action: 'stop', time: '2026-03-01T10:02:30Z' },
        stepInFlight: 'smoke-churn/direct/c5/simple/per-transaction/r1',
        resumedAt: null,
      },
    ]);
    const line = formatProgress(computeProgress('r1', manifest('interrupted'), 1, clock.now(), records));
    expect(line).toContain('interrupted: 1/3 steps');
    expect(line).toContain(
      'runner 1 interrupted at 2026-03-01T10:00:30.000Z (spot interruption notice: stop at',
    );
    expect(line).toContain('step smoke-churn/direct/c5/simple/per-transaction/r1 was running');
    expect(line).toContain('--run-id r1');
  });

  test('a plain SIGTERM is recorded as a signal without a notice', async () => {
    const blobs = new MemoryBlobs();
    await new InterruptionRecorder(blobs, 0, clockAt('2026-03-01T10:00:00Z')).signal('SIGTERM');
    const [r] = await readInterruptions(blobs);
    expect(r?.cause).toBe('signal');
    expect(r?.notice).toBeNull();
  });

  test('the resumed attempt closes the record; status no longer reports it', async () => {
    // GIVEN an open record of an earlier attempt
    const blobs = new MemoryBlobs();
    await new InterruptionRecorder(blobs, 0, clockAt('2026-03-01T10:00:00Z')).signal('SIGTERM');
    // WHEN a new attempt in the same slot starts
    await new InterruptionRecorder(blobs, 0, clockAt('2026-03-01T11:00:00Z')).resumed();
    // THEN the record is kept, closed, and status says nothing of it
    const records = await readInterruptions(blobs);
    expect(records[0]?.resumedAt).toBe('2026-03-01T11:00:00.000Z');
    const line = formatProgress(computeProgress('r1', manifest('completed'), 3, new Date(), records));
    expect(line).not.toMatch(/interrupted/);
  });

  test('an attempt that has its own record does not close it', async () => {
    const blobs = new MemoryBlobs();
    const rec = new InterruptionRecorder(blobs, 0, clockAt('2026-03-01T10:00:00Z'));
    await rec.notice({ action: 'stop', time: 'T' });
    await rec.resumed();
    expect(JSON.parse(blobs.files.get(interruptionPath(0)) ?? '{}')).toMatchObject({ resumedAt: null });
  });
});
