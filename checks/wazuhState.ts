// The Wazuh agent judged by its own state report, not by wazuh-agentd running (issue 32): the
// daemon rewrites its state file every `agent.state_interval` seconds (client-agent/state.c, written
// to a temporary file and renamed): `status='connected'` (the manager acknowledged it within the
// notify time), `'disconnected'` (connection lost or no acknowledgement), `'pending'` (not connected
// since it started). Linux and FreeBSD keep it in the same place; before Wazuh 4.2 the daemon was
// ossec-agentd.
import type { FileResult, Host } from './types';

const WAZUH_STATE_FILES = ['/var/ossec/var/run/wazuh-agentd.state', '/var/ossec/var/run/ossec-agentd.state'] as const;

export type WazuhStatus = 'connected' | 'disconnected' | 'pending';

/** The first state file that exists (a newer agent's over a leftover of the older name), else the first one's failure. */
export async function readWazuhState(host: Host): Promise<FileResult> {
  const [current, older] = await Promise.all(WAZUH_STATE_FILES.map((path) => host.readFile(path)));
  return !current!.ok && current!.error === 'not_found' && older!.ok ? older! : current!;
}

/** The status word the state file carries, when it is one of the three state.c writes. */
export function parseWazuhStatus(text: string): WazuhStatus | undefined {
  const word = /^status='([a-z]+)'\s*$/m.exec(text)?.[1];
  return word === 'connected' || word === 'disconnected' || word === 'pending' ? word : undefined;
}
