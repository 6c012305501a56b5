/**
 * Every local disruption, for real (restarts, kills, PAUSE/RESUME, a rolling restart, a promoted
 * standby), through the engine and the node-postgres probe, on a throwaway stack per PgBouncer
 * version the kit meets: Debian's 1.18 and the current one, ≥ 1.21, that
 * test/helpers/pgbouncer-versions.ts finds (what a rolling restart does follows its version: the
 * signal and, since 1.23, no client error). Each version's stack runs the `disruption`
 * suite's scenarios once (one repetition, short windows) in one test; the two run side by side.
 * Asserted: what each disruption really did (its events, in order), what direct clients saw, what
 * the pool's clients saw where the sources say (PAUSE: no error; a ≥ 1.23 rolling restart: no
 * error), that a client held through a fast restart waits rather than gives up (the client timeouts
 * are the scenario's, no shorter than its window: no `client-timeout`, the window closed), that no
 * verdict holds over a window that did not close, that nothing acknowledged was lost, and that the
 * stack is whole afterwards (the watch saw
 * no failure; PostgreSQL is the primary on its port again; PgBouncer points at it). The `planned`
 * suite's minor upgrade runs as its local stand-in: on the 1.18 stack a fast restart (no second
 * build), on the other a restart onto a second "build" of the same major — a wrapper that reports
 * another minor version and runs the stack's own postgres (no second minor build is installed here).
 */
import * as fs from 'node:fs';
import { expect } from '@jest/globals';
import { systemClock } from '../../lib/engine/ports';
import { runSuite } from '../../lib/engine/run-suite';
import { disruptionProbeRunner } from '../../lib/exec/disruption-probe';
import { pgConnector } from '../../lib/exec/pg-probe';
import { psqlQueryOne } from '../../lib/exec/psql';
import { findBinaries, findOtherMinorBuild } from '../../lib/local/binaries';
import {
  localDisruptionWorld,
  minorUpgradeStandIn,
  withLocalStandIns,
  type MinorBuildFinder,
} from '../../lib/local/disruptions';
import { getSuite } from '../../lib/suite/catalog';
import { FileSystemSink } from '../../lib/local/fs-sink';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import type { Suite } from '../../lib/suite/catalog';
import type { DisruptionResult } from '../../lib/suite/disruption';
import { expandSuite } from '../../lib/suite/expand';
import { LOCAL_DISRUPTIONS } from '../../lib/suite/experiments/disruptions';
import { PGBOUNCER_ROLLING_RESTART_SINCE } from '../../lib/products/pgbouncer/entry';
import { versionAtLeast } from '../../lib/products/version';
import type { StepRecord } from '../../lib/suite/types';
import { pgdataTemplate } from '../helpers/pg-template';
import { pgbouncer118, pgbouncerModern } from '../helpers/pgbouncer-versions';
import { scratchDir } from '../helpers/scratch';
import { listenerMigrates } from '../helpers/listener-migration';

const FILE = 'test/integration/local-disruptions.test.ts';

/** The current PgBouncer: its version names its test (both stacks start in the one beforeAll). */
const modern = pgbouncerModern(FILE);
const VERSIONS = ['1.18.0', modern.version] as const;

/** The local suite, one repetition, shorter windows (the immediate restart keeps room for crash recovery). */
const SUITE: Suite = {
  name: 'disruption',
  description: 'test',
  // the disruption under background load has its own test (local-disruption-load.test.ts)
  scenarios: [
    ...LOCAL_DISRUPTIONS.filter((s) => s.probe?.kind !== 'disruption' || s.probe.load === undefined),
    // the planned suite's minor upgrade, as `proxylab local` runs it (its title names the stand-in)
    ...withLocalStandIns(
      getSuite('planned'),
      minorUpgradeStandIn({ bindir: '', version: '15' }, () => null),
    ).scenarios,
  ].map((s) => ({
    ...s,
    repetitions: 1,
    probe:
      s.probe?.kind === 'disruption'
        ? {
            ...s.probe,
            warmupSec: 1,
            // crash recovery, and a pool's way back after a failover (server_login_retry 2 s), need longer
            recoverySec:
              s.probe.disruption.shutdown === 'immediate'
                ? 8
                : s.probe.disruption.action === 'primary-failover'
                  ? 6
                  : 4,
          }
        : s.probe,
  })),
};

const stacks = new Map<string, LocalStack>();

/**
 * A second "minor build" of the stack's major for the modern stack's stand-in: a wrapper whose
 * --version says another minor and which otherwise records its start and runs the stack's postgres
 * (the servers run as the `postgres` OS user: the directory is theirs to read and write).
 */
