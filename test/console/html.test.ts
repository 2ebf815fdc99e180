// The console's one way of writing markup: interpolations escaped, and catalogue prose with its
// `code spans` as <code> (a fix text's backticks are never shown literally).
import { describe, expect, test } from 'vitest';
import { html, withCodeSpans } from '../../src/server/console/html';

describe('withCodeSpans', () => {
  test('each pair of backticks becomes a code element, the rest stays text', () => {
    expect(withCodeSpans('Run `sudo ufw enable`, then `ufw status`.').text).toBe(
      'Run <code>sudo ufw enable</code>, then <code>ufw status</code>.',
    );
  });

  test('every part is escaped, inside code and out', () => {
    expect(withCodeSpans('a <b> `<script>&` "c"').text).toBe('a &lt;b&gt; <code>&lt;script&gt;&amp;</code> &quot;c&quot;');
  });

  test('a backtick without its pair stays as written', () => {
    expect(withCodeSpans('one ` alone').text).toBe('one ` alone');
    expect(withCodeSpans('`a` and ` b').text).toBe('<code>a</code> and ` b');
    expect(withCodeSpans('no code').text).toBe('no code');
  });

  test('interpolated into a page as markup, not escaped again', () => {
    expect(html`<p>${withCodeSpans('`x`')}</p>`.text).toBe('<p><code>x</code></p>');
  });
});
