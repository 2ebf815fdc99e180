// Required agents by process (checks/requiredAgents.ts) on a process table's command names
// (checks/runningCommands.ts), as LINUX and FREEBSD MALWARE_PROTECTION use them.
import { describe, expect, it } from 'vitest';
import {
  agentProcesses,
  agentRunning,
  ANTIMALWARE_AGENTS,
  DARWIN_AGENT_NAMES,
  healthReportOf,
  missingProcesses,
} from '../../checks/requiredAgents';
import { RunningCommands } from '../../checks/runningCommands';

describe('running commands', () => {
  it('compares names cut to the length the process table keeps', () => {
    const linux = new RunningCommands(['systemd-timesyn', 'acme-endpoint-p'], 15);
    expect(linux.has('systemd-timesyncd')).toBe(true);
    expect(linux.among(['chronyd', 'systemd-timesyncd', 'acme-endpoint-protection', 'systemd-timesyncd'])).toEqual([
      'systemd-timesyncd',
      'acme-endpoint-protection',
    ]);
    const freebsd = new RunningCommands(['cinnamon-screensave'], 19);
    expect(freebsd.has('cinnamon-screensaver')).toBe(true);
    expect(freebsd.has('cinnamon')).toBe(false);
  });

  it('matches a full name exactly where the table knows it, so a longer name sharing the cut prefix does not match', () => {
    const linux = new RunningCommands(['falcon-sensor-bpf', 'systemd-timesyn'], 15);
    expect(linux.has('falcon-sensor-bpf')).toBe(true);
    expect(linux.has('falcon-sensor-bogus')).toBe(false);
    expect(linux.has('falcon-sensor')).toBe(false);
    expect(linux.has('systemd-timesyncd')).toBe(true);
  });
});

describe('required agents', () => {
  it('maps known names and aliases to their daemons, any other name to itself', () => {
    expect(agentProcesses('ClamAV')).toEqual(['clamd', 'freshclam']);
    expect(agentProcesses('mdatp')).toEqual(['wdavdaemon']);
    expect(agentProcesses('crowdstrike')).toEqual(['falcon-sensor|falcon-sensor-bpf']);
    expect(agentProcesses('wazuh-agent')).toEqual(['wazuh-agentd']);
    expect(agentProcesses('acme-endpoint-protection')).toEqual(['acme-endpoint-protection']);
  });

  it('needs every process of an agent, a long custom name matching its cut command name', () => {
    const running = new RunningCommands(['clamd', 'osqueryd', 'acme-endpoint-p'], 15);
    expect(missingProcesses(['clamav', 'osquery', 'acme-endpoint-protection'], running)).toEqual({
      clamav: ['freshclam'],
      osquery: [],
      'acme-endpoint-protection': [],
    });
    expect(agentRunning('osquery', running)).toBe(true);
    expect(ANTIMALWARE_AGENTS).not.toContain('osquery');
  });

  it("takes either of an agent's alternative processes (CrowdStrike in kernel-module or eBPF mode)", () => {
    const bpf = new RunningCommands(['falcond', 'falcon-sensor-bpf'], 15);
    expect(agentRunning('falcon-sensor', bpf)).toBe(true);
    expect(missingProcesses(['crowdstrike'], bpf)).toEqual({ crowdstrike: [] });
    const none = new RunningCommands(['falcond'], 15);
    expect(missingProcesses(['crowdstrike'], none)).toEqual({ crowdstrike: ['falcon-sensor|falcon-sensor-bpf'] });
  });
});

describe('DARWIN names', () => {
  // The macOS collector asks each name's product for its report: no name may lack one.
  it('are exactly the products with a health report and their aliases', () => {
    expect(Object.fromEntries(DARWIN_AGENT_NAMES.map((name) => [name, healthReportOf(name)]))).toEqual({
      'microsoft-defender': 'microsoft-defender',
      mdatp: 'microsoft-defender',
      'falcon-sensor': 'falcon-sensor',
      crowdstrike: 'falcon-sensor',
      sentinelone: 'sentinelone',
    });
  });
});
