/**
 * Runner fleet, I/O part: makes N runners run each step together and merges their parts, with
 * S3 as the only channel (runners cannot reach each other: no inbound rules).
 *
 * Keys, under `runs/<runId>/fleet/<attempt>/<stepFile>/` (attempt = the run's `--start-at`, so a
 * resumed run never meets the barrier objects of an earlier attempt):
 *   ready-<i>.json   runner i reached the step (written before it waits)
 *   plan.json        runner 0, once every runner is ready: `{ startAt }` = now + lead time
 *   part-<i>.json    runner i's record of its share, its raw output and its CPU
 * Runner 0 waits for every part, merges (fleet.ts) and writes the one step record through the
 * S3 sink; the other runners' engines see the merged step as completed on resume.
 *
 * The engine is unaware of all this: FleetExecutor (around the pgbench executor) divides clients,
 * jobs and rate and waits at the barrier; FleetSink (around the S3 sink) turns each runner's
 * step record into a part and, on runner 0, into the merged record.
 */
import { InfrastructureError } from '../core/errors';
import type {
  Clock,
  PgbenchExecutor,
  PgbenchInvocation,
  PgbenchOutcome,
  RawStepFiles,
  ResultSink,
  StepReadContext,
  StepWindow,
} from '../engine/ports';
import { stepFileName, type MetricSeries, type RunManifest, type StepRecord } from '../suite/types';
import {
  argvNumber,
  mergeRawFiles,
  mergeStepRecords,
  partRecord,
  rewriteArgvForShare,
  splitStep,
  type RunnerShare,
  type RunnerStepRecord,
} from './fleet';
import type { BlobStore } from '../results/blob-store';
import { RUN_PATHS } from '../results/run-paths';
import { parseRunFile, runnerShareSchema, stepRecordSchema } from '../results/schemas';
import { cpuPercent, positiveCount, timestamp } from '../results/figures';
import { z } from 'zod';
import { runBlobs } from '../aws/s3-sink';
import type { S3Client } from '@aws-sdk/client-s3';

export interface FleetOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly runId: string;
  readonly runnerIndex: number;
  readonly runnerCount: number;
  /** Distinguishes attempts of the same run id (the CLI's `--start-at`). */
  readonly attempt: string;
  readonly clock: Clock;
  /** Give up waiting for the other runners after this long. @default 900 000 ms */
  readonly barrierTimeoutMs?: number;
  /** @default 1 000 ms */
  readonly pollMs?: number;
  /** Time between "everyone is ready" and the common start, so every runner sees the plan. @default 5 000 ms */
  readonly leadMs?: number;
  readonly log?: (line: string) => void;
  /** Applied to every part before it is written (password scrubber). */
  readonly scrub?: (text: string) => string;
  /** Stop waiting at a barrier when this aborts (SIGTERM). */
  readonly signal?: AbortSignal;
}

/** A runner's part as runner 0 reads it back: checked, so the merge never works on a cast. */
const partDocumentSchema = z.object({
  runnerIndex: z.number().int().min(0),
  share: runnerShareSchema.nullable(),
  record: stepRecordSchema,
  raw: z.object({ stdout: z.string(), stderr: z.string(), log: z.string().nullable() }),
  cpuMaxPercent: cpuPercent.nullable(),
});

/** `fleet/<attempt>/<step>/plan.json`: when the runners start a step, as runner 0 agreed it. */
const startPlanSchema = z.object({ startAt: timestamp, runnerCount: positiveCount });

interface PartDocument {
  readonly runnerIndex: number;
  readonly share: RunnerShare | null;
  readonly record: StepRecord;
  readonly raw: RawStepFiles;
  readonly cpuMaxPercent: number | null;
}

/** Per-runner state shared by FleetExecutor and FleetSink. */
export class FleetCoordinator {
  /** The step the engine is working on (set by FleetExecutor.workDir). */
  currentStep: string | null = null;
  private readonly shares = new Map<string, RunnerShare>();
  private readonly cpu = new Map<string, number | null>();
  private readonly starts = new Map<string, Date>();
  /** The run's store (`runs/<runId>/`): the fleet's objects live under its `fleet/`. */
  private readonly blobs: BlobStore;

  constructor(readonly options: FleetOptions) {
    this.blobs = runBlobs(options.s3, options.bucket, options.runId);
  }

  get isLeader(): boolean {
    return this.options.runnerIndex === 0;
  }

  /** `fleet/<attempt>/<stepFile>/`, relative to the run's store. */
  stepPrefix(stepFile: string): string {
    const attempt = this.options.attempt.replace(/[^A-Za-z0-9._-]+/g, '_');
    return `${RUN_PATHS.fleetDir}/${attempt}/${stepFile}/`;
  }

  private putJson(key: string, value: unknown): Promise<void> {
    return this.blobs.write(key, JSON.stringify(value, null, 2) + '\n', 'application/json');
  }

