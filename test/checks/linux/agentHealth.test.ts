// CrowdStrike Falcon and SentinelOne on Linux judged by their own reports (checks/linux/falconctl.ts,
// sentinelctl.ts, agentHealth.ts): each field that decides, the fields a PASS needs, the parts a
// parser cannot read, the ways the tools fail, and when they are asked at all. The reports are the
// recorded ones (the fixtures named below) with one field changed per case.
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../checks/engine';
import { FALCONCTL, FALCONCTL_ARGS, parseFalconctl } from '../../../checks/linux/falconctl';
import { malwareProtection } from '../../../checks/linux/malwareProtection';
import { SENTINELCTL } from '../../../checks/linux/sentinelctl';
import { resolvePolicy } from '../../../checks/policy';
import type { CommandError } from '../../../checks/types';
import { FakeHost, type RecordedCommand } from '../../support/fakeHost';
import { listFixtures } from '../../support/checkFixtures';
import { WAZUH_STATE_EXAMPLE as EXAMPLE } from '../../support/wazuhState';

const recorded = (name: string) => {
  const fixture = listFixtures().find((f) => f.platform === 'LINUX' && f.name === name)!.fixture;
  return fixture.host.commands!.map((c) => ({ ...c, stdout: c.stdout as string }));
};
// jstraw/puppet-crowdstrike's first recorded answer (sensor 6.24, healthy) and SentinelOne 30.1.1.10's reports.
const falconReport = recorded('falcon-health-report-healthy')[0]!.stdout;
const [s1Control, s1Engines] = recorded('sentinelone-enabled-engines-enabled').map((c) => c.stdout) as [string, string];

type Answer = { stdout?: string; exitCode?: number; error?: CommandError };
const answer = (argv: string[], a: Answer): RecordedCommand => ({
  argv,
  stdout: a.stdout ?? '',
  stderr: '',
  exitCode: a.error ? null : (a.exitCode ?? 0),
  ...(a.error ? { error: a.error } : {}),
});

const NOW = new Date('2026-11-21T12:00:00Z');
async function judge(agents: string[], processes: Record<string, string>, commands: RecordedCommand[]) {
  const pids = Object.keys(processes);
  const host = new FakeHost({
    dirs: { '/proc': ['1', ...pids] },
    files: { '/proc/1/comm': 'systemd', ...Object.fromEntries(pids.map((pid) => [`/proc/${pid}/comm`, processes[pid]!])) },
    commands,
  });
  const policy = resolvePolicy({ malware: { requiredAgents: { LINUX: agents } } });
  const verdict = malwareProtection.evaluate(await malwareProtection.collect(createContext(host, policy, NOW)), policy, NOW);
  return { verdict, ran: host.commandsRun() };
}

const falcon = (a: Answer) => judge(['crowdstrike'], { 2210: 'falcon-sensor' }, [answer([FALCONCTL, ...FALCONCTL_ARGS], a)]);
const sentinelOne = (control: Answer, engines: Answer) =>
  judge(['sentinelone'], { 904: 's1-agent' }, [
    answer([SENTINELCTL, 'control', 'status'], control),
    answer([SENTINELCTL, 'engines', 'status'], engines),
  ]);

