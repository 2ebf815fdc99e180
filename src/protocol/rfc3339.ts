// The wire's date-time (src/protocol/schemas.ts), in a module of its own: the agent's state files
// use it too, and `status` validates them without building every wire schema (start-up).
import * as z from 'zod/mini';

/** RFC 3339 date-time with an offset and seconds, in upper case (`T`, `Z`). */
const isoDateTime = z.iso.datetime({ offset: true, local: false });

/**
 * The exact pattern isoDateTime tests (the string is its whole check): the server's posture
 * uploads test it without zod (src/server/routes/postures.ts, plainPostures). A string it matches
 * holds digits, `-:.+`, `T` and `Z` only, so Rfc3339 outputs it unchanged.
 */
export const ISO_DATE_TIME_PATTERN: RegExp = isoDateTime._zod.pattern;
if (!(ISO_DATE_TIME_PATTERN instanceof RegExp)) throw new Error('zod no longer exposes the pattern of z.iso.datetime');

/** RFC 3339 date-time with an offset; its lowercase `t`/`z` (allowed by RFC 3339 §5.6) normalised to upper case. */
export const Rfc3339 = z.pipe(z.string().check(z.toUpperCase()), isoDateTime).check(z.meta({ format: 'date-time' }));
