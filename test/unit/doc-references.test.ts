/**
 * Every `docs/NAME.md` the code and the shipped labs point a reader to exists: a message or a
 * comment that sends the user to a page that is not there is a dead end (docs/disruptions.md was
 * named by the run command, the report and the probe before it was written).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function filesUnder(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(rel, ext));
    else if (ext.test(e.name)) out.push(rel);
  }
  return out;
}

const SOURCES = [
  ...filesUnder('lib', /\.ts$/),
  ...filesUnder('scripts', /\.ts$/),
  ...filesUnder('labs', /\.json$/),
  'README.md',
  'CONTRIBUTING.md',
];

/** [file, docs page] for each reference, once per pair. */
const references: Array<[string, string]> = [];
for (const file of SOURCES) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const pages = new Set([...text.matchAll(/\bdocs\/([a-z0-9-]+\.md)\b/g)].map((m) => `docs/${m[1]}`));
  for (const page of pages) references.push([file, page]);
}

test('the code names its docs pages (the table below is not empty)', () => {
  // GIVEN the sources  WHEN their docs references are read  THEN the disruption lab's are among them
  expect(references).toContainEqual(['scripts/commands/run.ts', 'docs/disruptions.md']);
});

test.each(references)('%s → %s exists', (_file, page) => {
  // GIVEN a reference  WHEN the page is looked up  THEN it is in the repository
  expect(fs.existsSync(path.join(ROOT, page))).toBe(true);
});