describe('falconctl -g', () => {
  it('reads the three recorded sensors, the version cut from the tags glued to it', () => {
    expect(parseFalconctl(falconReport)).toEqual({
      registered: true,
      rfm: false,
      rfmReason: 'None',
      rfmCode: '0x0',
      version: '6.24.12104.0',
      unrecognizedParts: [],
    });
    // The other two answers recorded beside it (jstraw/puppet-crowdstrike@de936a5).
    expect(
      parseFalconctl(
        'aid is not set, apd is not set, aph is not set, app is not set, rfm-state=true, rfm-reason=Unspecified, code=0xC0000001, version = 5.34.9918.0Sensor grouping tags are not set,\n',
      ),
    ).toEqual({
      registered: false,
      rfm: true,
      rfmReason: 'Unspecified',
      rfmCode: '0xC0000001',
      version: '5.34.9918.0',
      unrecognizedParts: [],
    });
    expect(
      parseFalconctl(
        'aid="cf1718c142684d90741fa49cd897da62", apd is not set, aph is not set, app is not set, rfm-state=false, rfm-reason=None, code=0x0, version = 6.22.11906.0Sensor grouping tags are not set,\n',
      ),
    ).toMatchObject({ registered: true, rfm: false, version: '6.22.11906.0' });
  });

  it('reads the newer one-option answers that end in a full stop (RedHatInsights/insights-core test_falconctl.py)', () => {
    expect(parseFalconctl('rfm-state=false.')).toEqual({ rfm: false, unrecognizedParts: [] });
    expect(parseFalconctl('rfm-state=true.')).toEqual({ rfm: true, unrecognizedParts: [] });
    expect(parseFalconctl('aid="44e3b7d20b434a2bb2815d9808fa3a8b".')).toEqual({ registered: true, unrecognizedParts: [] });
    expect(parseFalconctl('backend is not set.')).toEqual({ unrecognizedParts: [] });
    // insights-core's malformed answers: not a field, numbered.
    expect(parseFalconctl('aid "44e3b7d20b434a2bb2815d9808fa3a8b" .')).toEqual({ unrecognizedParts: [1] });
  });

  it("reads kolide/launcher's recorded answers (ee/tables/crowdstrike/falconctl/test-data @ 7400d8c)", () => {
    // options.txt: an unregistered 6.38 sensor, its CID masked as recorded; cid-error.txt: no CID set.
    const options =
      'cid="ac917ab****************************", aid is not set, aph is not set, app is not set, rfm-state is not set, rfm-reason is not set, feature is not set, metadata-query=enable (unset default), version = 6.38.13501.0\n';
    expect(parseFalconctl(options)).toEqual({ registered: false, version: '6.38.13501.0', unrecognizedParts: [] });
    expect(parseFalconctl('CID is not set. Use falconctl to set the CID\nERROR: failed to process the option --cid\n')).toEqual({
      unrecognizedParts: [1, 2],
    });
    // Its parser tests' later forms: the version before a line of tags, the last option ending in a full stop.
    expect(
      parseFalconctl(
        'aph is not set, rfm-state=false, rfm-reason=None, code=0x0, version = 6.45.14203.0\ntags=kolide-test-1,kolide-test-2,',
      ),
    ).toEqual({ rfm: false, rfmReason: 'None', rfmCode: '0x0', version: '6.45.14203.0', unrecognizedParts: [] });
    expect(parseFalconctl('aph is not set, rfm-state=false, rfm-reason=None, code=0x0.\n')).toEqual({
      rfm: false,
      rfmReason: 'None',
      rfmCode: '0x0',
      unrecognizedParts: [],
    });
  });

  it('takes a value it cannot read as unread, never as true or false', () => {
    expect(parseFalconctl('aid="not-an-id", rfm-state=maybe, rfm-reason=a|b, code=12, version = unknown')).toEqual({
      unrecognizedParts: [],
    });
    expect(parseFalconctl('rfm-state is not set, aid is not set')).toEqual({ registered: false, unrecognizedParts: [] });
    // An id must be quoted as falconctl prints it; its case does not matter.
    expect(parseFalconctl('aid=bace43f9de594f479627b75adb54c294').registered).toBeUndefined();
    expect(parseFalconctl('AID="BACE43F9DE594F479627B75ADB54C294"').registered).toBe(true);
    // A value ending the answer with a comma (kolide/launcher's parser test, `-g --rfm-state`).
    expect(parseFalconctl('rfm-state=false,')).toEqual({ rfm: false, unrecognizedParts: [] });
    // Each value whole, from its first character to its last.
    const id = 'bace43f9de594f479627b75adb54c294';
    expect(parseFalconctl(`aid=x"${id}"`).registered).toBeUndefined();
    expect(parseFalconctl(`aid="${id}"x`).registered).toBeUndefined();
    expect(parseFalconctl('rfm-reason=|None, code=x0x0, version = v6.24.1')).toEqual({ unrecognizedParts: [] });
    expect(parseFalconctl('code=0x0z')).toEqual({ unrecognizedParts: [] });
    expect(parseFalconctl('version = 10.0.1')).toEqual({ version: '10.0.1', unrecognizedParts: [] });
    // A part that only contains a field is not that field.
    expect(parseFalconctl('sensor says: rfm-state=true')).toEqual({ unrecognizedParts: [1] });
  });

  it('reads each option by its own name only', () => {
    expect(parseFalconctl('apd=0x0, aph=None, app=6.24.12104.0, cid="bace43f9de594f479627b75adb54c294", feature=true')).toEqual({
      unrecognizedParts: [],
    });
  });

  it('passes on the recorded healthy report only', async () => {
    expect((await falcon({ stdout: falconReport })).verdict).toMatchObject({ status: 'PASS', evidence: { falcon: { rfm: false } } });
    // Without a reason, a code or a part it cannot read, the evidence names none.
    const { verdict } = await falcon({ stdout: falconReport.replace('rfm-reason=None, code=0x0, ', '') });
    expect(verdict.status).toBe('PASS');
    expect(Object.keys(verdict.evidence.falcon as object)).toEqual(['rfm', 'registered', 'version']);
  });

  it('FAILs a sensor in reduced functionality mode, and one that never registered', async () => {
    const rfm = await falcon({ stdout: falconReport.replace('rfm-state=false', 'rfm-state=true') });
    expect(rfm.verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'reduced_functionality_mode', falcon: { rfm: true } } });
    const unregistered = await falcon({ stdout: falconReport.replace(/aid="[0-9a-f]+"/, 'aid is not set') });
    expect(unregistered.verdict).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_not_registered', falcon: { registered: false } },
    });
  });

  it('is UNKNOWN when a deciding field is missing, naming it and the parts it could not read', async () => {
    const noRfm = await falcon({ stdout: falconReport.replace('rfm-state=false, ', 'rfm-state is not set, ') });
    expect(noRfm.verdict).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', fields_unread: ['rfm-state'] },
    });
    const noAid = await falcon({ stdout: `Sensor says hello, ${falconReport.replace(/aid="[0-9a-f]+", /, '')}` });
    expect(noAid.verdict).toMatchObject({
      status: 'UNKNOWN',
      evidence: { agent: 'falcon-sensor', fields_unread: ['aid'], falcon: { unrecognized_parts: [1] } },
    });
  });

  it('is UNKNOWN when falconctl cannot answer (a user is refused, the tool is missing, it exits non-zero)', async () => {
    for (const [a, error] of [
      [{ error: 'permission_denied' }, 'permission_denied'],
      [{ error: 'not_found' }, 'command_not_found'],
      [{ stdout: falconReport, exitCode: 1 }, 'exit_status'],
    ] as const) {
      const { verdict } = await falcon(a);
      expect(verdict).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'agent_health_unreadable', health_error: error } });
    }
  });
});

