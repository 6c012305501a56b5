/**
 * Markdown table cells, escaped for Markdown (pipes, newlines) and HTML (`<`, `>`, `&`), since most
 * Markdown renderers pass inline HTML through. Shared by summary.md, compare.md and the sections of
 * render-session.ts.
 */
export function mdText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/`/g, '\\`')
    .replace(/\r?\n/g, ' ');
}

export function mdTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(mdText).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}
