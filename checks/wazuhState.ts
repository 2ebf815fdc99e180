// The Wazuh agent judged by its own state report, not by wazuh-agentd running (issue 32): the
// daemon rewrites its state file every `agent.state_interval` seconds (client-agent/state.c, written
// to a temporary file and renamed): `status='connected'` (the manager acknowledged it within the
// notify time), `'disconnected'` (connection lost or no acknowledgement), `'pending'` (not connected
// since it started). Wazuh's packages and FreeBSD's security/wazuh-agent port (WAZUHPREFIX
// /var/ossec) keep it in the same place; before Wazuh 4.2 the daemon was ossec-agentd.
import type { FileResult, Host } from './types';
import { fsFailureReason, type FsFailureReason } from './verdict';

const WAZUH_STATE_FILES = ['/var/ossec/var/run/wazuh-agentd.state', '/var/ossec/var/run/ossec-agentd.state'] as const;

type WazuhStatus = 'connected' | 'disconnected' | 'pending';

/** The first state file that exists (a newer agent's over a leftover of the older name), else the first one's failure. */
export async function readWazuhState(host: Host): Promise<FileResult> {
  const [current, older] = await Promise.all(WAZUH_STATE_FILES.map((path) => host.readFile(path)));
  return !current!.ok && current!.error === 'not_found' && older!.ok ? older! : current!;
}

/** What the state file says: connected, or the platform-neutral word for why not. */
export type WazuhJudgement =
  | { status: 'connected' }
  | { status: 'disconnected'; rule: 'agent_disconnected' }
  | { status: 'pending'; reason: 'agent_connecting' }
  | { reason: 'agent_health_unreadable'; detail: { health_error: FsFailureReason } | { fields_unread: ['status'] } };

export function judgeWazuhState(file: FileResult): WazuhJudgement {
  if (!file.ok) return { reason: 'agent_health_unreadable', detail: { health_error: fsFailureReason(file.error) } };
  const word = /^status='([a-z]+)'\s*$/m.exec(file.text)?.[1] as WazuhStatus | undefined;
  if (word === 'connected') return { status: word };
  if (word === 'disconnected') return { status: word, rule: 'agent_disconnected' };
  if (word === 'pending') return { status: word, reason: 'agent_connecting' };
  return { reason: 'agent_health_unreadable', detail: { fields_unread: ['status'] } };
}