describe('sentinelctl', () => {
  it('passes on the recorded reports, asking each once', async () => {
    const { verdict, ran } = await sentinelOne({ stdout: s1Control }, { stdout: s1Engines });
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { sentinelone: { agent_state: 'Enabled' } } });
    expect(verdict.evidence.sentinelone).not.toHaveProperty('unrecognized_lines');
    expect(ran).toHaveLength(2);
  });

  it('FAILs a disabled agent, and names each disabled engine', async () => {
    const disabled = await sentinelOne({ stdout: s1Control.replace('Enabled', 'Disabled') }, { stdout: s1Engines });
    expect(disabled.verdict).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disabled', sentinelone: { agent_state: 'Disabled' } },
    });
    const dfiOff = await sentinelOne({ stdout: s1Control }, { stdout: s1Engines.replace(/^(DFI engine +)Enabled/m, '$1Disabled') });
    expect(dfiOff.verdict).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'protection_engine_disabled', engines_disabled: ['dfi_engine'] },
    });
    const bothOff = await sentinelOne({ stdout: s1Control }, { stdout: s1Engines.replace(/Enabled/g, 'disabled') });
    expect(bothOff.verdict.evidence).toMatchObject({ engines_disabled: ['dfi_engine', 'dynamic_engine'] });
  });

  it('reads indented lines and a colon followed by several spaces', async () => {
    const { verdict } = await sentinelOne({ stdout: '   Agent state:      Enabled\n' }, { stdout: s1Engines });
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { sentinelone: { agent_state: 'Enabled' } } });
  });

  it('reads `name: value` lines too, and numbers the lines that are no field', async () => {
    const { verdict } = await sentinelOne({ stdout: `Agent state: Enabled\n----\n` }, { stdout: `${s1Engines}+++\n` });
    expect(verdict).toMatchObject({
      status: 'PASS',
      evidence: { sentinelone: { agent_state: 'Enabled', unrecognized_lines: ['control status:2', 'engines status:8'] } },
    });
  });

  it('never PASSes a state word it does not know, nor reports missing a deciding field', async () => {
    const pending = await sentinelOne({ stdout: s1Control.replace('Enabled', 'Pending reboot') }, { stdout: s1Engines });
    expect(pending.verdict).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', agent: 'sentinelone', fields_unread: ['agent_state'] },
    });
    const noEngines = await sentinelOne({ stdout: s1Control }, { stdout: 'DFI library                         Initialized\n' });
    expect(noEngines.verdict.evidence).toMatchObject({ fields_unread: ['dfi_engine', 'dynamic_engine'] });
    for (const word of ['Enabled!', '1Enabled']) {
      const oddWord = await sentinelOne({ stdout: `Agent state      ${word}\n` }, { stdout: s1Engines });
      expect(oddWord.verdict.evidence).toMatchObject({ fields_unread: ['agent_state'], sentinelone: { agent_state: null } });
    }
  });

  it('is UNKNOWN when either report cannot be had, saying how', async () => {
    const refused = await sentinelOne({ error: 'permission_denied' }, { stdout: s1Engines });
    expect(refused.verdict).toMatchObject({ status: 'UNKNOWN', evidence: { agent: 'sentinelone', health_error: 'permission_denied' } });
    const failed = await sentinelOne({ stdout: s1Control }, { stdout: '', exitCode: 2 });
    expect(failed.verdict).toMatchObject({ status: 'UNKNOWN', evidence: { health_error: 'exit_status' } });
  });
});

