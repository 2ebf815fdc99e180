// The wire's date-time (src/protocol/schemas.ts), in a module of its own: the agent's state files
// use it too, and `status` validates them without building every wire schema (start-up).
import * as z from 'zod/mini';

/** RFC 3339 date-time with an offset; its lowercase `t`/`z` (allowed by RFC 3339 §5.6) normalised to upper case. */
export const Rfc3339 = z
  .pipe(z.string().check(z.toUpperCase()), z.iso.datetime({ offset: true, local: false }))
  .check(z.meta({ format: 'date-time' }));
