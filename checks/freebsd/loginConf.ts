// login.conf(5) read the way getcap(3) reads it: backslash-newline joins lines (the next line's
// leading blanks are kept), a logical line that is empty or starts with "#" is a comment (a
// "#" at the start of a continuation line is not), records are "name|alias:field:field:…",
// the first occurrence of a capability wins, "cap@" cancels it, and tc=name splices in the
// fields of another record.

export interface CapRecord {
  names: string[];
  fields: string[];
}

export function parseCapDatabase(text: string): CapRecord[] {
  const records: CapRecord[] = [];
  const logical = text.replace(/\\\n/g, '').split('\n');
  for (const line of logical) {
    if (line === '' || line.startsWith('#')) continue;
    const [names, ...fields] = line.split(':');
    records.push({ names: names!.split('|'), fields });
  }
  return records;
}

const MAX_RECURSION = 32;

/** The record's fields with every tc=name replaced by that record's fields (getent's expansion). */
export function expandRecord(db: CapRecord[], name: string, depth = 0): string[] | null {
  const record = db.find((r) => r.names.includes(name));
  if (!record || depth > MAX_RECURSION) return null;
  return record.fields.flatMap((field) => {
    if (!field.startsWith('tc=')) return [field];
    return expandRecord(db, field.slice(3), depth + 1) ?? [field];
  });
}

type Found = { state: 'absent' } | { state: 'cancelled' } | { state: 'present'; raw: string };

/** cgetcap: the first field naming `cap` with this type ("=" string, "#" number, "" boolean); "cap@" stops the search. */
function findCap(fields: string[], cap: string, type: '=' | '#' | ''): Found {
  for (const field of fields) {
    if (!field.startsWith(cap)) continue;
    const rest = field.slice(cap.length);
    if (rest.startsWith('@')) return { state: 'cancelled' };
    if (type === '' ? rest === '' : rest.startsWith(type)) return { state: 'present', raw: rest.slice(type.length) };
  }
  return { state: 'absent' };
}

/** cgetstr's escapes: \c for ":", \e, \n, \t, \b, \f, \r, octal \ooo, ^X controls. */
export function decodeCapString(raw: string): string {
  return raw.replace(/\\([0-7]{1,3}|.)|\^(.)/g, (_m, esc: string | undefined, ctl: string | undefined) => {
    if (ctl !== undefined) return ctl === '?' ? '\x7f' : String.fromCharCode(ctl.charCodeAt(0) & 0o37);
    if (/^[0-7]+$/.test(esc!)) return String.fromCharCode(parseInt(esc!, 8));
    const map: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\x1b', c: ':' };
    return map[esc!.toLowerCase()] ?? esc!;
  });
}

export function capString(fields: string[], cap: string): string | null {
  const found = findCap(fields, cap, '=');
  return found.state === 'present' ? decodeCapString(found.raw) : null;
}

/** login_getcapnum: the numeric form (cap#N) first, then the string form (cap=N); "infinity" and friends are Infinity. */
export function capNumber(fields: string[], cap: string): number | null {
  const numeric = findCap(fields, cap, '#');
  const found = numeric.state === 'present' ? numeric : findCap(fields, cap, '=');
  if (found.state !== 'present') return null;
  const value = decodeCapString(found.raw).trim();
  if (/^(?:infinity|inf|unlimited|unlimit|-1)$/i.test(value)) return Infinity;
  if (/^0x[0-9a-f]+$/i.test(value)) return parseInt(value, 16);
  if (/^0[0-7]+$/.test(value)) return parseInt(value, 8);
  return /^\d+$/.test(value) ? Number(value) : null;
}
