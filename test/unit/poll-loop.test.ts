/**
 * The samplers' shared timer: one poll at start, then one per interval, never two at once (a slow
 * poll makes ticks skip), and stop waits for the poll still running. Fake timers, no real sleeps.
 */
import { expect, jest } from '@jest/globals';
import { PollLoop } from '../../lib/engine/poll-loop';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('polls once at start, then once per interval', async () => {
  let polls = 0;
  const loop = new PollLoop(() => {
    polls++;
    return Promise.resolve();
  }, 1000);
  await loop.start();
  expect(polls).toBe(1);
  await jest.advanceTimersByTimeAsync(3000);
  expect(polls).toBe(4);
  await loop.stop();
  await jest.advanceTimersByTimeAsync(5000);
  expect(polls).toBe(4);
});

test('a poll still running makes the next ticks skip; stop waits for it', async () => {
  let running = 0;
  let maxRunning = 0;
  let polls = 0;
  let release: (() => void) | null = null;
  const loop = new PollLoop(() => {
    polls++;
    if (polls === 1) return Promise.resolve(); // the start poll
    running++;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<void>((resolve) => {
      release = () => {
        running--;
        resolve();
      };
    });
  }, 1000);
  await loop.start();
  // the tick at 1 s starts a poll that hangs; the ticks at 2 s and 3 s skip
  await jest.advanceTimersByTimeAsync(3000);
  expect(polls).toBe(2);
  expect(maxRunning).toBe(1);
  // stop does not return while that poll runs
  let stopped = false;
  const stopping = loop.stop().then(() => {
    stopped = true;
  });
  await jest.advanceTimersByTimeAsync(1000);
  expect(stopped).toBe(false);
  (release as unknown as () => void)();
  await stopping;
  expect(stopped).toBe(true);
  expect(polls).toBe(2);
});
