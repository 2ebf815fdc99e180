// enrollment.json: what an enrollment left in the state directory, apart from the key itself.
// `state` makes enroll and wipe crash-safe: the record is written as `enrolling` before the key is
// stored and as `wiping` (with the wipe's note) before the key is removed, so that whoever finds
// either state knows an operation was cut short, where the key may be and why it goes, and finishes
// the wipe (agentState.ts).
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod/mini';
import { Rfc3339 } from '../../protocol/rfc3339';
import { readFileIfExists, syncDirectory, writeFileAtomic } from './atomicFile';
import { StateCorruptError, firstLine } from '../errors';
import { parseServerUrl } from '../serverUrl';
import type { StateLayout } from './layout';

/** Why a wipe removes the enrollment (a 401), kept in status.json once the wipe is done. */
const WipeNote = z.object({ reason: z.string(), revoked_at: Rfc3339 });
export type WipeNote = z.infer<typeof WipeNote>;

/**
 * How the device enrolled: a one-time token, or the organization's enrollment secret (its id only,
 * never the secret). Records written before secrets existed have none: they enrolled with a token.
 */
const EnrolledWith = z.discriminatedUnion('method', [
  z.object({ method: z.literal('token') }),
  z.object({ method: z.literal('enroll_secret'), secret_id: z.string().check(z.minLength(1)) }),
]);
export type EnrolledWith = z.infer<typeof EnrolledWith>;

export const EnrollmentRecord = z.object({
  version: z.literal(1),
  state: z.enum(['enrolling', 'enrolled', 'wiping']),
  server_url: z.string().check(z.minLength(1)),
  keystore: z.enum(['keyring', 'file']),
  keyring_entry: z.optional(z.object({ service: z.string(), account: z.string(), target: z.optional(z.string()) })),
  /** --ca-file given at enrollment (absolute path): later commands use it unless given another. */
  ca_file: z.optional(z.string()),
  enrolled_at: z.optional(Rfc3339),
  enrolled_with: z.optional(EnrolledWith),
  /**
   * The admin's opt-in to re-enrollment (--reenroll-with-secret, DEVICE_AGENT_REENROLL_WITH_SECRET):
   * after a 401 wipe the daemon enrolls again with the enrollment secret in this file (absolute),
   * read again each time and never copied.
   */
  reenroll_secret_file: z.optional(z.string().check(z.minLength(1))),
  /** While `wiping`: the note the wipe leaves in status.json (none: status.json is removed). */
  wipe_note: z.optional(WipeNote),
});
export type EnrollmentRecord = z.infer<typeof EnrollmentRecord>;

/** The record, or null when there is none; StateCorruptError when it cannot be read. */
export async function readEnrollmentRecord(layout: StateLayout): Promise<EnrollmentRecord | null> {
  let text: string | null;
  try {
    text = await readFileIfExists(layout.enrollment);
  } catch (err) {
    throw new StateCorruptError(`cannot read ${layout.enrollment}: ${firstLine(err)}`);
  }
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw corrupt(layout);
  }
  const parsed = EnrollmentRecord.safeParse(json);
  if (!parsed.success) throw corrupt(layout);
  // The same rules as at enroll time, on every load: an edited record never sends the key over
  // plain http to a host that is not loopback, nor anywhere but an origin.
  let serverUrl: string;
  try {
    serverUrl = parseServerUrl(parsed.data.server_url);
  } catch (err) {
    throw new StateCorruptError(
      `${layout.enrollment} names a server that is not allowed (${firstLine(err)}); nothing was sent: ` +
        'run `device-agent unenroll` to reset this state directory, then enroll again',
    );
  }
  return { ...parsed.data, server_url: serverUrl };
}

function corrupt(layout: StateLayout): StateCorruptError {
  return new StateCorruptError(
    `${layout.enrollment} is not a valid enrollment record: run \`device-agent unenroll\` to reset this state directory`,
  );
}

export async function writeEnrollmentRecord(layout: StateLayout, record: EnrollmentRecord): Promise<void> {
  await writeFileAtomic(layout.enrollment, `${JSON.stringify(record, null, 2)}\n`);
}

export async function removeEnrollmentRecord(layout: StateLayout): Promise<void> {
  await rm(layout.enrollment, { force: true });
  await syncDirectory(dirname(layout.enrollment));
}
