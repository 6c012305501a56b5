/**
 * Two variants of one product side by side (issue 39, items 3, 4 and 6): a lab's `bouncer-default`
 * (PgBouncer's defaults) and `bouncer-fast-retry` (`server_login_retry: 2`), each its own local
 * pooler with its own targets, on one throwaway PostgreSQL, through the engine and the real probe.
 *
 * A fast PostgreSQL restart: at the defaults PgBouncer waits its 15 s server_login_retry after the
 * refused login before it tries the server again — its clients wait (or, with the probe's attempt
 * timeout, fail) about that long —, the tuned variant about 2 s, direct clients well under a second.
 * The window is sized from the targets' settings (lib/local/lab-poolers.ts sizeRecoveryWindows), so
 * the default wait is seen to end. A rolling restart then acts on each variant's own pooler, and
 * its events name which. Nothing acknowledged is lost anywhere.
 */
import { expect } from '@jest/globals';
import { systemClock } from '../../lib/engine/ports';
import { runSuite } from '../../lib/engine/run-suite';
import { disruptionProbeRunner } from '../../lib/exec/disruption-probe';
import { pgConnector } from '../../lib/exec/pg-probe';
import { findBinaries } from '../../lib/local/binaries';
import { localDisruptionWorld } from '../../lib/local/disruptions';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { RECOVERY_MARGIN_SEC, sizeRecoveryWindows } from '../../lib/local/lab-poolers';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import type { Suite } from '../../lib/suite/catalog';
import type { DisruptionResult } from '../../lib/suite/disruption';
import { expandSuite } from '../../lib/suite/expand';
import { LOCAL_DISRUPTIONS } from '../../lib/suite/experiments/disruptions';
import type { StepRecord } from '../../lib/suite/types';
import { pgdataTemplate } from '../helpers/pg-template';
import { pgbouncerModern } from '../helpers/pgbouncer-versions';
import { scratchDir } from '../helpers/scratch';

const FILE = 'test/integration/local-variants.test.ts';
const modern = pgbouncerModern(FILE);

let stack: LocalStack;

