// How device-reported text is shown (src/server/displayText.ts), in process: each range's first and
// last character made visible, and its neighbours left alone. The admin CLI and the console that use
// it are driven over their real outputs in textFields.test.ts.
import { describe, expect, test } from 'vitest';
import { displayHtmlText, displayJson, displayText } from '../../src/server/displayText';

const char = (code: number) => String.fromCodePoint(code);
const hex = (code: number) => code.toString(16).padStart(4, '0');

/** The characters displayText shows visibly, as inclusive ranges. */
const SHOWN: [number, number][] = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x61c, 0x61c],
  [0x200e, 0x200f],
  [0x2028, 0x202e],
  [0x2066, 0x2069],
];
const EDGES = SHOWN.flatMap(([first, last]) => [first, last]);
const NEIGHBOURS = SHOWN.flatMap(([first, last]) => [first - 1, last + 1]).filter((code) => code >= 0);

describe('displayText (a terminal line or table cell)', () => {
  test.each(EDGES.filter((code) => code <= 0xff).map((code) => [hex(code), code]))('U+%s is shown as \\xHH', (_label, code) => {
    expect(displayText(`a${char(code)}b`)).toBe(`a\\x${code.toString(16).padStart(2, '0')}b`);
  });

  test.each(EDGES.filter((code) => code > 0xff).map((code) => [hex(code), code]))('U+%s is shown as \\u{HHHH}', (_label, code) => {
    expect(displayText(`a${char(code)}b`)).toBe(`a\\u{${hex(code)}}b`);
  });

  test.each(NEIGHBOURS.map((code) => [hex(code), code]))('U+%s is left as it is', (_label, code) => {
    expect(displayText(`a${char(code)}b`)).toBe(`a${char(code)}b`);
  });

  test('every occurrence, line feeds included; printable text, backslashes and non-Latin text unchanged', () => {
    expect(displayText('host\u001b]52;c;aGk=\u0007\nFORGED\u009b2J\u202eexe.txt')).toBe(
      'host\\x1b]52;c;aGk=\\x07\\x0aFORGED\\x9b2J\\u{202e}exe.txt',
    );
    expect(displayText('C:\\Users · Über-Laptop 東京 ✓')).toBe('C:\\Users · Über-Laptop 東京 ✓');
  });
});

describe('displayHtmlText (the console)', () => {
  test('tab, line feed and carriage return are kept (white space in HTML); the other controls are shown', () => {
    expect(displayHtmlText('a\tb\nc\rd')).toBe('a\tb\nc\rd');
    expect(displayHtmlText('\u0000\u0008\u000b\u000c\u000e\u001f\u007f\u0085\u202e\u2066')).toBe(
      '\\x00\\x08\\x0b\\x0c\\x0e\\x1f\\x7f\\x85\\u{202e}\\u{2066}',
    );
    expect(displayHtmlText('<b>Über</b>')).toBe('<b>Über</b>');
  });
});

describe('displayJson (--json)', () => {
  const value = { hostname: 'a\u001b[2Jb\u009b31m\u202ec\u2028d\u007f', list: ['\n', '\u0085'], n: 1, none: null };

  test('parses back to the same value', () => {
    expect(JSON.parse(displayJson(value))).toEqual(value);
  });

  test('holds no character displayText would show, but the line feeds of its own indentation', () => {
    const text = displayJson(value);
    expect(displayText(text.replaceAll('\n', ' '))).toBe(text.replaceAll('\n', ' '));
    expect(text).toContain('"a\\u001b[2Jb\\u009b31m\\u202ec\\u2028d\\u007f"');
    expect(text.split('\n')).toHaveLength(JSON.stringify(value, null, 2).split('\n').length);
  });
});
