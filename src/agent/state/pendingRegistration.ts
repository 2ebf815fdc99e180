// registration.json: what /register answered for an enrollment secret (the device id and its
// one-time token), kept from the registration until the enrollment that spends the token completes.
// An /enroll whose answer was lost, a crash, or an `enroll` run again after a timeout then spends the
// same token, or registers again knowing the first registration happened, instead of leaving a
// second record behind. Keyed by the server and the secret's hash (a registration through another
// secret or server is never reused). Owner-only and written atomically like the key file; the token
// it holds is valid for an hour at most. A damaged file reads as none.
import { rm } from 'node:fs/promises';
import * as z from 'zod/mini';
import { CREDENTIAL_PATTERN } from '../../protocol/constants';
import { readFileIfExists, writeFileAtomic } from './atomicFile';
import type { StateLayout } from './layout';

const PendingRegistration = z.object({
  server_url: z.string(),
  /** SHA-256 (hex) of the enrollment secret the registration used; never the secret. */
  secret_sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  secret_id: z.string().check(z.minLength(1)),
  device_id: z.string().check(z.minLength(1)),
  enrollment_token: z.string().check(z.regex(CREDENTIAL_PATTERN)),
});
export type PendingRegistration = z.infer<typeof PendingRegistration>;

/** The registration kept for this server and secret, or null. */
export async function readPendingRegistration(
  layout: Pick<StateLayout, 'registration'>,
  serverUrl: string,
  secretSha256: string,
): Promise<PendingRegistration | null> {
  const text = await readFileIfExists(layout.registration).catch(() => null);
  if (text === null) return null;
  try {
    const parsed = PendingRegistration.safeParse(JSON.parse(text));
    if (!parsed.success || parsed.data.server_url !== serverUrl || parsed.data.secret_sha256 !== secretSha256) return null;
    return parsed.data;
  } catch {
    return null;
  }
}

export function writePendingRegistration(layout: Pick<StateLayout, 'registration'>, registration: PendingRegistration): Promise<void> {
  return writeFileAtomic(layout.registration, JSON.stringify(registration));
}

export function removePendingRegistration(layout: Pick<StateLayout, 'registration'>): Promise<void> {
  return rm(layout.registration, { force: true });
}
