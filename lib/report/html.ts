/**
 * HTML building that escapes by default. Every piece of text that reaches report.html goes
 * through `escapeHtml` — directly or through the `html` tagged template, which escapes each
 * interpolated value unless it is already `SafeHtml` (built by this module, or an SVG string
 * rendered by the chart library, which escapes its own text). Both show control characters and
 * bidirectional formatting characters as `\xNN` / `\uNNNN` (lib/core/terminal-text.ts), as the
 * terminal and summary.md do: escaped text is still text someone reads.
 */
import { showControls } from '../core/terminal-text';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/**
 * Escape text for use in HTML element content and in quoted attribute values; control and bidi
 * characters shown visibly (tab and newline kept).
 */
export function escapeHtml(text: string): string {
  return showControls(text).replace(/[&<>"'`]/g, (ch) => ESCAPES[ch] ?? ch);
}

/** A string known to be safe HTML. Only this module and `trustedSvg` create it. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: Interpolation) => render(v)).join('');
  return escapeHtml(String(value));
}

/** Tagged template: literal parts are trusted markup, every interpolation is escaped. */
export function html(strings: TemplateStringsArray, ...values: readonly Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/**
 * An SVG document string from the chart library (echarts' SSR renderer encodes every text
 * node and attribute it writes, but passes control and bidi characters through: a target name
 * or a scenario in a chart's legend or title is shown as `escapeHtml` shows it). The XML prologue
 * is not needed when inlined.
 */
export function trustedSvg(svg: string): SafeHtml {
  if (!svg.startsWith('<svg'))
    throw new Error('trustedSvg: expected an <svg> element from the chart renderer');
  return new SafeHtml(showControls(svg));
}

export function joinHtml(parts: readonly SafeHtml[], separator = ''): SafeHtml {
  return new SafeHtml(parts.map((p) => p.value).join(separator));
}
