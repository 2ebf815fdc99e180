// Apple XML property lists (what `plutil -convert xml1`, `pwpolicy` and preference files print),
// parsed into plain values. Binary plists are converted to XML by plutil first (probes.ts).
// Strict: anything outside the plist DTD is an error, never a guess.

export type PlistValue = string | number | boolean | Date | Uint8Array | PlistValue[] | PlistDict;
export interface PlistDict {
  [key: string]: PlistValue;
}

export type PlistResult = { ok: true; value: PlistValue } | { ok: false; error: string };

const MAX_DEPTH = 64;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

class PlistSyntaxError extends Error {
  override name = 'PlistSyntaxError';
}

export function parsePlist(xml: string): PlistResult {
  try {
    return { ok: true, value: new Reader(xml).document() };
  } catch (err) {
    if (err instanceof PlistSyntaxError) return { ok: false, error: err.message };
    throw err;
  }
}

/** A dictionary value, or undefined for anything else. */
export function plistDict(value: PlistValue | undefined): PlistDict | undefined {
  return isDict(value) ? value : undefined;
}

/** `<true/>`/`<false/>`, or the integers 1/0 that `defaults write -int` leaves behind. */
export function plistBool(value: PlistValue | undefined): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  return undefined;
}

/** A whole number (`<integer>`, or a `<real>` without fraction). */
export function plistInt(value: PlistValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

export function plistString(value: PlistValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function isDict(value: PlistValue | undefined): value is PlistDict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array);
}

interface Tag {
  name: string;
  selfClosing: boolean;
}

