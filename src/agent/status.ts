// What `status` reports: the enrollment record, the key store's answer and the daemon's runtime
// status. Local only: no network.
import { KeyStoreUnavailableError, StateCorruptError, firstLine } from './errors';
import type { AgentState, EnrolledWith, EnrollmentRecord, KeyStoreBackend, KeyStoreChoice, RuntimeStatus } from './state';

export interface StatusReport extends RuntimeStatus {
  enrolled: boolean;
  state_dir: string;
  server_url: string | null;
  device_id: string | null;
  /** The enrollment's key store; when not enrolled, the one an enrollment would use now. */
  keystore: KeyStoreBackend;
  /** Whether the key store answered with this enrollment's key (enrolled only). */
  key_available?: boolean;
  /** Why the key could not be read (enrolled only). */
  keystore_error?: string;
  enrolled_at: string | null;
  /** How the device enrolled: `{method: "token"}` or `{method: "enroll_secret", secret_id}` (never the secret); null when not enrolled. */
  enrolled_with: EnrolledWith | null;
  queued_results: number;
  last_heartbeat_at: string | null;
  last_upload_at: string | null;
  /** An enrollment or unenrollment was cut short (or could not finish); the next one cleans up. */
  interrupted?: 'enrolling' | 'wiping';
  /** Pid of the running daemon (`device-agent run`) for this state directory, or null. */
  daemon_pid: number | null;
}

/** `state` opened read-only: an interrupted operation is reported, not finished. */
export async function collectStatus(state: AgentState, keystoreChoice: KeyStoreChoice): Promise<StatusReport> {
  const [record, runtime, daemonPid] = await Promise.all([
    state.enrollment().catch((err: unknown) => {
      if (err instanceof StateCorruptError) throw err;
      throw new StateCorruptError(firstLine(err));
    }),
    state.status.read(),
    state.daemonPid(),
  ]);
  const enrolled: EnrollmentRecord | null = record?.state === 'enrolled' ? record : null;
  const report: StatusReport = {
    ...runtime,
    enrolled: enrolled !== null,
    state_dir: state.dir,
    server_url: enrolled?.server_url ?? null,
    device_id: enrolled ? (runtime.device_id ?? null) : null,
    keystore: enrolled?.keystore ?? (await state.prospectiveKeyStore(keystoreChoice)),
    enrolled_at: enrolled?.enrolled_at ?? null,
    // Records written before enrollment secrets existed came from a token.
    enrolled_with: enrolled ? (enrolled.enrolled_with ?? { method: 'token' }) : null,
    queued_results: enrolled ? (runtime.queued_results ?? 0) : 0,
    last_heartbeat_at: enrolled ? (runtime.last_heartbeat_at ?? null) : null,
    last_upload_at: enrolled ? (runtime.last_upload_at ?? null) : null,
    daemon_pid: daemonPid,
  };
  if (record !== null && record.state !== 'enrolled') report.interrupted = record.state;
  if (enrolled) {
    try {
      await state.apiKey(enrolled);
      report.key_available = true;
    } catch (err) {
      if (!(err instanceof KeyStoreUnavailableError)) throw err;
      report.key_available = false;
      report.keystore_error = err.message;
    }
  }
  return report;
}

/** How the device enrolled, in words (`status`, `doctor`): the secret's id, never the secret. */
export function enrolledWithText(enrolledWith: EnrolledWith | undefined): string {
  return enrolledWith?.method === 'enroll_secret' ? `the enrollment secret ${enrolledWith.secret_id}` : 'a one-time enrollment token';
}
