/**
 * The session-state matrix as data: every expectation is decided from the target's descriptor
 * (capabilities, version, settings), the observations of a probe classify into one outcome, a leak
 * that could not be observed is never called broken, and a pin is read only from minutes that lie
 * wholly inside the probe's window.
 */
import { expect } from '@jest/globals';
import { targetDescriptorSchema } from '../../../lib/results/schemas';
import { getSuite } from '../../../lib/suite/catalog';
import { expandSuite } from '../../../lib/suite/expand';
import {
  classifySession,
  describeSessionExpectation,
  expectSession,
  judgeSession,
  pinnedIn,
  SESSION_FEATURE_INFO,
  SESSION_FEATURES,
  SESSION_SOURCES,
  type SessionFeature,
  type SessionOutcome,
  type SessionFeatureResult,
  type SessionProbeStep,
} from '../../../lib/suite/session-state';
import {
  describeTarget,
  fallbackDescriptor,
  sessionHandling,
  withPreparedStatements,
  type TargetDescriptor,
} from '../../../lib/suite/targets';

const direct = describeTarget({ kind: 'direct', name: 'direct' }, { version: '15.18' });
const tx118 = describeTarget(
  { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
  { version: '1.18.0', maxPreparedStatements: null },
);
const tx125 = describeTarget(
  { kind: 'pgbouncer-transaction', name: 'pgbouncer-transaction' },
  { version: '1.25.2', maxPreparedStatements: 200 },
);
const session118 = describeTarget(
  { kind: 'pgbouncer-session', name: 'pgbouncer-session' },
  { version: '1.18.0', maxPreparedStatements: null },
);
const proxy = describeTarget({ kind: 'rds-proxy', name: 'pool100' }, { version: null });

describe('session handling is a capability of the descriptor', () => {
  test.each([
    ['direct', direct, { resetsOnRelease: false, pinsSessions: false, tracksIntervalStyle: false }],
    [
      'PgBouncer 1.18 transaction pool',
      tx118,
      { resetsOnRelease: false, pinsSessions: false, tracksIntervalStyle: false },
    ],
    [
      'PgBouncer 1.25.2 transaction pool',
      tx125,
      { resetsOnRelease: false, pinsSessions: false, tracksIntervalStyle: true },
    ],
    [
      'PgBouncer session pool',
      session118,
      { resetsOnRelease: true, pinsSessions: false, tracksIntervalStyle: false },
    ],
    ['RDS Proxy', proxy, { resetsOnRelease: false, pinsSessions: true, tracksIntervalStyle: false }],
  ])('%s', (_name, d, want) => {
    // GIVEN a descriptor WHEN its session handling is read THEN it follows product, mode and version
    const s = sessionHandling(d);
    expect({
      resetsOnRelease: s.resetsOnRelease,
      pinsSessions: s.pinsSessions,
      tracksIntervalStyle: s.trackedParameters.includes('intervalstyle'),
    }).toEqual(want);
  });

  test('PgBouncer always tracks application_name and TimeZone, never statement_timeout or search_path', () => {
    for (const d of [tx118, tx125]) {
      expect(sessionHandling(d).trackedParameters).toEqual(
        expect.arrayContaining(['application_name', 'timezone']),
      );
      expect(sessionHandling(d).trackedParameters).not.toContain('statement_timeout');
      expect(sessionHandling(d).trackedParameters).not.toContain('search_path');
    }
  });

  test('a plan stored before the field existed reads it from the kind and version, and its schema accepts both', () => {
    // GIVEN a stored descriptor without `session`
    const { session: _s, ...old } = tx125.capabilities;
    const stored: TargetDescriptor = { ...tx125, capabilities: old };
    // THEN it still parses and reads as the kind says
    expect(targetDescriptorSchema.safeParse(stored).success).toBe(true);
    expect(targetDescriptorSchema.safeParse(tx125).success).toBe(true);
    expect(sessionHandling(stored)).toEqual(sessionHandling(tx125));
    expect(
      sessionHandling(fallbackDescriptor({ kind: 'pgbouncer-transaction', name: 'x' })).trackedParameters,
    ).not.toContain('intervalstyle');
  });
});

/** The expected outcome of every feature on every kind of target, as the sources say. */
const EXPECTED: ReadonlyArray<
  [SessionFeature, SessionOutcome[], SessionOutcome[], SessionOutcome[], SessionOutcome[], boolean | null]
> = [
  // feature, direct, tx 1.18, tx 1.25.2, session pool, RDS Proxy pins
  ['set-session', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['set-tracked', ['works'], ['leaks'], ['works'], ['works'], true],
  ['set-local', ['works'], ['works'], ['works'], ['works'], true],
  ['search-path', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['set-role', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['advisory-lock', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['advisory-xact-lock', ['works'], ['works'], ['works'], ['works'], false],
  ['temp-table', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['temp-table-on-commit-drop', ['works'], ['works'], ['works'], ['works'], true],
  ['listen-notify', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['protocol-prepared', ['works'], ['errors'], ['works'], ['works'], null],
  ['sql-prepare', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['with-hold-cursor', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['long-statement', ['works'], ['works'], ['works'], ['works'], true],
  ['discard-all', ['works'], ['leaks'], ['leaks'], ['works'], true],
  ['temp-sequence-nextval', ['works'], ['leaks'], ['leaks'], ['works'], true],
];

describe('expectSession', () => {
  test('the table covers every feature once', () => {
    expect(EXPECTED.map((r) => r[0]).sort()).toEqual([...SESSION_FEATURES].sort());
  });

  test.each(EXPECTED)('%s', (feature, onDirect, on118, on125, onSession, pins) => {
    expect(expectSession(feature, direct).outcomes).toEqual(onDirect);
    expect(expectSession(feature, tx118).outcomes).toEqual(on118);
    expect(expectSession(feature, tx125).outcomes).toEqual(on125);
    expect(expectSession(feature, session118).outcomes).toEqual(onSession);
    const p = expectSession(feature, proxy);
    expect(p.pins).toBe(pins);
    // RDS Proxy: what pins works (the client keeps its connection); the undocumented cell is measured only
    expect(p.outcomes).toEqual(pins === null ? [] : ['works']);
  });

  test('every expectation names sources that exist, and says why', () => {
    for (const feature of SESSION_FEATURES)
      for (const d of [direct, tx118, tx125, session118, proxy]) {
        const e = expectSession(feature, d);
        expect(e.why.length).toBeGreaterThan(20);
        for (const s of e.sources) expect(SESSION_SOURCES[s].url).toMatch(/^https:\/\//);
      }
  });

  test('prepared statements follow max_prepared_statements, not the version alone', () => {
    // GIVEN PgBouncer 1.25.2 with the support switched off
    const off = withPreparedStatements(tx125, 'off').descriptor;
    // THEN its protocol-level cell expects the collision, with the SQLSTATEs that count
    const e = expectSession('protocol-prepared', off);
    expect(e.outcomes).toEqual(['errors']);
    expect(describeSessionExpectation(e)).toBe('errors (42P05 | 26000)');
    expect(e.why).toContain('max_prepared_statements = 0');
  });
});

const doormanTx = describeTarget(
  { kind: 'pgdoorman-transaction', name: 'pgdoorman-transaction' },
  { version: '3.10.7', maxPreparedStatements: 8192 },
);
const doormanSession = describeTarget(
  { kind: 'pgdoorman-session', name: 'pgdoorman-session' },
  { version: '3.10.7', maxPreparedStatements: 8192 },
);

/**
 * PgDoorman: its cleanup_server_connections (RESET ROLE / RESET ALL / DEALLOCATE ALL / CLOSE ALL) makes
 * SET-like state lost, not leaked, through its transaction pool; what it does not clean still leaks. The
 * transaction column is what `proxylab local --suite session-state --poolers pgdoorman` measured on
 * 3.10.7 (every cell held).
 */
const DOORMAN: ReadonlyArray<[SessionFeature, SessionOutcome[], SessionOutcome[]]> = [
  // feature, transaction pool, session pool
  ['set-session', ['lost'], ['works']],
  ['set-tracked', ['lost'], ['works']],
  ['set-local', ['works'], ['works']],
  ['search-path', ['lost'], ['works']],
  ['set-role', ['lost'], ['works']],
  ['advisory-lock', ['leaks'], ['leaks']],
  ['advisory-xact-lock', ['works'], ['works']],
  ['temp-table', ['leaks'], ['leaks']],
  ['temp-table-on-commit-drop', ['works'], ['works']],
  ['listen-notify', ['leaks'], ['leaks']],
  ['protocol-prepared', ['works'], ['works']],
  ['sql-prepare', ['lost', 'leaks'], ['works']],
  ['with-hold-cursor', ['lost'], ['works']],
  ['long-statement', ['works'], ['works']],
  ['discard-all', ['leaks'], ['works']],
  ['temp-sequence-nextval', ['leaks'], ['leaks']],
];

describe('expectSession on PgDoorman (cleanup_server_connections)', () => {
  test('its descriptors say what it cleans, and track no parameter', () => {
    for (const d of [doormanTx, doormanSession]) {
      expect(sessionHandling(d)).toEqual({
        resetsOnRelease: false,
        trackedParameters: [],
        pinsSessions: false,
        cleansOnRelease: ['role', 'settings', 'prepared', 'cursors'],
      });
      expect(targetDescriptorSchema.safeParse(d).success).toBe(true);
    }
    // a cleanup the schema does not know is refused
    const bad = {
      ...doormanTx,
      capabilities: {
        ...doormanTx.capabilities,
        session: { ...sessionHandling(doormanTx), cleansOnRelease: ['temp'] },
      },
    };
    expect(targetDescriptorSchema.safeParse(bad).success).toBe(false);
  });

  test('the table covers every feature once', () => {
    expect(DOORMAN.map((r) => r[0]).sort()).toEqual([...SESSION_FEATURES].sort());
  });

  test.each(DOORMAN)('%s', (feature, onTx, onSession) => {
    const tx = expectSession(feature, doormanTx);
    expect(tx.outcomes).toEqual(onTx);
    expect(expectSession(feature, doormanSession).outcomes).toEqual(onSession);
    // a cleaned cell names PgDoorman's setting as its source
    if (onTx.includes('lost')) expect(tx.sources).toEqual(['pgdoorman-cleanup']);
  });

  test('without the cleanup (a PgBouncer), the same features leak: the expectation follows the capability', () => {
    for (const f of ['set-session', 'search-path', 'set-role', 'with-hold-cursor'] as const)
      expect(expectSession(f, tx125).outcomes).toEqual(['leaks']);
  });
});

function step(p: Partial<SessionProbeStep> & Pick<SessionProbeStep, 'client'>): SessionProbeStep {
  return {
    kind: 'check',
    role: null,
    sql: 'SELECT …',
    backendPid: null,
    value: null,
    present: null,
    sqlstate: null,
    error: null,
    ms: 1,
    ...p,
  };
}

function result(steps: SessionProbeStep[]): SessionFeatureResult {
  return {
    feature: 'set-session',
    expected: expectSession('set-session', tx118),
    ...classifySession(steps),
    steps,
    pinWatch: null,
  };
}

describe('classifySession', () => {
  test.each<[string, SessionProbeStep[], SessionOutcome, boolean | null]>([
    [
      'A keeps its state, B never sees it',
      [
        step({ client: 'B', role: 'other', present: false, backendPid: 2 }),
        step({ client: 'A', role: 'own', present: true, backendPid: 1 }),
      ],
      'works',
      false,
    ],
    [
      'B sees A’s state on A’s server process',
      [
        step({ client: 'A', role: 'own', present: true, backendPid: 7 }),
        step({ client: 'B', role: 'other', present: true, backendPid: 7 }),
      ],
      'leaks',
      true,
    ],
    [
      'state outlives its transaction',
      [step({ client: 'A', role: 'scope', present: true, backendPid: 7 })],
      'leaks',
      null,
    ],
    [
      'A’s DISCARD ALL reached B’s state',
      [
        step({ client: 'B', role: 'victim', present: false, backendPid: 7 }),
        step({ client: 'A', role: 'own', present: true, backendPid: 7 }),
      ],
      'leaks',
      true,
    ],
    [
      'A does not find its own state',
      [step({ client: 'A', role: 'own', present: false, backendPid: 1 })],
      'lost',
      null,
    ],
    [
      'a statement fails with an SQLSTATE: errors, whatever the checks said',
      [
        step({ client: 'B', role: 'other', present: true, backendPid: 7 }),
        step({
          client: 'B',
          kind: 'apply-prepared',
          sqlstate: '42P05',
          error: 'prepared statement "x" already exists',
        }),
      ],
      'errors',
      null,
    ],
  ])('%s', (_name, steps, outcome, shared) => {
    const c = classifySession(steps);
    expect(c.outcome).toBe(outcome);
    expect(c.shared).toBe(shared);
  });

  test('the first failed statement is the error, with its SQLSTATE', () => {
    const c = classifySession([
      step({ client: 'A', kind: 'apply', sqlstate: '42501', error: 'permission denied to set role' }),
      step({ client: 'B', kind: 'apply', sqlstate: '42P05', error: 'later' }),
    ]);
    expect(c.error).toEqual({
      client: 'A',
      kind: 'apply',
      sqlstate: '42501',
      message: 'permission denied to set role',
    });
  });
});

describe('judgeSession', () => {
  const leaked = result([
    step({ client: 'A', role: 'own', present: true, backendPid: 7 }),
    step({ client: 'B', role: 'other', present: true, backendPid: 7, value: '41s' }),
  ]);
  const isolated = result([
    step({ client: 'A', role: 'own', present: true, backendPid: 7 }),
    step({ client: 'B', role: 'other', present: false, backendPid: 8 }),
  ]);

  test('an expected leak that happened holds, and says where', () => {
    const v = judgeSession(expectSession('set-session', tx118), leaked);
    expect(v.held).toBe(true);
    expect(v.observed).toContain('server process 7');
    expect(v.expected).toMatch(/^leaks — /);
  });

  test('an expected leak on clients that never shared a server connection is not judged', () => {
    const v = judgeSession(expectSession('set-session', tx118), isolated);
    expect(v.held).toBeNull();
    expect(v.observed).toContain('could not be observed');
  });

  test('a leak where the pooler should keep state per client breaks the expectation', () => {
    expect(judgeSession(expectSession('set-tracked', tx125), leaked).held).toBe(false);
  });

  test('errors hold only with one of the listed SQLSTATEs', () => {
    const e = expectSession('protocol-prepared', tx118);
    const with42P05 = result([
      step({ client: 'B', kind: 'apply-prepared', sqlstate: '42P05', error: 'exists' }),
    ]);
    const with42501 = result([
      step({ client: 'B', kind: 'apply-prepared', sqlstate: '42501', error: 'denied' }),
    ]);
    expect(judgeSession(e, with42P05).held).toBe(true);
    expect(judgeSession(e, with42501).held).toBe(false);
  });

  test('a measured-only cell is informational', () => {
    expect(judgeSession(expectSession('protocol-prepared', proxy), isolated).held).toBeNull();
  });
});

describe('pinnedIn', () => {
  const window = { start: '2026-11-26T10:00:40Z', end: '2026-11-26T10:02:03Z' };
  test.each<[string, Array<[string, number]>, boolean | null]>([
    ['a pinned connection in the whole minute inside the window', [['2026-11-26T10:01:00Z', 1]], true],
    ['zero in the whole minute inside the window', [['2026-11-26T10:01:00Z', 0]], false],
    // the minute that started before the window may hold a neighbouring step's pin
    [
      'only minutes that stick out of the window',
      [
        ['2026-11-26T10:00:00Z', 3],
        ['2026-11-26T10:02:00Z', 2],
      ],
      null,
    ],
    ['no datapoints: unknown, never 0', [], null],
  ])('%s', (_name, points, pinned) => {
    expect(pinnedIn(points, window).pinned).toBe(pinned);
  });
});

describe('the programs', () => {
  test('every feature has a check of its own state, and every B step comes with a reason', () => {
    for (const f of SESSION_FEATURES) {
      const info = SESSION_FEATURE_INFO[f];
      expect(info.steps.some((s) => 'role' in s && s.role === 'own')).toBe(true);
      expect(info.rdsProxy.condition.length).toBeGreaterThan(10);
    }
  });

  test('the long statement is above RDS Proxy’s 16 KB', () => {
    const s = SESSION_FEATURE_INFO['long-statement'].steps[0];
    expect(s && s.kind === 'check' ? s.sql.length : 0).toBeGreaterThan(16 * 1024);
  });
});

describe('planning the session-state probe on a pool this run cannot narrow', () => {
  const at = (descriptor: TargetDescriptor) => ({
    ref: { kind: descriptor.kind, name: descriptor.name },
    descriptor,
    maxConnections: 40,
    poolSize: descriptor.capabilities.pooled ? 10 : null,
  });
  // PgDoorman on a pooler host: the runners cannot rewrite its file, so its pool is fixed
  const fixedDoorman = describeTarget(
    { kind: 'pgdoorman-transaction', name: 'doorman-transaction' },
    {
      version: '3.10.7',
      maxPreparedStatements: 8192,
      poolResizeUnavailable: 'PgDoorman on a pooler host: the runners cannot rewrite its file',
    },
  );

  test.each<[string, TargetDescriptor, RegExp | null]>([
    [
      'PgDoorman with a fixed pool: not available, with the reason',
      fixedDoorman,
      /^the session-state probe narrows the pool to one server connection, and this run cannot resize it \(PgDoorman on a pooler host: the runners cannot rewrite its file\)$/,
    ],
    ['PgDoorman resizable (local): planned', doormanTx, null],
    ['PgBouncer: planned', tx125, null],
    ['RDS Proxy (observed, never narrowed): planned', proxy, null],
    ['direct: planned', direct, null],
  ])('%s', (_what, descriptor, reason) => {
    // WHEN the session-state suite is expanded on that target
    const steps = expandSuite(getSuite('session-state'), [at(descriptor)]);
    // THEN one step, unavailable only where the pool cannot be narrowed
    expect(steps).toHaveLength(1);
    const unavailable = steps[0]?.unavailable ?? null;
    if (reason === null) expect(unavailable).toBeNull();
    else expect(unavailable).toMatch(reason);
  });
});
