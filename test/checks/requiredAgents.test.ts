// Required agents by process (checks/requiredAgents.ts), as LINUX and FREEBSD MALWARE_PROTECTION use them.
import { describe, expect, it } from 'vitest';
import { agentProcesses, agentRunning, ANTIMALWARE_AGENTS, missingProcesses } from '../../checks/requiredAgents';

describe('required agents', () => {
  it('maps known names and aliases to their daemons, any other name to itself cut to the comm length', () => {
    expect(agentProcesses('ClamAV', 15)).toEqual(['clamd', 'freshclam']);
    expect(agentProcesses('mdatp', 15)).toEqual(['wdavdaemon']);
    expect(agentProcesses('crowdstrike', 19)).toEqual(['falcon-sensor']);
    expect(agentProcesses('wazuh-agent', 19)).toEqual(['wazuh-agentd']);
    expect(agentProcesses('acme-endpoint-protection', 15)).toEqual(['acme-endpoint-p']);
    expect(agentProcesses('acme-endpoint-protection', 19)).toEqual(['acme-endpoint-prote']);
  });

  it('needs every process of an agent', () => {
    const running = new Set(['clamd', 'osqueryd']);
    const isRunning = (comm: string) => running.has(comm);
    expect(missingProcesses(['clamav', 'osquery'], 19, isRunning)).toEqual({ clamav: ['freshclam'], osquery: [] });
    expect(agentRunning('osquery', 19, isRunning)).toBe(true);
    expect(ANTIMALWARE_AGENTS).not.toContain('osquery');
  });
});
