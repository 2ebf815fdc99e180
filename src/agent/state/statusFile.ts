// status.json: what the daemon last observed, for `status`. Written atomically; unknown fields are
// kept, so a newer daemon's additions survive an older CLI's update. StatusFile is its only writer:
// every change is a read-modify-write under status.lock, so the daemon, `enroll`, `unenroll` and a
// wipe never lose each other's updates, whichever process they run in.
import { readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod/mini';
import { Rfc3339 } from '../../protocol/rfc3339';
import { syncDirectory, writeFileAtomic } from './atomicFile';
import type { StateLayout } from './layout';
import { acquireLock } from './lock';

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

/** A patch of the status: a `null` value clears a field. */
export type StatusPatch = Partial<RuntimeStatus> & Record<string, unknown>;

/** How long a status writer waits for another one (a write takes milliseconds). */
const STATUS_LOCK_TIMEOUT_MS = 30_000;

export class StatusFile {
  /** This process's writes, in call order: each waits for the previous one before taking the lock. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly layout: Pick<StateLayout, 'status' | 'statusLock'>) {}

  /** The runtime status, or `{}` when none was written (or it is unreadable: it is only informative). */
  async read(): Promise<RuntimeStatus> {
    try {
      const parsed = RuntimeStatus.safeParse(JSON.parse(await readFile(this.layout.status, 'utf8')));
      return parsed.success ? parsed.data : {};
    } catch {
      return {}; // none written, unreadable, or not JSON
    }
  }

  /**
   * Merges `patch` into status.json and adds `increments` to its counters; returns the result.
   * Nothing is written when there is nothing to change.
   */
  update(patch: StatusPatch, increments: Record<string, number> = {}): Promise<RuntimeStatus> {
    if (Object.keys(patch).length === 0 && !Object.values(increments).some((n) => n > 0)) return this.read();
    return this.exclusive(async () => {
      const current = (await this.read()) as Record<string, unknown>;
      const counters: Record<string, number> = {};
      for (const [field, n] of Object.entries(increments)) {
        if (n > 0) counters[field] = (typeof current[field] === 'number' ? current[field] : 0) + n;
      }
      const next = RuntimeStatus.parse({ ...current, ...patch, ...counters });
      await writeFileAtomic(this.layout.status, `${JSON.stringify(next, null, 2)}\n`);
      return next;
    });
  }

  /** Replaces status.json with `status`, or removes it (null). */
  replace(status: RuntimeStatus | null): Promise<void> {
    return this.exclusive(async () => {
      if (status !== null) {
        await writeFileAtomic(this.layout.status, `${JSON.stringify(status, null, 2)}\n`);
        return;
      }
      await rm(this.layout.status, { force: true });
      await syncDirectory(dirname(this.layout.status));
    });
  }

  private exclusive<T>(write: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      const lock = await acquireLock(this.layout.statusLock, { wait: true, timeoutMs: STATUS_LOCK_TIMEOUT_MS });
      try {
        return await write();
      } finally {
        await lock.release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