describe('which reports are asked', () => {
  it('asks no tool of an agent that does not run: it FAILs on that alone', async () => {
    const { verdict, ran } = await judge(['crowdstrike', 'sentinelone'], {}, []);
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'required_agent_not_running' } });
    expect(ran).toEqual([]);
  });

  it('asks each required product once whatever its names, and says which agents only a process judges', async () => {
    const { verdict, ran } = await judge(['crowdstrike', 'falcon-sensor', 'acme-edr'], { 2210: 'falcon-sensor', 2300: 'acme-edr' }, [
      answer([FALCONCTL, ...FALCONCTL_ARGS], { stdout: falconReport }),
    ]);
    expect(verdict).toMatchObject({ status: 'PASS', evidence: { judged_by_process: ['acme-edr'] } });
    expect(ran).toEqual([[FALCONCTL, ...FALCONCTL_ARGS]]);
  });

  it("lets a FAIL that one report proves outrank another's UNKNOWN, and an UNKNOWN outrank a PASS", async () => {
    const defenderUnread = answer(['/usr/bin/mdatp', 'health'], { error: 'permission_denied' });
    const processes = { 1100: 'wdavdaemon', 2210: 'falcon-sensor' };
    const rfm = await judge(['mdatp', 'crowdstrike'], processes, [
      defenderUnread,
      answer([FALCONCTL, ...FALCONCTL_ARGS], { stdout: falconReport.replace('rfm-state=false', 'rfm-state=true') }),
    ]);
    expect(rfm.verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'reduced_functionality_mode', falcon: { rfm: true } } });
    expect(rfm.verdict.evidence).not.toHaveProperty('health_error');
    const healthy = await judge(['mdatp', 'crowdstrike'], processes, [
      defenderUnread,
      answer([FALCONCTL, ...FALCONCTL_ARGS], { stdout: falconReport }),
    ]);
    expect(healthy.verdict).toMatchObject({
      status: 'UNKNOWN',
      evidence: {
        reason: 'agent_health_unreadable',
        agent: 'microsoft-defender',
        health_error: 'permission_denied',
        falcon: { rfm: false },
      },
    });
  });

  it('FAILs on any required product whose report fails, whichever other passes', async () => {
    const { verdict } = await judge(['sentinelone', 'crowdstrike'], { 904: 's1-agent', 2210: 'falcon-sensor' }, [
      answer([FALCONCTL, ...FALCONCTL_ARGS], { stdout: falconReport }),
      answer([SENTINELCTL, 'control', 'status'], { stdout: s1Control.replace('Enabled', 'Disabled') }),
      answer([SENTINELCTL, 'engines', 'status'], { stdout: s1Engines }),
    ]);
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'agent_disabled', falcon: { rfm: false } } });
  });
});

