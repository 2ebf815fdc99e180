// Text that devices report (hostname, OS version, serial, check keys, evidence words) is data: it is
// stored as received and shown with the characters that would act on a terminal or reorder what the
// reader sees made visible. Used by the admin CLI's tables and JSON (adminOutput.ts) and the
// console's HTML (console/html.ts). The characters, and why (docs/server.md, "Device-reported text"):
// - C0 controls U+0000–U+001F and DEL U+007F: ESC starts every escape sequence (colours, cursor
//   moves, screen clears, OSC 52 clipboard writes, OSC 8 links); CR and LF forge lines and rows;
// - C1 controls U+0080–U+009F: terminals that read UTF-8 C1 (xterm among them) take U+009B as CSI
//   and U+009D as OSC, the same sequences without ESC;
// - bidirectional formatting U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, and the line and
//   paragraph separators U+2028, U+2029: they reorder or break what is displayed around them.
// eslint-disable-next-line no-control-regex -- matching control characters is what this module is for
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** The same without C0: JSON.stringify escapes those itself, and its indentation's line feeds are its own. */
const CONTROLS_AFTER_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** HTML: tab, line feed and carriage return are only white space there (and the catalogue's texts hold line feeds). */
// eslint-disable-next-line no-control-regex -- see CONTROLS
const CONTROLS_IN_HTML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const hex = (char: string, digits: number) => char.codePointAt(0)!.toString(16).padStart(digits, '0');

/** `\x1b` for a control up to U+00FF, `\u{202e}` above. */
function visible(char: string): string {
  return char <= '\u00ff' ? `\\x${hex(char, 2)}` : `\\u{${hex(char, 4)}}`;
}

/** One value for a terminal line or table cell: every character above shown visibly, line feeds included. */
export function displayText(text: string): string {
  return text.replace(CONTROLS, visible);
}

/** Text for the console's HTML: the same, but tab, line feed and carriage return kept. */
export function displayHtmlText(text: string): string {
  return text.replace(CONTROLS_IN_HTML, visible);
}

/**
 * `JSON.stringify(value, null, 2)` whose output is safe on a terminal and still parses to `value`:
 * the characters above that JSON leaves as they are become `\u` escapes.
 */
export function displayJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(CONTROLS_AFTER_JSON, (char) => `\\u${hex(char, 4)}`);
}
