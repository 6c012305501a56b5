/**
 * The test sequencer (test/helpers/sequencer.js): on a fresh clone (no timings cached) the files
 * known to be slow start first, longest first, and every file it names exists.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

interface FakeTest {
  readonly path: string;
  readonly context: { config: { cache: boolean }; hasteFS: { getSize: (p: string) => number } };
  duration?: number;
}
type SequencerModule = (new (opts: object) => { sort(tests: FakeTest[]): FakeTest[] }) & {
  SLOW_FILES: Record<string, number>;
};

const ROOT = path.resolve(__dirname, '..', '..');
const Sequencer = createRequire(__filename)('../helpers/sequencer.js') as SequencerModule;

test('every file SLOW_FILES names exists (a renamed or split file must be renamed there too)', () => {
  const missing = Object.keys(Sequencer.SLOW_FILES).filter((f) => !fs.existsSync(path.join(ROOT, f)));
  expect(missing).toEqual([]);
});

test('without cached timings, the slow files come first, longest first, then the rest by size', () => {
  // GIVEN a big unknown file, a small unknown file and two slow files, and no timing cache
  const sizes: Record<string, number> = {
    'test/unit/big.test.ts': 90_000,
    'test/unit/small.test.ts': 100,
    'test/integration/local-server-stop.test.ts': 9_000,
    'test/integration/local-smoke.test.ts': 20_000,
  };
  const context = {
    config: { cache: false },
    hasteFS: { getSize: (p: string) => sizes[path.relative(ROOT, p)] ?? 0 },
  };
  const tests: FakeTest[] = Object.keys(sizes).map((f) => ({ path: path.join(ROOT, f), context }));
  // WHEN sorted
  const order = new Sequencer({}).sort(tests).map((t) => path.relative(ROOT, t.path));
  // THEN
  expect(order).toEqual([
    'test/integration/local-server-stop.test.ts',
    'test/integration/local-smoke.test.ts',
    'test/unit/big.test.ts',
    'test/unit/small.test.ts',
  ]);
});
