/**
 * The lab files of two runs in `proxylab compare`: each run's lab.json (lib/results/lab-record.ts)
 * named by its lab, path and SHA-256, and, when both runs have one, what differs field by field
 * (lib/results/lab-diff.ts: `poolers[0].poolPercent: 50 → 80`, added and removed entries). A run
 * without lab.json is said to be one, with why (no `--lab`, an earlier release, or a lab.json that
 * could not be read). Also the one line the report's header gives a run's lab file.
 */
import { changeLine, diffLabRecords, type LabChange } from '../results/lab-diff';
import { type LabRecord, shortSha256 } from '../results/lab-record';
import { RUN_PATHS } from '../results/run-paths';
import { html, type SafeHtml } from './html';
import type { LoadedRun } from './load';
import { mdText } from './md';

export interface LabSide {
  readonly record: LabRecord | null;
  /** Why there is no record (null when there is one). */
  readonly missing: string | null;
}

export interface LabComparison {
  readonly a: LabSide;
  readonly b: LabSide;
  /**
   * Both runs have a lab.json: the fields that differ (empty when the texts are the same or differ
   * only in formatting); null when either lacks one.
   */
  readonly changes: readonly LabChange[] | null;
}

/** At most this many changed fields are listed; the rest are counted. */
const CHANGES_LISTED = 200;

/** `lab own-workload (labs/own-workload.json, sha256 3f9a0c1d2e4b…)`: the report's header and compare. */
export function labHeadline(r: LabRecord): string {
  return `lab ${r.name} (${r.source}, sha256 ${shortSha256(r.sha256)}…)`;
}

function sideOf(run: LoadedRun): LabSide {
  if (run.lab !== null) return { record: run.lab, missing: null };
  const lab = run.manifest.settings.lab;
  const missing = run.warnings.some((w) => w.file === RUN_PATHS.lab)
    ? `its ${RUN_PATHS.lab} could not be read (see the warnings)`
    : typeof lab === 'string'
      ? `no ${RUN_PATHS.lab}: a run of lab ${lab} by a release that did not keep the lab file`
      : run.manifest.mode === 'local'
        ? `no ${RUN_PATHS.lab}: a local run without --lab`
        : `no ${RUN_PATHS.lab}: a run by a release that did not keep the lab file`;
  return { record: null, missing };
}

export function compareLabs(a: LoadedRun, b: LoadedRun): LabComparison {
  const sa = sideOf(a);
  const sb = sideOf(b);
  const changes =
    sa.record === null || sb.record === null
      ? null
      : sa.record.sha256 === sb.record.sha256
        ? []
        : (diffLabRecords(sa.record, sb.record) ?? []);
  return { a: sa, b: sb, changes };
}

/** The sentence under the two runs' lab lines. */
function verdictLine(c: LabComparison): string {
  if (c.changes === null)
    return c.a.record === null && c.b.record === null
      ? 'Neither run kept its lab file: what differs between their labs is unknown.'
      : 'Only one run kept its lab file: what differs between their labs is unknown.';
  if (c.changes.length > 0)
    return `${c.changes.length} field${c.changes.length === 1 ? '' : 's'} of the lab file differ${c.changes.length === 1 ? 's' : ''}, A → B:`;
  return c.a.record?.sha256 === c.b.record?.sha256
    ? 'The same lab file text in both runs (equal SHA-256).'
    : 'The lab file texts differ only in formatting or key order: no field differs.';
}

function sideLine(label: 'A' | 'B', s: LabSide): string {
  return `${label}: ${s.record !== null ? labHeadline(s.record) : (s.missing ?? '')}`;
}

function listed(c: LabComparison): { readonly lines: string[]; readonly more: number } {
  const all = c.changes ?? [];
  return {
    lines: all.slice(0, CHANGES_LISTED).map(changeLine),
    more: Math.max(0, all.length - CHANGES_LISTED),
  };
}

/** `## Lab files` of compare.md. */
export function labComparisonMarkdown(c: LabComparison): string[] {
  const { lines, more } = listed(c);
  return [
    '## Lab files',
    '',
    `- ${mdText(sideLine('A', c.a))}`,
    `- ${mdText(sideLine('B', c.b))}`,
    '',
    mdText(verdictLine(c)),
    '',
    ...(lines.length > 0
      ? [...lines.map((l) => `- ${mdText(l)}`), ...(more > 0 ? [`- … and ${more} more`] : []), '']
      : []),
  ];
}

/** The same section in compare.html. */
export function labComparisonHtml(c: LabComparison): SafeHtml {
  const { lines, more } = listed(c);
  return html`<section id="lab-files"><h2>Lab files</h2><ul><li>${sideLine('A', c.a)}</li><li>${sideLine('B', c.b)}</li></ul><p>${verdictLine(c)}</p>${
    lines.length > 0
      ? html`<ul class="lab-changes">${lines.map((l) => html`<li><code>${l}</code></li>`)}${more > 0 ? html`<li>… and ${more} more</li>` : ''}</ul>`
      : ''
  }</section>`;
}