class Reader {
  private pos = 0;
  constructor(private readonly text: string) {
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  document(): PlistValue {
    this.skipProlog();
    const root = this.openTag();
    if (root.name !== 'plist') this.fail(`expected <plist>, found <${root.name}>`);
    if (root.selfClosing) this.fail('empty <plist/>');
    this.skipSpace();
    const value = this.value(0);
    this.skipSpace();
    this.closeTag('plist');
    this.skipSpace();
    if (this.pos < this.text.length) this.fail('text after </plist>');
    return value;
  }

  private value(depth: number): PlistValue {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const tag = this.openTag();
    switch (tag.name) {
      case 'dict':
        return tag.selfClosing ? (Object.create(null) as PlistDict) : this.dict(depth);
      case 'array':
        return tag.selfClosing ? [] : this.array(depth);
      case 'string':
        return tag.selfClosing ? '' : this.textUntilClose('string');
      case 'integer': {
        const raw = tag.selfClosing ? '' : this.textUntilClose('integer').trim();
        if (!/^[+-]?\d+$/.test(raw)) this.fail(`bad integer "${raw.slice(0, 20)}"`);
        return Number(raw);
      }
      case 'real': {
        const raw = tag.selfClosing ? '' : this.textUntilClose('real').trim();
        if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) this.fail(`bad real "${raw.slice(0, 20)}"`);
        return Number(raw);
      }
      case 'true':
      case 'false':
        if (!tag.selfClosing) this.closeTag(tag.name);
        return tag.name === 'true';
      case 'date': {
        const raw = tag.selfClosing ? '' : this.textUntilClose('date').trim();
        const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(raw) ? new Date(raw) : new Date(NaN);
        if (Number.isNaN(date.getTime())) this.fail(`bad date "${raw.slice(0, 30)}"`);
        return date;
      }
      case 'data': {
        const raw = tag.selfClosing ? '' : this.textUntilClose('data').replace(/\s+/g, '');
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(raw)) this.fail('bad base64 in <data>');
        return new Uint8Array(Buffer.from(raw, 'base64'));
      }
      default:
        return this.fail(`unknown element <${tag.name}>`);
    }
  }

  private dict(depth: number): PlistDict {
    const out = Object.create(null) as PlistDict;
    for (;;) {
      this.skipSpace();
      if (this.text.startsWith('</', this.pos)) {
        this.closeTag('dict');
        return out;
      }
      const key = this.openTag();
      if (key.name !== 'key') this.fail(`expected <key> in <dict>, found <${key.name}>`);
      const name = key.selfClosing ? '' : this.textUntilClose('key');
      this.skipSpace();
      out[name] = this.value(depth + 1);
    }
  }

  private array(depth: number): PlistValue[] {
    const out: PlistValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text.startsWith('</', this.pos)) {
        this.closeTag('array');
        return out;
      }
      out.push(this.value(depth + 1));
    }
  }

  /** Character data up to `</name>`, with entities and CDATA sections resolved. */
  private textUntilClose(name: string): string {
    let out = '';
    for (;;) {
      const lt = this.text.indexOf('<', this.pos);
      if (lt < 0) this.fail(`unterminated <${name}>`);
      out += this.decode(this.text.slice(this.pos, lt));
      this.pos = lt;
      if (this.text.startsWith('<![CDATA[', lt)) {
        const end = this.text.indexOf(']]>', lt);
        if (end < 0) this.fail('unterminated CDATA');
        out += this.text.slice(lt + 9, end);
        this.pos = end + 3;
        continue;
      }
      if (this.text.startsWith('<!--', lt)) {
        this.skipComment();
        continue;
      }
      this.closeTag(name);
      return out;
    }
  }

  private decode(raw: string): string {
    if (/&(?![^;&\s]{1,10};)/.test(raw)) this.fail('bare "&" in text');
    return raw.replace(/&([^;&\s]{1,10});/g, (_m, entity: string) => {
      if (entity in ENTITIES) return ENTITIES[entity]!;
      const code = /^#x([0-9a-fA-F]+)$/.test(entity)
        ? parseInt(entity.slice(2), 16)
        : /^#\d+$/.test(entity)
          ? parseInt(entity.slice(1), 10)
          : NaN;
      if (!Number.isInteger(code) || code > 0x10ffff) this.fail(`unknown entity &${entity};`);
      return String.fromCodePoint(code);
    });
  }

  private openTag(): Tag {
    this.skipSpace();
    const match = /^<([A-Za-z][\w.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/.exec(
      this.text.slice(this.pos, this.pos + 512),
    );
    if (!match) this.fail('expected an element');
    this.pos += match[0].length;
    return { name: match[1]!, selfClosing: match[3] === '/' };
  }

  private closeTag(name: string): void {
    const match = /^<\/([A-Za-z][\w.-]*)\s*>/.exec(this.text.slice(this.pos, this.pos + 64));
    if (!match || match[1] !== name) this.fail(`expected </${name}>`);
    this.pos += match[0].length;
  }

  /** Whitespace and comments between elements. */
  private skipSpace(): void {
    for (;;) {
      while (this.pos < this.text.length && /\s/.test(this.text[this.pos]!)) this.pos++;
      if (!this.text.startsWith('<!--', this.pos)) return;
      this.skipComment();
    }
  }

  private skipComment(): void {
    const end = this.text.indexOf('-->', this.pos + 4);
    if (end < 0) this.fail('unterminated comment');
    this.pos = end + 3;
  }

  /** The XML declaration and the DOCTYPE before <plist>. */
  private skipProlog(): void {
    for (;;) {
      this.skipSpace();
      if (this.text.startsWith('<?', this.pos)) {
        const end = this.text.indexOf('?>', this.pos);
        if (end < 0) this.fail('unterminated processing instruction');
        this.pos = end + 2;
      } else if (this.text.startsWith('<!DOCTYPE', this.pos)) {
        const end = this.text.indexOf('>', this.pos);
        if (end < 0) this.fail('unterminated DOCTYPE');
        this.pos = end + 1;
      } else {
        return;
      }
    }
  }

  private fail(message: string): never {
    throw new PlistSyntaxError(`${message} at offset ${this.pos}`);
  }
}
