/**
 * Strings that come from a run directory or a bucket (run ids, suite names, error samples, file
 * names) are data, not terminal commands or layout: an escape sequence in them could clear the
 * screen or set the window title, and a bidirectional control could make text read differently
 * from what it is. `showControls` makes both visible; the terminal, summary.md, compare.md and
 * report.html (lib/report/html.ts escapeHtml) all show them the same way.
 */

// C0 controls except tab and newline, DEL, and the C1 range (U+0080–U+009F, 8-bit CSI among them).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Bidirectional formatting (Unicode UAX #9): the marks LRM U+200E, RLM U+200F and ALM U+061C, the
// embeddings and overrides U+202A–U+202E, and the isolates U+2066–U+2069.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with control characters (ESC, BEL, C1 included; tab and newline kept) and bidirectional
 * formatting characters shown as `\xNN` / `\uNNNN`.
 */
export function showControls(text: string): string {
  return text.replace(CONTROL, visible).replace(BIDI, visible);
}

/** `showControls`, for text printed on a terminal (and files read there: summary.md, compare.md). */
export function forTerminal(text: string): string {
  return showControls(text);
}

/** Like `forTerminal`, and newlines too: for values printed inside one line. */
export function forTerminalLine(text: string): string {
  return forTerminal(text).replace(/\r?\n/g, '\\n');
}
