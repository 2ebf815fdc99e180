// HTML built from templates whose interpolations are escaped unless they are already Html: the one
// way the console writes markup, so that no device-reported text (hostname, evidence) becomes markup,
// nor reorders the page around it (controls and bidirectional formatting shown visibly: displayText.ts).
import { displayHtmlText } from '../displayText';

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Interpolation = Html | string | number | null | undefined | false | readonly Interpolation[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return displayHtmlText(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let text = strings[0]!;
  values.forEach((value, i) => {
    text += render(value) + strings[i + 1]!;
  });
  return new Html(text);
}

/** Markup produced by a trusted generator (the QR code and chart SVG built here). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/**
 * Catalogue prose (a check's fix texts) with its `code spans` as <code>, every part escaped; a
 * backtick without its pair stays as it is.
 */
export function withCodeSpans(text: string): Html {
  const parts = text.split('`');
  const closed = parts.length % 2 === 1 ? parts : [...parts.slice(0, -2), `${parts.at(-2)!}\`${parts.at(-1)!}`];
  return html`${closed.map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}
