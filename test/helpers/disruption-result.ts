/**
 * A disruption step's result for tests that need one (engine, verdicts, report): a steady warm-up,
 * the given errors after T0, every write reconciled, and nothing lost unless overridden.
 */
import type { DisruptionFigures, DisruptionResult, LedgerCheck } from '../../lib/suite/disruption';

export interface DisruptionResultInput {
  readonly mode?: DisruptionResult['mode'];
  readonly errors?: DisruptionResult['errors'];
  readonly figures?: Partial<DisruptionFigures>;
  readonly writes?: Partial<LedgerCheck>;
  readonly t0?: string | null;
  readonly action?: DisruptionResult['disruption']['action'];
  /** @default connect and statement 5 s */
  readonly clientTimeouts?: DisruptionResult['clientTimeouts'];
}

export function disruptionResult(input: DisruptionResultInput = {}): DisruptionResult {
  const errors = input.errors ?? [];
  const failed = errors.reduce((a, e) => a + e.count, 0);
  const gaveUp = errors.filter((e) => e.class === 'client-timeout').reduce((a, e) => a + e.count, 0);
  return {
    kind: 'disruption',
    disruption: {
      action: input.action ?? 'postgres-restart',
      shutdown: (input.action ?? 'postgres-restart') === 'postgres-restart' ? 'fast' : null,
    },
    mode: input.mode ?? 'persistent',
    clients: 2,
    intervalMs: 100,
    clientTimeouts: input.clientTimeouts ?? { connectTimeoutMs: 5000, statementTimeoutMs: 5000 },
    t0: input.t0 === undefined ? '2026-11-21T10:00:03.000Z' : input.t0,
    events: [{ atMs: 0, name: 'stop-issued', source: 'local', detail: null }],
    warmup: { attempts: 60, p50Ms: 1.2, p99Ms: 3, successPerSec: 20 },
    floor: {
      selectP50Ms: 0.4,
      selectP99Ms: 1.1,
      pgbenchSelectP50Ms: 0.3,
      jitterP50Ms: 0.2,
      jitterP99Ms: 2,
      jitterMaxMs: 4,
    },
    figures: {
      // the error window is the server's and the pooler's errors: client timeouts are not in it
      timeToFirstErrorMs: failed > gaveUp ? 12 : null,
      errorWindowMs: failed > gaveUp ? 1400 : null,
      stallThresholdMs: 30,
      stallWindowMs: 0,
      maxLatencyMs: 25,
      recoveryMs: 1500,
      throughputDip: failed,
      recovered: true,
      reconnects: failed > 0 ? 2 : 0,
      readOnlyRefusals: 0,
      clientTimeouts: gaveUp,
      openAtEnd: 0,
      windowClosed: true,
      ...input.figures,
    },
    errors,
    writes: {
      acknowledged: 200 - failed,
      failed,
      unknown: 0,
      unknownCommitted: 0,
      unknownNotCommitted: 0,
      acknowledgedMissing: 0,
      duplicates: 0,
      reconciled: true,
      ...input.writes,
    },
    servers: ['127.0.0.1'],
    attempts: [
      [-100, 1.1, 'ok', '127.0.0.1'],
      [5, null, failed > 0 ? 'server-stopped' : 'ok', null],
    ],
  };
}
