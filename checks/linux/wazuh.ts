// The Wazuh agent on Linux judged by its state file (checks/wazuhState.ts), not by wazuh-agentd
// running: disconnected from its manager it reports nothing, whatever runs.
import type { FileResult } from '../types';
import { fsFailureReason } from '../verdict';
import { parseWazuhStatus, type WazuhStatus } from '../wazuhState';
import { failed, unreadable, type HealthReading, type Judgement } from './agentHealth';

export function readWazuhHealth(file: FileResult): HealthReading<WazuhStatus | undefined> {
  return file.ok ? { ok: true, health: parseWazuhStatus(file.text) } : { ok: false, error: fsFailureReason(file.error) };
}

export function judgeWazuh(reading: HealthReading<WazuhStatus | undefined>) {
  if (!reading.ok) return unreadable('wazuh-agent', { health_error: reading.error });
  const status = reading.health;
  if (status === undefined) return unreadable('wazuh-agent', { fields_unread: ['status'] });
  const evidence = { wazuh: { status } };
  if (status === 'disconnected') return failed(evidence, 'agent_disconnected');
  if (status === 'pending') {
    const connecting: Judgement<never, 'agent_connecting'> = {
      evidence,
      outcome: { status: 'UNKNOWN', reason: 'agent_connecting', detail: { agent: 'wazuh-agent' } },
    };
    return connecting;
  }
  return { evidence };
}
