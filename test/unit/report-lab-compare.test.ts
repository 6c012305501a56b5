/**
 * `proxylab compare` and the two runs' lab files (lib/report/lab-compare.ts): what differs field by
 * field in compare.md and compare.html when both runs kept lab.json, the same text said as such, a
 * run without one named with why; and the report's header naming the lab file. SYNTHETIC runs
 * (test/fixtures/runs/synthetic.ts) with a lab.json of the shipped labs/own-workload.json.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeReport } from '../../lib/report';
import { writeComparison } from '../../lib/report/compare';
import { labRecordOf, type LabRecord } from '../../lib/results/lab-record';
import { repeatedRun, writeRunDir } from '../fixtures/runs/synthetic';
import { scratchDir } from '../helpers/scratch';

const LAB_TEXT = fs.readFileSync(path.join(__dirname, '..', '..', 'labs', 'own-workload.json'), 'utf8');

function record(text: string): LabRecord {
  return labRecordOf({ text, source: 'labs/own-workload.json', name: 'own-workload' });
}

/** A synthetic run directory, with lab.json of `lab` when given. */
function run(root: string, name: string, lab: LabRecord | null): string {
  const dir = writeRunDir(path.join(root, name), repeatedRun(`synthetic-${name}`));
  if (lab !== null) fs.writeFileSync(path.join(dir, 'lab.json'), JSON.stringify(lab));
  return dir;
}

const A = record(LAB_TEXT);
const B = record(
  LAB_TEXT.replace('"poolPercent": 45', '"poolPercent": 80').replace('  "ttlHours": 4,\n', ''),
);
const short = (r: LabRecord): string => r.sha256.slice(0, 12);

test('both runs kept their lab: compare lists the fields that differ, A → B, in compare.md and compare.html', () => {
  // GIVEN two runs of the same lab, B's with another pool share and no ttlHours
  const root = scratchDir('proxylab-lab-compare-');
  // WHEN
  const r = writeComparison(run(root, 'A', A), run(root, 'B', B), { outDir: path.join(root, 'out') });
  // THEN the Markdown names both lab files and the two fields, before the decision table
  const section = r.markdown.slice(
    r.markdown.indexOf('## Lab files'),
    r.markdown.indexOf('## Decision table'),
  );
  expect(section).toBe(
    [
      '## Lab files',
      '',
      `- A: lab own-workload (labs/own-workload.json, sha256 ${short(A)}…)`,
      `- B: lab own-workload (labs/own-workload.json, sha256 ${short(B)}…)`,
      '',
      '2 fields of the lab file differ, A → B:',
      '',
      // (Markdown: the brackets escaped, as every text of a run is, so no link can open)
      '- poolers\\[0\\].poolPercent: 45 → 80',
      '- ttlHours: removed (was 4)',
      '',
      '',
    ].join('\n'),
  );
  expect(r.model.lab.changes?.map((c) => [c.path, c.kind])).toEqual([
    ['poolers[0].poolPercent', 'changed'],
    ['ttlHours', 'removed'],
  ]);
  // AND the page says the same
  const page = fs.readFileSync(r.htmlPath, 'utf8');
  expect(page).toContain('<section id="lab-files"><h2>Lab files</h2>');
  expect(page).toContain('<li><code>poolers[0].poolPercent: 45 → 80</code></li>');
});

test.each<[string, LabRecord | null, LabRecord | null, string[]]>([
  [
    'the same text',
    A,
    A,
    [
      `- B: lab own-workload (labs/own-workload.json, sha256 ${short(A)}…)`,
      'The same lab file text in both runs (equal SHA-256).',
    ],
  ],
  [
    'formatting only',
    A,
    record(JSON.stringify(JSON.parse(LAB_TEXT))),
    ['The lab file texts differ only in formatting or key order: no field differs.'],
  ],
  [
    'one run without a lab',
    A,
    null,
    [
      '- B: no lab.json: a local run without --lab',
      'Only one run kept its lab file: what differs between their labs is unknown.',
    ],
  ],
  [
    'neither',
    null,
    null,
    [
      '- A: no lab.json: a local run without --lab',
      'Neither run kept its lab file: what differs between their labs is unknown.',
    ],
  ],
])('%s: said so', (_, a, b, lines) => {
  const root = scratchDir('proxylab-lab-compare-');
  // WHEN
  const r = writeComparison(run(root, 'A', a), run(root, 'B', b), { outDir: path.join(root, 'out') });
  // THEN
  const section = r.markdown.slice(
    r.markdown.indexOf('## Lab files'),
    r.markdown.indexOf('## Decision table'),
  );
  for (const line of lines) expect(section.split('\n')).toContain(line);
  expect(section).not.toMatch(/ → /);
});

test('a lab.json that does not fit its schema: the comparison is partial and says the lab file could not be read', () => {
  const root = scratchDir('proxylab-lab-compare-');
  const b = run(root, 'B', null);
  fs.writeFileSync(path.join(b, 'lab.json'), JSON.stringify({ ...A, text: B.text }));
  // WHEN
  const r = writeComparison(run(root, 'A', A), b, { outDir: path.join(root, 'out') });
  // THEN
  expect(r.markdown).toContain('- B: its lab.json could not be read (see the warnings)');
  expect(r.warnings.join('\n')).toMatch(
    /PARTIAL comparison: 1 file\(s\) of run B .*lab\.json: sha256: is not the SHA-256 of `text`/,
  );
});

test("the report's header names the run's lab file, its path and hash; a run without one names none", () => {
  const root = scratchDir('proxylab-lab-report-');
  // WHEN
  const withLab = writeReport(run(root, 'A', A));
  const without = writeReport(run(root, 'B', null));
  // THEN
  const line = `lab own-workload (labs/own-workload.json, sha256 ${short(A)}…)`;
  expect(fs.readFileSync(withLab.mdPath, 'utf8').split('\n').slice(0, 4).join('\n')).toContain(` ${line}.`);
  expect(fs.readFileSync(withLab.htmlPath, 'utf8')).toContain(
    `<dt>lab file</dt><dd id="lab-file">${line}</dd>`,
  );
  expect(fs.readFileSync(without.mdPath, 'utf8')).not.toContain('sha256');
  expect(fs.readFileSync(without.htmlPath, 'utf8')).not.toContain('id="lab-file"');
});