beforeAll(async () => {
  const base = findBinaries({ install: false });
  stack = await startLocalStack({
    install: false,
    reapOrphans: false,
    bins: { ...base, pgbouncer: modern.file, poolerVersion: modern.version },
    poolers: [
      { product: 'pgbouncer', processes: 1, instance: 'bouncer-default', settings: {} },
      {
        product: 'pgbouncer',
        processes: 1,
        instance: 'bouncer-fast-retry',
        settings: { server_login_retry: 2 },
      },
    ],
    dataTemplate: pgdataTemplate(),
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

function probeOf(r: StepRecord | undefined): DisruptionResult {
  const p = r?.probe;
  if (p?.kind !== 'disruption')
    throw new Error(`no disruption result in ${r?.stepId ?? 'a missing step'}: ${r?.note ?? ''}`);
  return p;
}

/** How long a row's clients could not write: from T0 to the end of its last error or stall, in ms. */
function outageMs(p: DisruptionResult): number {
  const f = p.figures;
  return Math.max(
    (f.timeToFirstErrorMs ?? 0) + (f.errorWindowMs ?? 0),
    f.stallWindowMs ?? 0,
    p.errors.length > 0 && f.errorWindowMs === null ? Number.POSITIVE_INFINITY : 0,
  );
}

test("a fast restart: the default PgBouncer waits ≈ 15 s, the tuned one ≈ 2 s, direct only the server's own outage; a rolling restart names each pooler", async () => {
  // GIVEN the two variants' targets, each with its own settings recorded
  const settingOf = (name: string) => stack.target(name).descriptor?.settings.effective?.server_login_retry;
  expect(settingOf('bouncer-default-transaction')).toEqual({ value: 15, source: 'default' });
  expect(settingOf('bouncer-fast-retry-transaction')).toEqual({ value: 2, source: 'lab' });
  const scenario = (name: string) => {
    const s = LOCAL_DISRUPTIONS.find((x) => x.name === name);
    if (s?.probe?.kind !== 'disruption') throw new Error(`no ${name}`);
    return { ...s, repetitions: 1, probe: { ...s.probe, warmupSec: 1 } };
  };
  // the restart's window sized from the settings (15 s + margin); the rolling restart keeps its own
  const restart = sizeRecoveryWindows(
    { name: 'x', description: 'x', scenarios: [scenario('disrupt-restart-fast')] },
    stack.descriptors,
  ).scenarios;
  expect(restart[0]?.probe?.kind === 'disruption' && restart[0].probe.recoverySec).toBe(
    15 + RECOVERY_MARGIN_SEC,
  );
  const suite: Suite = {
    name: 'disruption',
    description: 'test',
    scenarios: [...restart, scenario('disrupt-pooler-restart')],
  };
  const steps = expandSuite(
    suite,
    stack.targets.map((t) => ({
      ref: t.ref,
      ...(t.descriptor ? { descriptor: t.descriptor } : {}),
      maxConnections: stack.postgres.maxConnections,
      poolSize: t.descriptor?.capabilities.pooled ? (stack.poolerFor(t.ref)?.totalPoolSize() ?? null) : null,
    })),
  );
  // WHEN the engine runs them with the real probe and the real disruptions
  const result = await runSuite({
    runId: 'variants',
    suite,
    steps,
    targets: stack.targets,
    executor: stack.executor,
    pool: stack.pool,
    sink: new FileSystemSink(scratchDir('proxylab-variants-')),
    clock: systemClock,
    mode: 'local',
    environment: stack.environment,
    settings: stack.settings,
    infrastructure: stack.infrastructure,
    probes: {
      disruption: disruptionProbeRunner({ world: localDisruptionWorld(stack), connector: pgConnector }),
    },
  });
  const rec = (scenario: string, target: string, mode: 'persistent' | 'per-transaction') =>
    probeOf(
      result.records.find(
        (r) => r.scenario === scenario && r.target.name === target && r.params.connect === mode,
      ),
    );

  // THEN every step completed and nothing acknowledged was lost
  expect(result.manifest.status).toBe('completed');
  for (const r of result.records)
    expect({ step: r.stepId, status: r.status, lost: probeOf(r).writes.acknowledgedMissing }).toEqual({
      step: r.stepId,
      status: 'completed',
      lost: 0,
    });

  // a fast restart: each variant as its settings say; direct well under a second
  const outage = (target: string) =>
    Math.max(
      ...(['persistent', 'per-transaction'] as const).map((m) =>
        outageMs(rec('disrupt-restart-fast', target, m)),
      ),
    );
  const figures = {
    default: outage('bouncer-default-transaction'),
    tuned: outage('bouncer-fast-retry-transaction'),
    direct: outage('direct'),
  };
  // A pool waits server_login_retry only after a login to the server FAILED: when its first new
  // server connection after the shutdown comes after the server accepts again, it waits nothing
  // (CI saw the default pool recover in 0.89 s so). Whether it waited is read from what its clients
  // were told meanwhile — PgBouncer's "server login has been failing, try again later
  // (server_login_retry)" — and each pool is held to what its setting says for the case it was in.
  const waited = (target: string): boolean =>
    (['persistent', 'per-transaction'] as const).some((m) =>
      rec('disrupt-restart-fast', target, m).errors.some((e) =>
        /server login has been failing/.test(e.sample),
      ),
    );
  const serverUp = rec('disrupt-restart-fast', 'bouncer-fast-retry-transaction', 'persistent').events.find(
    (e) => e.name === 'server-up',
  )?.atMs;
  expect(serverUp).toBeDefined();
  const upMs = Math.max(serverUp ?? 0, figures.direct);
  // the default pool: its 15 s after the failed login, or (no failed login) the server's own outage
  if (waited('bouncer-default-transaction')) {
    expect(figures.default).toBeGreaterThanOrEqual(10_000);
    expect(figures.default).toBeLessThan((15 + RECOVERY_MARGIN_SEC) * 1000);
  } else expect(figures.default).toBeLessThanOrEqual(upMs + 1000);
  // the tuned pool: at most two 2-s retries (one login may fall just before the server accepts)
  // and a second's margin after the stack saw PostgreSQL accept again (its server-up event) — not a
  // fixed 5 s from T0, which loaded CI machines overran (5.8 s, 8.4 s); quiet, it is ≈ 2.1 s
  expect(figures.tuned).toBeLessThanOrEqual(
    upMs + (waited('bouncer-fast-retry-transaction') ? 2 * 2000 : 0) + 1000,
  );
  // direct sees the server's own outage: 0.1–0.5 s on a quiet machine, 1–1.6 s measured on a loaded
  // 2-core one (the restart itself is slower); whatever the load, far from the default pool's wait
  expect(figures.direct).toBeLessThan(3000);
  for (const target of ['bouncer-default-transaction', 'bouncer-fast-retry-transaction'])
    expect({
      target,
      recovered: rec('disrupt-restart-fast', target, 'persistent').figures.recovered,
    }).toEqual({
      target,
      recovered: true,
    });

  // a rolling restart: each variant's own pooler replaced, and its events say which
  const roll = rec('disrupt-pooler-restart', 'bouncer-fast-retry-transaction', 'persistent').events;
  for (const instance of ['bouncer-default', 'bouncer-fast-retry'])
    expect(roll.filter((e) => e.name === 'old-process-signalled').map((e) => e.detail)).toEqual(
      expect.arrayContaining([expect.stringContaining(`PgBouncer ${instance} ${modern.version}: pid `)]),
    );
  expect(stack.infrastructure.failure()).toBeNull();
}, 240_000);