  rememberShare(stepFile: string, share: RunnerShare, cpuMaxPercent: number | null, startAt: Date): void {
    this.shares.set(stepFile, share);
    this.cpu.set(stepFile, cpuMaxPercent);
    this.starts.set(stepFile, startAt);
  }

  /** Wait until every runner reached this step, then until the agreed start time. Returns it. */
  async barrier(stepFile: string): Promise<Date> {
    const { runnerIndex, runnerCount, clock } = this.options;
    const prefix = this.stepPrefix(stepFile);
    await this.putJson(`${prefix}ready-${runnerIndex}.json`, {
      runnerIndex,
      at: clock.now().toISOString(),
    });
    let startAt: Date;
    if (this.isLeader) {
      await this.waitFor(prefix, 'ready-', runnerCount, `runners ready for ${stepFile}`);
      startAt = new Date(clock.now().getTime() + (this.options.leadMs ?? 5_000));
      await this.putJson(`${prefix}plan.json`, { startAt: startAt.toISOString(), runnerCount });
    } else {
      const text = await this.poll(
        async () => this.blobs.read(`${prefix}plan.json`),
        `start plan for ${stepFile}`,
      );
      // Checked like every run file: its schema, and no key twice.
      startAt = new Date(parseRunFile(startPlanSchema, this.blobs.where(`${prefix}plan.json`), text).startAt);
    }
    const waitMs = startAt.getTime() - clock.now().getTime();
    if (waitMs > 0) await clock.sleep(waitMs);
    else if (waitMs < -1000)
      this.options.log?.(`step ${stepFile}: runner ${runnerIndex} starts ${Math.round(-waitMs)} ms late`);
    return startAt;
  }

  async submitPart(doc: PartDocument): Promise<void> {
    const stepFile = stepFileName(doc.record.stepId);
    const text = JSON.stringify(doc, null, 2) + '\n';
    await this.blobs.write(
      `${this.stepPrefix(stepFile)}part-${doc.runnerIndex}.json`,
      this.options.scrub ? this.options.scrub(text) : text,
      'application/json',
    );
  }

  /** Runner 0: every runner's part of a step (waits for the missing ones). */
  async collectParts(stepFile: string): Promise<PartDocument[]> {
    const prefix = this.stepPrefix(stepFile);
    await this.waitFor(prefix, 'part-', this.options.runnerCount, `parts of ${stepFile}`);
    const docs: PartDocument[] = [];
    for (let i = 0; i < this.options.runnerCount; i++) {
      const text = await this.blobs.read(`${prefix}part-${i}.json`);
      if (text === null)
        throw new InfrastructureError(`${this.blobs.where(`${prefix}part-${i}.json`)} vanished`);
      docs.push(parseRunFile(partDocumentSchema, this.blobs.where(`${prefix}part-${i}.json`), text));
    }
    return docs;
  }

  takeShare(stepFile: string): {
    share: RunnerShare | null;
    cpuMaxPercent: number | null;
    startAt: Date | null;
  } {
    const share = this.shares.get(stepFile) ?? null;
    const cpuMaxPercent = this.cpu.get(stepFile) ?? null;
    const startAt = this.starts.get(stepFile) ?? null;
    this.shares.delete(stepFile);
    this.cpu.delete(stepFile);
    this.starts.delete(stepFile);
    return { share, cpuMaxPercent, startAt };
  }

  private async waitFor(prefix: string, namePrefix: string, count: number, what: string): Promise<void> {
    await this.poll(async () => {
      const keys = await this.blobs.list(prefix);
      const have = new Set(keys.map((k) => k.slice(prefix.length)).filter((n) => n.startsWith(namePrefix)));
      return have.size >= count ? true : null;
    }, what);
  }

  private async poll<T>(fn: () => Promise<T | null>, what: string): Promise<T> {
    const { clock } = this.options;
    const timeoutMs = this.options.barrierTimeoutMs ?? 900_000;
    const deadline = clock.now().getTime() + timeoutMs;
    for (;;) {
      if (this.options.signal?.aborted)
        throw new InfrastructureError(`fleet: interrupted while waiting for ${what}`);
      const v = await fn();
      if (v !== null) return v;
      if (clock.now().getTime() >= deadline) {
        throw new InfrastructureError(
          `fleet: gave up waiting for ${what} after ${Math.round(timeoutMs / 1000)} s (a runner died?)`,
        );
      }
      await clock.sleep(this.options.pollMs ?? 1_000);
    }
  }
}

/** Divides each pgbench run into this runner's share and starts it at the fleet's common time. */
export class FleetExecutor implements PgbenchExecutor {
  constructor(
    private readonly inner: PgbenchExecutor,
    private readonly fleet: FleetCoordinator,
  ) {}

  async workDir(name: string): Promise<string> {
    this.fleet.currentStep = name;
    return this.inner.workDir(name);
  }

  async removeWorkDir(dir: string): Promise<void> {
    await this.inner.removeWorkDir?.(dir);
  }

