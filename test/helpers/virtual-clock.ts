/**
 * Virtual time for tests of concurrent timed code (the disruption probe's clients): every wait goes
 * through `sleepUntil`, and the clock jumps to the earliest pending wait once every promise chain
 * that can run has run (one macrotask turn), so concurrent clients interleave deterministically and
 * a 10 s window takes milliseconds.
 */
import type { ProbeClock } from '../../lib/exec/disruption-probe';

export class VirtualClock implements ProbeClock {
  private t: number;
  private readonly waiters: Array<{ at: number; seq: number; resolve: () => void }> = [];
  private seq = 0;
  private pumping = false;

  constructor(start = 1000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleepUntil(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= this.t || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ at: ms, seq: this.seq++, resolve });
      this.pump();
    });
  }

  /** Waits `ms` of virtual time (fake I/O latency). */
  sleep(ms: number): Promise<void> {
    return this.sleepUntil(this.t + ms);
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    const step = (): void => {
      if (this.waiters.length === 0) {
        this.pumping = false;
        return;
      }
      this.waiters.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.waiters.shift() as { at: number; resolve: () => void };
      this.t = Math.max(this.t, next.at);
      next.resolve();
      setImmediate(step);
    };
    setImmediate(step);
  }
}