let wrapperDir = '';
const finders = new Map<string, MinorBuildFinder>();

/**
 * A rolling restart retires a listener; Linux resets what is still queued on it unless
 * net.ipv4.tcp_migrate_req is 1 (lib/local/pgbouncer-processes.ts reuseportCloseBehaviour). Where the tests may
 * (root), the integration run turns migration on once for every file and puts the value back after
 * the last (test/helpers/listener-migration.ts), so that "no client sees an error" is PgBouncer's
 * claim alone; elsewhere the kernel's resets are allowed, and only those.
 */
const migrating = listenerMigrates();

beforeAll(async () => {
  const base = findBinaries({ install: false });
  wrapperDir = scratchDir('proxylab-minor-build-');
  fs.chmodSync(wrapperDir, 0o777);
  const major = base.serverVersion.split('.')[0] ?? '';
  fs.writeFileSync(
    `${wrapperDir}/postgres`,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "postgres (PostgreSQL) ${major}.99"; exit 0; fi\necho $$ >> ${wrapperDir}/started\nexec ${base.postgres} "$@"\n`,
    { mode: 0o755 },
  );
  finders.set('1.18.0', () => null);
  finders.set(modern.version, (c) => findOtherMinorBuild(c, [wrapperDir]));
  const versions: Array<[string, string]> = [
    ['1.18.0', pgbouncer118(FILE)],
    [modern.version, modern.file],
  ];
  await Promise.all(
    versions.map(async ([version, bin]) => {
      const stack = await startLocalStack({
        install: false,
        reapOrphans: false,
        bins: { ...base, pgbouncer: bin, poolerVersion: version },
        // the lab's setting, visibly: a pool back 2 s after a failed login (PgBouncer's default is 15 s,
        // which would need 18 s windows: test/integration/local-variants.test.ts measures that one)
        poolers: [
          { product: 'pgbouncer', processes: 1, instance: 'pgbouncer', settings: { server_login_retry: 2 } },
        ],
        // a copy of the tests' data directory template, not an initdb per stack (the failover's
        // standby is still made by pg_basebackup from the running primary)
        dataTemplate: pgdataTemplate(),
      });
      stacks.set(version, stack);
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all([...stacks.values()].map((s) => s.stop()));
});

function probeOf(r: StepRecord | undefined): DisruptionResult {
  const p = r?.probe;
  if (p?.kind !== 'disruption')
    throw new Error(`no disruption result in ${r?.stepId ?? 'a missing step'}: ${r?.note ?? ''}`);
  return p;
}

test.concurrent.each(VERSIONS.map((v) => [v]))(
  'PgBouncer %s: every local disruption for real, nothing acknowledged lost, the stack whole afterwards',
  async (version) => {
    // GIVEN a stack of that version and the suite planned against it
    const stack = stacks.get(version) as LocalStack;
    const pid0 = stack.postgres.pid;
    const pgbPid0 = stack.pgbouncer.pid;
    const steps = expandSuite(
      SUITE,
      stack.targets.map((t) => ({
        ref: t.ref,
        ...(t.descriptor ? { descriptor: t.descriptor } : {}),
        maxConnections: stack.postgres.maxConnections,
        poolSize: t.descriptor?.capabilities.pooled ? stack.pgbouncer.totalPoolSize() : null,
      })),
    );
    // WHEN the engine runs it with the real probe and the real disruptions
    const result = await runSuite({
      runId: `disrupt-${version}`,
      suite: SUITE,
      steps,
      targets: stack.targets,
      executor: stack.executor,
      pool: stack.pool,
      sink: new FileSystemSink(scratchDir('proxylab-disruptions-')),
      clock: systemClock,
      mode: 'local',
      environment: stack.environment,
      settings: stack.settings,
      infrastructure: stack.infrastructure,
      probes: {
        disruption: disruptionProbeRunner({
          world: localDisruptionWorld(stack, finders.get(version)),
          connector: pgConnector,
        }),
      },
    });
    const rec = (
      scenario: string,
      target: string,
      mode: 'persistent' | 'per-transaction',
    ): DisruptionResult =>
      probeOf(
        result.records.find(
          (r) => r.scenario === scenario && r.target.name === target && r.params.connect === mode,
        ),
      );
    const events = (scenario: string): string[] =>
      rec(scenario, 'direct', 'persistent').events.map((e) => e.name);

    // THEN the run completed, every step measured, and nothing acknowledged was lost anywhere
    expect({ status: result.manifest.status, error: result.manifest.error }).toEqual({
      status: 'completed',
      error: undefined,
    });
    expect(result.records.every((r) => r.status === 'completed')).toBe(true);
    for (const r of result.records) {
      const w = probeOf(r).writes;
      expect({
        step: r.stepId,
        lost: w.acknowledgedMissing,
        reconciled: w.reconciled,
        acked: w.acknowledged > 0,
      }).toEqual({
        step: r.stepId,
        lost: 0,
        reconciled: true,
        acked: true,
      });
    }

    // a fast restart: stopped, down, started, up — and direct clients saw it
    expect(events('disrupt-restart-fast')).toEqual([
      'stop-issued',
      'server-down',
      'start-issued',
      'server-up',
    ]);
    // a persistent client's session ends with the server: it must see it. A client that connects
    // for each write sees only an outage longer than the gap between two writes (≈ 0.1 s here, so
    // the catalog judges it informational locally): whatever it saw, it got back and lost nothing.
    const persistent = rec('disrupt-restart-fast', 'direct', 'persistent');
    expect(persistent.errors.map((e) => e.class)).toEqual(
      expect.arrayContaining([expect.stringMatching(/server-stopped|connection-failed/)]),
    );
    for (const mode of ['persistent', 'per-transaction'] as const) {
      const direct = rec('disrupt-restart-fast', 'direct', mode);
      expect(direct.errors.every((e) => /server-stopped|connection-failed|backend-died/.test(e.class))).toBe(
        true,
      );
      expect(direct.figures.recovered).toBe(true);
      expect(direct.writes.acknowledgedMissing).toBe(0);
    }
    // the clients' own timeouts are the scenario's (no shorter than its window): through a fast
    // restart no client gave up — a client PgBouncer holds through server_login_retry (2 s here)
    // waits it out, a stall; what the pool answers instead is its own error (08P01 while the login
    // fails, 57P01 as the server stops), never a timeout — and every client was writing as usual
    // again before the window ended
    const fastSpec = SUITE.scenarios.find((s) => s.name === 'disrupt-restart-fast')?.probe;
    for (const target of ['direct', 'pgbouncer-transaction', 'pgbouncer-session'])
      for (const mode of ['persistent', 'per-transaction'] as const) {
        const r = rec('disrupt-restart-fast', target, mode);
        expect({
          target,
          mode,
          timeouts: r.clientTimeouts,
          gaveUp: r.figures.clientTimeouts,
          open: r.figures.openAtEnd,
          closed: r.figures.windowClosed,
          classes: r.errors.filter((e) => !/server-stopped|connection-failed|backend-died/.test(e.class)),
        }).toEqual({
          target,
          mode,
          timeouts: fastSpec?.kind === 'disruption' ? fastSpec.clientTimeouts : 'no spec',
          gaveUp: 0,
          open: 0,
          closed: true,
          classes: [],
        });
      }
    // "without an error" never holds over a window that did not close, and every such step says so
    // (issue 39: a pre-1.23 rolling restart leaves errors to the window's end; its rule is informational)
    for (const r of result.records)
      if (probeOf(r).figures.windowClosed === false)
        expect({
          step: r.stepId,
          heldWithoutAnError: r.verdict.expected.startsWith('succeeds') && r.verdict.held === true,
          says: /not over/.test(r.verdict.observed),
        }).toEqual({ step: r.stepId, heldWithoutAnError: false, says: true });
    // an immediate restart: crash recovery, then up again
    expect(events('disrupt-restart-immediate')).toEqual([
      'stop-issued',
      'server-down',
      'start-issued',
      'server-up',
    ]);
    expect(
      rec('disrupt-restart-immediate', 'direct', 'persistent').figures.timeToFirstErrorMs,
    ).not.toBeNull();
    expect(stack.postgres.pid).not.toBe(pid0);

    // pg_terminate_backend: a direct persistent client loses its session with 57P01
    expect(rec('disrupt-terminate', 'direct', 'persistent').errors.map((e) => e.sqlstate)).toContain('57P01');

    // PAUSE, restart, RESUME: the transaction pool's clients see no error; direct ones do
    expect(events('disrupt-pause')).toEqual([
      'pause-issued',
      'paused',
      'stop-issued',
      'server-down',
      'start-issued',
      'server-up',
      'resume-issued',
      'resumed',
    ]);
    for (const mode of ['persistent', 'per-transaction'] as const)
      expect(rec('disrupt-pause', 'pgbouncer-transaction', mode).errors).toEqual([]);
    // the control: direct's persistent session ends with the restart (a per-write client may miss it)
    expect(rec('disrupt-pause', 'direct', 'persistent').errors.length).toBeGreaterThan(0);

    // a rolling restart: the old process retired with the signal its version documents: since 1.23
    // SIGTERM's super-safe shutdown (stops listening), before it SIGINT (changelog 1.23.0, #902)
    const rolling = versionAtLeast(version, PGBOUNCER_ROLLING_RESTART_SINCE);
    const roll = rec('disrupt-pooler-restart', 'pgbouncer-transaction', 'per-transaction');
    const signalled = roll.events.find((e) => e.name === 'old-process-signalled')?.detail ?? '';
    expect(signalled).toMatch(rolling ? /sent SIGTERM\b/ : /sent SIGINT\b/);
    expect(rec('disrupt-pooler-restart', 'direct', 'persistent').errors).toEqual([]);
    expect(signalled).toContain(migrating ? 'net.ipv4.tcp_migrate_req = 1' : 'kernel:');
    if (rolling) {
      // since 1.23 the old process stops listening and keeps its clients: no client sees an error —
      // with the kernel moving the retired listener's queued connections (else it may reset one
      // that connected at that instant: only a per-transaction client, only a reset)
      for (const target of ['pgbouncer-transaction', 'pgbouncer-session'])
        for (const mode of ['persistent', 'per-transaction'] as const) {
          const errors = rec('disrupt-pooler-restart', target, mode).errors;
          const kernelResets =
            !migrating && mode === 'per-transaction' ? errors.filter((e) => e.code === 'ECONNRESET') : [];
          expect({ target, mode, errors: errors.filter((e) => !kernelResets.includes(e)) }).toEqual({
            target,
            mode,
            errors: [],
          });
        }
    }
    // and the pooler is back on its own files: its admin console answers where it did
    expect(stack.pgbouncer.pid).not.toBe(pgbPid0);
    expect((await psqlQueryOne(stack.pgbouncer.admin(), 'SHOW VERSION')).length).toBe(1);

    // a failover: stopped, promoted, re-pointed; direct clients reached the new primary (read-only meanwhile)
    expect(events('disrupt-failover')).toEqual([
      'stop-issued',
      'server-down',
      'promote-issued',
      'promote-finished',
      'pooler-repointed',
    ]);
    const failover = rec('disrupt-failover', 'direct', 'persistent');
    expect(failover.errors.length).toBeGreaterThan(0);
    expect(failover.figures.recovered).toBe(true);
    for (const target of ['pgbouncer-transaction', 'pgbouncer-session'])
      expect(rec('disrupt-failover', target, 'persistent').figures.recovered).toBe(true);

    // the minor upgrade's stand-in: named as such first, then a fast stop and a start — of the
    // other build where one was found (its start recorded), put back on the stack's own afterwards
    const minor = rec('minor-upgrade', 'direct', 'persistent');
    expect(minor.events.map((e) => e.name)).toEqual([
      'stand-in',
      'stop-issued',
      'server-down',
      'start-issued',
      'server-up',
    ]);
    const words = `${minor.events[0]?.name ?? ''}: ${minor.events[0]?.detail ?? ''}`;
    const started = fs.existsSync(`${wrapperDir}/started`)
      ? fs.readFileSync(`${wrapperDir}/started`, 'utf8').trim().split('\n')
      : [];
    if (version === '1.18.0') {
      expect(words).toMatch(/^stand-in: fast restart \(no second PostgreSQL \d+ minor build installed;/);
      // the moments after the stand-in's words say what was done: a restart, not an upgrade
      expect(
        minor.events
          .slice(1)
          .map((e) => `${e.name} ${e.detail ?? ''}`)
          .join('; '),
      ).not.toMatch(/upgrade/i);
    } else {
      expect(words).toMatch(
        /^stand-in: fast restart onto another installed PostgreSQL \d+ minor build, [\d.]+ → \d+\.99 /,
      );
      expect(minor.events[3]?.detail).toContain(`from ${wrapperDir} on the same data directory`);
      expect(started.length).toBe(1);
      expect(stack.postgres.pid).not.toBe(Number(started[0]));
    }
    expect(rec('minor-upgrade', 'direct', 'persistent').errors.length).toBeGreaterThan(0);

    // the stack is whole: no failure seen, PostgreSQL the primary on its port, PgBouncer pointing at it
    expect(stack.infrastructure.failure()).toBeNull();
    const [row] = await psqlQueryOne(stack.postgres.superuserTarget(), 'SELECT pg_is_in_recovery() AS r');
    expect(row?.r).toBe('f');
    expect(stack.pgbouncer.serverPort()).toBe(stack.postgres.port);
  },
  240_000,
);