  async run(invocation: PgbenchInvocation): Promise<PgbenchOutcome> {
    if (invocation.argv.includes('-i') || invocation.argv.includes('--initialize')) {
      // Data is loaded once, by runner 0; the others meet it at the next step's barrier, which
      // runner 0 only reaches once the load is done.
      if (this.fleet.isLeader) return this.inner.run(invocation);
      return { stdout: '', stderr: '', exitCode: 0, timedOut: false, logFiles: [], cpuMaxPercent: null };
    }
    const stepFile = this.fleet.currentStep;
    if (stepFile === null)
      throw new InfrastructureError('fleet: pgbench invoked before the engine asked for a step work dir');
    const clients = argvNumber(invocation.argv, '-c', '--client') ?? 1;
    const jobs = argvNumber(invocation.argv, '-j', '--jobs') ?? 1;
    const rate = argvNumber(invocation.argv, '-R', '--rate');
    const share = splitStep({ clients, jobs, rate }, this.fleet.options.runnerCount)[
      this.fleet.options.runnerIndex
    ] as RunnerShare;
    const startAt = await this.fleet.barrier(stepFile);
    if (share.clients === 0) {
      this.fleet.rememberShare(stepFile, share, null, startAt);
      return { stdout: '', stderr: '', exitCode: 0, timedOut: false, logFiles: [], cpuMaxPercent: null };
    }
    const outcome = await this.inner.run({
      ...invocation,
      argv: rewriteArgvForShare(invocation.argv, share),
    });
    this.fleet.rememberShare(stepFile, share, outcome.cpuMaxPercent ?? null, startAt);
    return outcome;
  }
}

/**
 * Around the S3 sink. Every runner's step record becomes a part; runner 0 merges the parts and
 * writes the step. Runners other than 0 never write the manifest (runner 0 owns it) and write
 * their metrics under their own name (`<name>-runner-<i>`).
 */
export class FleetSink implements ResultSink {
  constructor(
    private readonly inner: ResultSink,
    private readonly fleet: FleetCoordinator,
    private readonly options: {
      /** Judges the merged record (the step's only verdict). */
      judge: (record: StepRecord) => StepRecord['verdict'];
      cpuSaturationPercent?: number;
    },
  ) {}

  async writeManifest(manifest: RunManifest): Promise<void> {
    if (this.fleet.isLeader) await this.inner.writeManifest(manifest);
  }

  readManifest(): Promise<RunManifest | null> {
    return this.inner.readManifest();
  }

  completedStepIds(): Promise<Set<string>> {
    return this.inner.completedStepIds();
  }

  async readSteps(run?: StepReadContext): Promise<StepRecord[]> {
    return (await this.inner.readSteps?.(run)) ?? [];
  }

  /**
   * The leader returns the merged record it stored, judged once; other runners store nothing of
   * their own and return their part, which carries no verdict (their engine's judgement of a share
   * is dropped here, so it counts nowhere).
   */
  async writeStep(record: StepRecord, raw: RawStepFiles): Promise<StepRecord> {
    const stepFile = stepFileName(record.stepId);
    const taken = this.fleet.takeShare(stepFile);
    const cpuMaxPercent = taken.cpuMaxPercent;
    // pgbench did not run (pre-check refusal, infrastructure error): the share is the same split.
    const share =
      taken.share ??
      (splitStep(
        {
          clients: Math.max(1, record.params.clients),
          jobs: Math.max(1, record.params.jobs),
          rate: record.params.rate,
        },
        this.fleet.options.runnerCount,
      )[this.fleet.options.runnerIndex] as RunnerShare);
    // startedAt: the agreed start (the engine's clock started before the barrier wait)
    const part = partRecord(record, share, taken.startAt);
    const runnerIndex = this.fleet.options.runnerIndex;
    await this.fleet.submitPart({ runnerIndex, share, record: part, raw, cpuMaxPercent });
    if (!this.fleet.isLeader) return part;
    const docs = await this.fleet.collectParts(stepFile);
    const records: RunnerStepRecord[] = docs.map((d) => ({
      runnerIndex: d.runnerIndex,
      record: d.record,
      cpuMaxPercent: d.cpuMaxPercent,
      raw: d.raw,
    }));
    const merged = mergeStepRecords(records, this.options);
    await this.inner.writeStep(merged, mergeRawFiles(records));
    return merged;
  }

  async writeMetrics(
    name: string,
    runId: string,
    window: { start: string; end: string },
    series: MetricSeries[],
  ): Promise<void> {
    const own = this.fleet.isLeader ? name : `${name}-runner-${this.fleet.options.runnerIndex}`;
    await this.inner.writeMetrics(own, runId, window, series);
  }

  async writeStepWindows(runId: string, windows: readonly StepWindow[]): Promise<void> {
    if (this.fleet.isLeader) await this.inner.writeStepWindows?.(runId, windows);
  }
}
