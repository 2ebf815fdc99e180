// Request bodies checked against the wire schemas, with a 400 message that names the offending
// fields but never echoes their values (a body may carry a token or evidence).
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { badRequest } from './errors';

// The wire schemas are zod/mini (src/protocol/schemas.ts), which carries no messages of its own:
// the server's 400s name what is wrong in English, as classic zod did.
z.config(en());

const MAX_ISSUES_SHOWN = 3;

/**
 * The body as `schema`'s output; a 400 naming what is wrong otherwise. `acceptsAsIs`, when given,
 * is a cheaper check that holds only for bodies the schema accepts and outputs unchanged (but for
 * keys it does not know, which callers never read): those skip zod, anything else gets zod's verdict.
 */
export function parseBody<S extends z.ZodMiniType>(
  schema: S,
  body: unknown,
  acceptsAsIs?: (body: unknown) => body is z.output<S>,
): z.output<S> {
  if (body === undefined) throw badRequest('the request body must be a JSON object');
  if (acceptsAsIs?.(body)) return body;
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const shown = issues.slice(0, MAX_ISSUES_SHOWN).map((issue) => `${fieldPath(issue.path)}: ${issue.message}`);
  const more = issues.length > MAX_ISSUES_SHOWN ? ` (and ${issues.length - MAX_ISSUES_SHOWN} more)` : '';
  throw badRequest(`invalid request body: ${shown.join('; ')}${more}`);
}

/**
 * True for a string the schemas' storedText (src/protocol/schemas.ts) accepts: 1..`max` long, no
 * U+0000. zod counts code points: a string within `max` UTF-16 units is within it; a longer one
 * is left to zod (false here). For the checks without zod that routes give parseBody.
 */
export function isStoredText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= max && !value.includes('\u0000');
}

/** results[3].status; "body" for the root. */
function fieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : `${text ? '.' : ''}${String(part)}`;
  return text || 'body';
}
