// The daemon's record of itself in status.json (for `status`) and its state-change log lines.
// status.json is informative: when it cannot be written (disk full, read-only), the daemon goes on;
// the failure is logged once, and once more when writing works again, never on every attempt.
import type { Logger } from 'pino';
import { firstLine } from './errors';
import type { StatusPatch } from './state';

/** status.json as the state owner lets the daemon change it (state/statusFile.ts). */
interface StatusWriter {
  update(patch: StatusPatch, increments?: Record<string, number>): Promise<unknown>;
}

export type DaemonState =
  | 'waiting_for_enrollment'
  | 'keystore_unavailable'
  | 'starting'
  | 'active'
  | 'backing_off'
  | 'conflict'
  | 'revoked'
  | 'stopping'
  | 'stopped';

/**
 * A local operation that may fail for a while (a write on a full disk): its first failure is logged
 * at `error`, repeats are silent, and the recovery is logged once.
 */
export class LocalFault {
  private failing = false;

  constructor(
    private readonly log: Logger,
    private readonly event: string,
    private readonly what: string,
  ) {}

  get active(): boolean {
    return this.failing;
  }

  failed(err: unknown, fields: Record<string, unknown> = {}): void {
    if (this.failing) return;
    this.failing = true;
    this.log.error({ event: this.event, error: firstLine(err), ...fields }, `cannot ${this.what}: ${firstLine(err)}`);
  }

  succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.log.info({ event: `${this.event}_resolved` }, `can ${this.what} again`);
  }
}

export class DaemonStatus {
  private current: DaemonState | null = null;
  private readonly writeFault: LocalFault;

  constructor(
    private readonly file: StatusWriter,
    private readonly log: Logger,
    /** `run --once` is not a daemon: it records the fields but no daemon state. */
    private readonly recordsState: boolean,
  ) {
    this.writeFault = new LocalFault(log, 'status_write_failed', 'update status.json');
  }

  get state(): DaemonState | null {
    return this.current;
  }

  /**
   * Records the state with other status fields and counter increments. `message` explains the state:
   * undefined keeps the current one, except that a change to active/starting clears it; null clears it.
   */
  async set(state: DaemonState, message?: string | null, patch: StatusPatch = {}, increments: Record<string, number> = {}): Promise<void> {
    const changed = state !== this.current;
    this.current = state;
    if (!this.recordsState) return this.write(patch, increments);
    if (changed) {
      this.log.info({ event: 'state', state, ...(message ? { detail: message } : {}) }, `state: ${state}`);
      if (message === undefined && (state === 'active' || state === 'starting')) message = null;
    }
    await this.write({ daemon_state: state, ...(message !== undefined ? { daemon_message: message } : {}), ...patch }, increments);
  }

  /** Merges fields and adds to counters; a failure is logged (once), never thrown. */
  async write(patch: StatusPatch, increments: Record<string, number> = {}): Promise<void> {
    try {
      await this.file.update(patch, increments);
      this.writeFault.succeeded();
    } catch (err) {
      this.writeFault.failed(err);
    }
  }
}
