/**
 * Text from a run in Markdown: escaped for HTML (`<`, `>`, `&`), since most Markdown renderers pass
 * inline HTML through and `<…>` would be an autolink, and for Markdown — table pipes, code spans
 * (backticks), and `[` / `]`, without which no link, image, reference or footnote can open (so
 * `[x](https://…)` or `![x](https://…)` in an error sample stays text). Newlines become spaces.
 * Control and bidi characters are shown by `forTerminal` over the whole file (lib/report/index.ts).
 * Shared by summary.md, compare.md and the sections of render-session.ts.
 */
export function mdText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\\/g, '\\\\')
    .replace(/[|`[\]]/g, (ch) => `\\${ch}`)
    .replace(/\r?\n/g, ' ');
}

export function mdTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(mdText).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}
