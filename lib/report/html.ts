/**
 * HTML building that escapes by default. Every piece of text that reaches report.html goes
 * through `escapeHtml` — directly or through the `html` tagged template, which escapes each
 * interpolated value unless it is already `SafeHtml` (built by this module, or an SVG string
 * rendered by the chart library, which escapes its own text).
 */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escape text for use in HTML element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch] ?? ch);
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
 * node and attribute it writes). The XML prologue is not needed when inlined.
 */
export function trustedSvg(svg: string): SafeHtml {
  if (!svg.startsWith('<svg'))
    throw new Error('trustedSvg: expected an <svg> element from the chart renderer');
  return new SafeHtml(svg);
}

export function joinHtml(parts: readonly SafeHtml[], separator = ''): SafeHtml {
  return new SafeHtml(parts.map((p) => p.value).join(separator));
}
