// The Wazuh agent on Linux judged by its state file (checks/wazuhState.ts), not by wazuh-agentd
// running: disconnected from its manager it reports nothing, whatever runs.
import type { FileResult } from '../types';
import { judgeWazuhState } from '../wazuhState';
import { failed, unreadable, type Judgement } from '../agentHealth';

export function judgeWazuh(file: FileResult): Judgement<'agent_disconnected', 'agent_connecting' | 'agent_health_unreadable'> {
  const state = judgeWazuhState(file);
  if (!('status' in state)) return unreadable('wazuh-agent', state.detail);
  const evidence = { wazuh: { status: state.status } };
  if ('rule' in state) return failed(evidence, state.rule);
  if ('reason' in state) return { evidence, outcome: { status: 'UNKNOWN', reason: state.reason, detail: { agent: 'wazuh-agent' } } };
  return { evidence };
}
