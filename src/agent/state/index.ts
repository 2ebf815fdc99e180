// The agent's state directory: its one public interface. Everything under src/agent/state/ is
// private to it (eslint.config.mjs enforces that nothing else imports those files), so a path into
// the state directory is built in layout.ts only, and every change to it goes through AgentState.
// Kept light: `--help` and `status` load this file; the owner itself (agentState.ts) is loaded on open.
import type { AgentState, OpenOptions } from './agentState';

export type { AgentState, OpenOptions, Registrations, StateStep } from './agentState';
export type { PendingRegistration } from './pendingRegistration';
export type { EnrolledWith, EnrollmentRecord } from './enrollmentRecord';
export type { KeyStoreBackend, KeyStoreChoice } from './keystore/types';
export { KEYSTORE_CHOICES } from './keystore/types';
export type { PostureQueue, Segment } from './postureQueue';
export type { RuntimeStatus, StatusPatch } from './statusFile';
export type { StoredServerPolicy } from './serverPolicy';
export { resolveStateDir, serviceLogDir } from './layout';
// The same crash-safe write, for files outside the state directory (the service's unit files).
export { isCode, writeFileAtomic } from './atomicFile';

/** Opens the state directory: see AgentState and OpenOptions (agentState.ts). */
export async function openAgentState(dir: string, options?: OpenOptions): Promise<AgentState> {
  const { openAgentState: open } = await import('./agentState');
  return open(dir, options);
}