// The Wazuh agent's state file (checks/wazuhState.ts), from Wazuh's documented example
// (test/support/wazuhState.ts). One field changed per case.
describe('Wazuh state file', () => {
  const CURRENT = '/var/ossec/var/run/wazuh-agentd.state';
  const OLDER = '/var/ossec/var/run/ossec-agentd.state';
  async function wazuh(files: Record<string, string | { error: 'permission_denied' }>, agents = ['wazuh-agent', 'acme-edr']) {
    const host = new FakeHost({
      dirs: { '/proc': ['1', '812', '900'] },
      files: { '/proc/1/comm': 'systemd', '/proc/812/comm': 'wazuh-agentd', '/proc/900/comm': 'acme-edr', ...files },
    });
    const policy = resolvePolicy({ malware: { requiredAgents: { LINUX: agents } } });
    return malwareProtection.evaluate(await malwareProtection.collect(createContext(host, policy, NOW)), policy, NOW);
  }

  it('passes a connected agent; only other names are judged by their process', async () => {
    expect(await wazuh({ [CURRENT]: EXAMPLE.replace('ossec-agentd', 'wazuh-agentd') })).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'required_agents_running', wazuh: { status: 'connected' }, judged_by_process: ['acme-edr'] },
    });
    // Before 4.2 the file had the daemon's older name; a newer agent's file wins over a leftover.
    expect(await wazuh({ [OLDER]: EXAMPLE })).toMatchObject({ status: 'PASS', evidence: { wazuh: { status: 'connected' } } });
    expect(await wazuh({ [CURRENT]: EXAMPLE.replace("status='connected'", "status='disconnected'"), [OLDER]: EXAMPLE })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disconnected' },
    });
  });

  it('FAILs a disconnected agent and is UNKNOWN while it has not connected yet', async () => {
    expect(await wazuh({ [CURRENT]: EXAMPLE.replace("status='connected'", "status='disconnected'") })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disconnected', wazuh: { status: 'disconnected' } },
    });
    expect(await wazuh({ [CURRENT]: EXAMPLE.replace("status='connected'", "status='pending'") })).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_connecting', agent: 'wazuh-agent', wazuh: { status: 'pending' } },
    });
  });

  it('is UNKNOWN, never PASS from wazuh-agentd running, when the state cannot be read', async () => {
    const unreadable = (evidence: Record<string, unknown>) => ({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', agent: 'wazuh-agent', ...evidence },
    });
    expect(await wazuh({})).toMatchObject(unreadable({ health_error: 'not_found' }));
    expect(await wazuh({ [CURRENT]: { error: 'permission_denied' } })).toMatchObject(unreadable({ health_error: 'permission_denied' }));
    for (const status of ["status='unknown'", "status='Connected'", "status = 'connected'", "xstatus='connected'"]) {
      expect(await wazuh({ [CURRENT]: EXAMPLE.replace("status='connected'", status) }), status).toMatchObject(
        unreadable({ fields_unread: ['status'] }),
      );
    }
  });

  it('reads no state file unless Wazuh is required and runs', async () => {
    const host = new FakeHost({ dirs: { '/proc': ['1'] }, files: { '/proc/1/comm': 'systemd' } });
    const policy = resolvePolicy({ malware: { requiredAgents: { LINUX: ['wazuh-agent'] } } });
    const verdict = malwareProtection.evaluate(await malwareProtection.collect(createContext(host, policy, NOW)), policy, NOW);
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'required_agent_not_running' } });
    expect(host.calls.filter((c) => c.kind === 'readFile' && c.target.startsWith('/var/ossec'))).toEqual([]);
  });
});
