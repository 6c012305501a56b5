/**
 * A poll now and then every `intervalMs`, never two at once: a poll still running when the next
 * tick comes makes that tick skip rather than pile up. The samplers' shared timer (local metrics,
 * the cloud runner's poolers).
 */
export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly poll: () => Promise<void>,
    private readonly intervalMs: number,
    /** Let the process exit while the loop runs (a runner that must not hang on its sampler). */
    private readonly unref = false,
  ) {}

  /** Polls once (awaited), then starts the timer. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.poll().finally(() => {
        this.inFlight = null;
      });
    }, this.intervalMs);
    if (this.unref) this.timer.unref();
  }

  /** Stops the timer and waits for a poll still running. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.inFlight) await this.inFlight;
  }
}
