/**
 * A disruption under background load, for real (issue 42 item 4): the catalog's
 * `disrupt-restart-under-load` (a fast PostgreSQL restart under pgbench's tpcb-like at 4 clients per
 * target), one repetition, through the engine, the node-postgres probe and the stack's own pgbench,
 * direct and through PgBouncer's transaction pool. Asserted: pgbench's per-second series sits on the
 * probes' timeline (seconds before and after T0), the load's end is honest (stopped when the window
 * closed, or its clients aborted by the restart — never a failure), the restart reached the load
 * (fewer transactions in the second of the restart than before it, or clients aborted), the result
 * passes the schema it is read with, and the probes lost no acknowledged write.
 */
import { expect } from '@jest/globals';
import { systemClock } from '../../lib/engine/ports';
import { runSuite } from '../../lib/engine/run-suite';
import { disruptionProbeRunner } from '../../lib/exec/disruption-probe';
import { pgConnector } from '../../lib/exec/pg-probe';
import { localDisruptionWorld } from '../../lib/local/disruptions';
import * as fs from 'node:fs';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { writeReport } from '../../lib/report';
import { disruptionResultSchema } from '../../lib/results/probe-schemas';
import type { Suite } from '../../lib/suite/catalog';
import type { DisruptionResult } from '../../lib/suite/disruption';
import { expandSuite } from '../../lib/suite/expand';
import { LOCAL_DISRUPTIONS } from '../../lib/suite/experiments/disruptions';
import { startLocalStack, type LocalStack } from '../helpers/local-stack';
import { scratchDir } from '../helpers/scratch';

const SCENARIO = LOCAL_DISRUPTIONS.find((s) => s.name === 'disrupt-restart-under-load');

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    // a pool back 2 s after a failed login (as test/integration/local-disruptions.test.ts): short windows suffice
    poolers: [
      { product: 'pgbouncer', processes: 1, instance: 'pgbouncer', settings: { server_login_retry: 2 } },
    ],
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test('a fast restart under tpcb-like: pgbench per second beside the probes, 0 acknowledged writes lost', async () => {
  // GIVEN the catalog's scenario, one repetition, its load as the catalog gives it
  if (SCENARIO?.probe?.kind !== 'disruption' || SCENARIO.probe.load === undefined)
    throw new Error('the catalog has no disrupt-restart-under-load with a load');
  const probe = SCENARIO.probe;
  const suite: Suite = {
    name: 'disruption',
    description: 'test',
    scenarios: [{ ...SCENARIO, repetitions: 1, probe: { ...probe, warmupSec: 2, recoverySec: 5 } }],
  };
  const steps = expandSuite(
    suite,
    stack.targets.map((t) => ({
      ref: t.ref,
      ...(t.descriptor ? { descriptor: t.descriptor } : {}),
      maxConnections: stack.postgres.maxConnections,
      poolSize: t.descriptor?.capabilities.pooled ? stack.pgbouncer.totalPoolSize() : null,
    })),
  );

  // WHEN the engine runs it with the real probe, the real restart and the stack's pgbench
  const out = scratchDir('proxylab-disruption-load-');
  const result = await runSuite({
    runId: 'disrupt-load',
    suite,
    steps,
    targets: stack.targets,
    executor: stack.executor,
    pool: stack.pool,
    sink: new FileSystemSink(out),
    clock: systemClock,
    mode: 'local',
    environment: stack.environment,
    settings: stack.settings,
    infrastructure: stack.infrastructure,
    probes: {
      disruption: disruptionProbeRunner({
        world: localDisruptionWorld(stack),
        connector: pgConnector,
        pgbench: stack.executor,
      }),
    },
  });

  // THEN the run completed, and every step (2 targets × 2 modes) carries the load of its target
  expect({ status: result.manifest.status, error: result.manifest.error }).toEqual({
    status: 'completed',
    error: undefined,
  });
  expect(result.records.map((r) => `${r.target.name}/${r.params.connect}`).sort()).toEqual([
    'direct/per-transaction',
    'direct/persistent',
    'pgbouncer-transaction/per-transaction',
    'pgbouncer-transaction/persistent',
  ]);
  for (const r of result.records) {
    const p = disruptionResultSchema.parse(r.probe) as DisruptionResult;
    const load = p.load;
    if (load === undefined) throw new Error(`${r.stepId}: no load result`);
    const before = load.series.filter(([at]) => at <= 0);
    const after = load.series.filter(([at]) => at > 0);
    expect({
      step: r.stepId,
      status: r.status,
      lost: p.writes.acknowledgedMissing,
      reconciled: p.writes.reconciled,
      probesWrote: p.writes.acknowledged > 0,
      load: `${load.scenario}×${load.clients}`,
      honestEnd: ['window-closed', 'clients-aborted'].includes(load.endState),
      note: load.note,
      // pgbench's seconds on the probes' clock: the warm-up (2 s) and into the window
      secondsBeforeT0: before.length >= 1,
      // pgbench ends when every client aborted (a direct session ends with the server): then no
      // second after T0, and the aborted clients say why
      secondsAfterT0:
        after.length >= 1 || (load.endState === 'clients-aborted' && (load.abortedClients ?? 0) > 0),
      loadBeforeT0: (load.tps.before ?? 0) > 0,
      withinWindow: load.series.every(([at]) => at > -3000 && at < 7000),
    }).toEqual({
      step: r.stepId,
      status: 'completed',
      lost: 0,
      reconciled: true,
      probesWrote: true,
      load: 'tpcb-like×4',
      honestEnd: true,
      note: null,
      secondsBeforeT0: true,
      secondsAfterT0: true,
      loadBeforeT0: true,
      withinWindow: true,
    });
  }
  // the restart reached the direct load: its sessions ended (pgbench aborted clients), or at least
  // one second after T0 completed fewer transactions than the warm-up's mean
  const direct = result.records.find((r) => r.target.name === 'direct')?.probe as DisruptionResult;
  const dl = direct.load;
  expect((dl?.abortedClients ?? 0) > 0 || (dl?.tps.min ?? Infinity) < (dl?.tps.before ?? 0)).toBe(true);
  // the stack is whole afterwards
  expect(stack.infrastructure.failure()).toBeNull();

  // AND the report of the run draws the load under the probes, and the downtime table sits beside summary.md
  const report = writeReport(out);
  expect(report.downtimePaths.map((p) => p.split('/').pop())).toEqual(['downtime.md', 'downtime.csv']);
  expect(fs.readFileSync(report.htmlPath, 'utf8')).toContain('direct · pgbench tps');
  expect(fs.readFileSync(report.mdPath, 'utf8')).toMatch(
    /background load through direct: tpcb-like × 4 clients: \d+ tps before/,
  );
  expect(fs.readFileSync(report.downtimePaths[0] ?? '', 'utf8')).toMatch(
    /\| disrupt-restart-under-load \| postgres-restart \(fast\): a PostgreSQL restart \| direct \|/,
  );
}, 90_000);
