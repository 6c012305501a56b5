/**
 * The README's smoke capture is compared with a real run by its shape (scripts/readme-capture.ts;
 * test/integration/local-smoke.test.ts does the comparison): the shape keeps what a run decides
 * (steps, order, markers, notes, totals) and drops what varies (figures, ports, paths, times).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { planLocal, validateLocalInput } from '../../lib/local/run-local';
import { captureShape, captureText, committedCapture } from '../../scripts/readme-capture';

const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
const committed = committedCapture(README) ?? '';

test('the README holds a generated capture of 8 smoke steps, tables elided', () => {
  expect(committed).toMatch(/^Run local-\S+: 8 steps\.$/m);
  expect(committed).toContain('…one table per scenario');
  expect(captureShape(committed).filter((l) => /^[>✓✗·] \[\d+\/8\]/.test(l)).length).toBe(14);
});

test("the README's steps are the smoke suite's planned steps, in order, each started or skipped and finished", () => {
  // GIVEN the plan `proxylab local --suite smoke` makes with its default settings
  const planned = planLocal(validateLocalInput({ suite: 'smoke' }, path.join(__dirname, '..', '..'))).map(
    (s) => s.stepId,
  );
  // WHEN the capture's step lines are read back
  const lines = captureShape(committed);
  const ids = (marker: RegExp): string[] =>
    lines.flatMap((l) => {
      const m = /^([>✓✗·]) \[(\d+)\/(\d+)\] (\S+)/.exec(l);
      return m !== null && marker.test(m[1] ?? '') && Number(m[3]) === planned.length ? [m[4] ?? ''] : [];
    });
  // THEN every planned step ends (measured or skipped with its reason) in plan order, and only those
  expect(committed).toMatch(new RegExp(`^Run local-\\S+: ${planned.length} steps\\.$`, 'm'));
  expect(ids(/[✓✗·]/)).toEqual(planned);
  // a step that is measured was announced first; a skipped one was not
  const skipped = ids(/·/);
  expect(ids(/>/)).toEqual(planned.filter((id) => !skipped.includes(id)));
});

test('figures, ports, paths and times do not change the shape; a step more or less does', () => {
  // GIVEN the same run with other figures, ports and times
  const other = committed
    .replace(/\d+\.\d+ tps/g, '1.0 tps')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:1')
    .replace(/elapsed \d+:\d+, ETA \d+:\d+/g, 'elapsed 9:99, ETA 9:99')
    .replace(/steps in \d+:\d+/, 'steps in 5:55');
  expect(captureShape(other)).toEqual(captureShape(committed));
  // WHEN a step is dropped (the hand-made capture of 6 steps where a run has 8)
  const fewer = committed
    .split('\n')
    .filter((l) => !l.includes('/ps-on/'))
    .join('\n');
  // THEN the shapes differ
  expect(captureShape(fewer)).not.toEqual(captureShape(committed));
});

test('captureText elides the tables and shows the run directory as runs/', () => {
  const stdout = [
    'Run local-x: 1 steps.',
    '✓ [1/1] a/direct/c5/simple/persistent/r1  1.0 tps',
    'Stopping PgBouncer and PostgreSQL…',
    '',
    'a — table',
    '  target clients',
    '',
    'All verdicts held: 1 held, 0 broke, 0 informational; 1/1 steps in 0:01.',
    'Run directory: /tmp/xyz/runs/local-x',
  ].join('\n');
  expect(captureText(stdout, '/tmp/xyz/runs').split('\n')).toEqual([
    'Run local-x: 1 steps.',
    '✓ [1/1] a/direct/c5/simple/persistent/r1  1.0 tps',
    'Stopping PgBouncer and PostgreSQL…',
    '',
    '…one table per scenario (target, clients, protocol, connect, tps, p95, errors, verdict)…',
    '',
    'All verdicts held: 1 held, 0 broke, 0 informational; 1/1 steps in 0:01.',
    'Run directory: runs/local-x',
  ]);
});
