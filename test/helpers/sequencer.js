/**
 * Jest test sequencer (jest.config.js `testSequencer`): the longest test files start first, so the
 * workers end together instead of one running a long integration file alone at the end.
 *
 * Jest's own sequencer orders by the durations of the last run in its cache and, without one, by
 * file size. A fresh clone (CI, `npm test` in a new checkout) has no cache, and file size says
 * little here: test/integration/local-server-stop.test.ts is a fifth the size of some unit files
 * and runs ~20 × longer. So a file with no cached duration takes its duration from SLOW_FILES
 * below (seconds alone on 2 cores, measured with `npx jest --maxWorkers=1 FILE`); a file in
 * neither comes after those, by size as before. Stale figures only change the order, never a
 * result.
 */
'use strict';
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/** Seconds each file took alone (2 cores, 2026-11-25 to 11-27); the rest take under 10 s. */
const SLOW_FILES = {
  'test/integration/local-server-stop.test.ts': 52,
  'test/integration/local-lab.test.ts': 16,
  'test/integration/local-hung.test.ts': 53,
  'test/integration/local-disruptions.test.ts': 50,
  'test/integration/cloud-runner.test.ts': 41,
  'test/integration/cloud-disruption.test.ts': 21,
  'test/integration/local-infra-failure.test.ts': 27,
  'test/integration/local-two-runs.test.ts': 22,
  'test/integration/local-smoke.test.ts': 50,
  'test/integration/local-pgdoorman.test.ts': 30,
  'test/integration/doctor-moto.test.ts': 14,
  'test/cdk/labs.test.ts': 47,
  'test/integration/local-signals.test.ts': 17,
  'test/integration/cloud-operator-cli.test.ts': 30,
  'test/integration/cloud-spot.test.ts': 19,
  'test/integration/cloud-runner-poolers.test.ts': 17,
  'test/integration/cloud-run-lab.test.ts': 14,
  'test/integration/local-reap.test.ts': 15,
  'test/integration/local-stack.test.ts': 15,
  'test/integration/session-state.test.ts': 15,
  'test/integration/pooler-bootstrap.test.ts': 13,
  'test/integration/status-fetch-moto.test.ts': 15,
  'test/integration/collect-moto.test.ts': 16,
  'test/integration/config-cli.test.ts': 15,
  'test/cdk/engine-versions.test.ts': 19,
  'test/integration/cost-extend-cli.test.ts': 12,
};

const ROOT = path.resolve(__dirname, '..', '..');

/** The cached duration (ms) of the last run, else the one in SLOW_FILES, else null. */
function expectedMs(sequencer, test) {
  const cached = sequencer.time(test);
  if (cached != null) return cached;
  const hint = SLOW_FILES[path.relative(ROOT, test.path).split(path.sep).join('/')];
  return hint === undefined ? null : hint * 1000;
}

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const size = (t) => t.context.hasteFS.getSize(t.path) ?? 0;
    const ms = new Map(tests.map((t) => [t, expectedMs(this, t)]));
    // as jest's own sort does: the scheduler reads the last run's duration from here
    for (const t of tests) t.duration = this.time(t);
    return [...tests].sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      const [ta, tb] = [ms.get(a), ms.get(b)];
      if ((ta == null) !== (tb == null)) return ta == null ? 1 : -1;
      if (ta != null && tb != null && ta !== tb) return tb - ta;
      return size(b) - size(a);
    });
  }
}

module.exports = SlowFirstSequencer;
module.exports.SLOW_FILES = SLOW_FILES;
