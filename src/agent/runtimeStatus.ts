// status.json: what the daemon last observed, for `status`. Written atomically; unknown fields are
// kept, so a newer daemon's additions survive an older CLI's update.
import * as z from 'zod/mini';
import { Rfc3339 } from '../protocol/rfc3339';
import { readFileIfExists, writeFileAtomic } from './atomicFile';
import { stateLayout } from './stateDir';

const optionalOrNull = <T extends z.ZodMiniType>(schema: T) => z.optional(z.nullable(schema));
const Timestamp = optionalOrNull(Rfc3339);
const Count = z.optional(z.int().check(z.nonnegative()));

export const RuntimeStatus = z.looseObject({
  device_id: optionalOrNull(z.string()),
  last_heartbeat_at: Timestamp,
  last_upload_at: Timestamp,
  /** Server time minus local time at the last heartbeat, in ms. */
  clock_skew_ms: optionalOrNull(z.number()),
  /** The last 409 answer (hardware_uuid used by another device); cleared by a successful heartbeat. */
  conflict: optionalOrNull(z.object({ message: z.string(), at: Rfc3339 })),
  /** Set when credentials were wiped after a 401. */
  revoked_at: Timestamp,
  reason: optionalOrNull(z.string()),
  /** The daemon's state (src/agent/daemon.ts) and a sentence for operators about it. */
  daemon_state: z.optional(z.string()),
  daemon_message: optionalOrNull(z.string()),
  queued_results: Count,
  /** Oldest results dropped because the queue was full. */
  dropped_results: Count,
  /** Results the server refused (400/413) after the batch was split to isolate them. */
  rejected_results: Count,
  /** Damaged queue files moved to queue/quarantine/. */
  quarantined_results: Count,
});
export type RuntimeStatus = z.infer<typeof RuntimeStatus>;

/** The runtime status, or `{}` when none was written (or it is unreadable: it is only informative). */
export async function readRuntimeStatus(stateDir: string): Promise<RuntimeStatus> {
  const text = await readFileIfExists(stateLayout(stateDir).status).catch(() => null);
  if (text === null) return {};
  try {
    const parsed = RuntimeStatus.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

const pending = new Map<string, Promise<unknown>>();

/**
 * Merges `patch` into status.json (a `null` value clears a field) and returns the result. Updates
 * from one process are applied in call order, so none is lost to a concurrent read-modify-write.
 */
export function updateRuntimeStatus(stateDir: string, patch: Partial<RuntimeStatus>): Promise<RuntimeStatus> {
  const previous = pending.get(stateDir) ?? Promise.resolve();
  const update = previous
    .catch(() => undefined)
    .then(async () => {
      const next = RuntimeStatus.parse({ ...(await readRuntimeStatus(stateDir)), ...patch });
      await writeRuntimeStatus(stateDir, next);
      return next;
    });
  pending.set(stateDir, update);
  void update
    .finally(() => {
      if (pending.get(stateDir) === update) pending.delete(stateDir);
    })
    .catch(() => undefined);
  return update;
}

/** Replaces status.json. */
export async function writeRuntimeStatus(stateDir: string, status: RuntimeStatus): Promise<void> {
  await writeFileAtomic(stateLayout(stateDir).status, `${JSON.stringify(status, null, 2)}\n`);
}
