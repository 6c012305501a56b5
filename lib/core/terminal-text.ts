/**
 * Strings that come from a run directory or a bucket (run ids, suite names, error samples, file
 * names) are data, not terminal commands: an escape sequence in them could clear the screen or set
 * the window title. `forTerminal` shows control characters as visible escapes before printing.
 */

// C0 controls except tab and newline, DEL, and the C1 range (U+0080–U+009F, 8-bit CSI among them).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Bidirectional overrides can make text read differently from what it is.
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with control characters (ESC included) and bidi overrides shown as `\xNN` / `\uNNNN`. */
export function forTerminal(text: string): string {
  return text.replace(CONTROL, visible).replace(BIDI, visible);
}

/** Like `forTerminal`, and newlines too: for values printed inside one line. */
export function forTerminalLine(text: string): string {
  return forTerminal(text).replace(/\r?\n/g, '\\n');
}
