// Products required on a Mac judged by their own health reports (checks/darwin/protectionAgents.ts,
// with Gatekeeper and XProtect in checks/darwin/malwareProtection.ts): each field that decides, the
// words a PASS needs, the ways the tools fail, when they are asked at all, and how the products'
// verdict joins the built-in one. The reports are the recorded ones (the fixtures named below, and
// fleetdm/fleet#2633's `falconctl stats` as the search tool stores it) with one field changed per
// case; the built-in facts are the evaluator tests' own (evaluators.test.ts).
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../checks/engine';
import { evaluateMalwareProtection, malwareProtection, type MalwareFacts } from '../../../checks/darwin/malwareProtection';
import type { PlistFile } from '../../../checks/darwin/probes';
import {
  FALCONCTL,
  judgeFalconStats,
  judgeSentinelctlStatus,
  MDATP,
  parseFalconStats,
  parseSentinelctlStatus,
  reportFields,
  SENTINELCTL,
  type AgentReports,
} from '../../../checks/darwin/protectionAgents';
import { parseMdatpHealthJson, readMdatpHealthJson } from '../../../checks/mdatp';
import { resolvePolicy } from '../../../checks/policy';
import type { CommandResult } from '../../../checks/types';
import { FakeHost } from '../../support/fakeHost';
import { listFixtures } from '../../support/checkFixtures';

const recorded = (name: string) => {
  const fixture = listFixtures().find((f) => f.platform === 'DARWIN' && f.name === name)!.fixture;
  return fixture.host.commands![0]!.stdout as string;
};
// glpi-agent's SentinelOne 23.4.1.7125 `sentinelctl status` and Defender 101.98.30's JSON report.
const s1Status = recorded('unknown-sentinelone-enabled-gatekeeper-not-recorded');
const defenderJson = recorded('unknown-defender-healthy-gatekeeper-not-recorded');
// fleetdm/fleet#2633 (comment of 2024-06-14): a Mac's `falconctl stats`, as far as the stored copy
// of the issue goes (it is cut inside the `Event Sums` table, before the agent_info section).
const falconStatsStart = `=== CloudInfo ===

Cloud Info
    Host: blah.net
    Port: 443
    State: connected


=== Communications ===

Message Store
    Capacity: 380
    Size: 0

Cloud Activity
    Attempts: 1
    Connects: 1
    Failures: 0
    Timeouts: 0
    Malformed Messages: 0
    Errors: 0
    Established At: Jun 14, 2024 at 6:01:56 PM
    Last Established At: 

Event Sums                                                 1m       5m       1h       4h       8h       12h      1d       
    Sent                                                   127      771      771      771      771      771      771      
    Received                                               14       38       38       38       38       38       38       
`;
// The agent_info lines as macOS admin scripts read them (cainehorr/Jamf_Extension_Attributes greps
// `Sensor operational:` in `falconctl stats agent_info`; glpi-agent's MacOS CrowdStrike module
// matches `Sensor operational: true` and `version:`).
const agentInfo = (operational: string) => `\n=== agent_info ===\nversion: 7.10.19103.0\nSensor operational: ${operational}\n`;

const ok = (stdout: string, exitCode = 0): CommandResult => ({ exitCode, stdout, stderr: '' });
const missing: CommandResult = { exitCode: null, stdout: '', stderr: '', error: 'not_found' };
const NOW = new Date('2026-11-21T12:00:00Z');

describe('sentinelctl status', () => {
  it('reads the recorded report: the first value of each field under its heading, headings and empty values skipped', () => {
    expect(parseSentinelctlStatus(s1Status)).toEqual({
      operationalState: 'enabled',
      protection: 'enabled',
      ready: 'yes',
      version: '23.4.1.7125',
    });
    expect(judgeSentinelctlStatus({ ok: true, health: parseSentinelctlStatus(s1Status) })).toEqual({
      evidence: { sentinelone: { operational_state: 'enabled', protection: 'enabled', ready: 'yes', version: '23.4.1.7125' } },
    });
  });

  const judged = (from: RegExp, to: string) =>
    judgeSentinelctlStatus({ ok: true, health: parseSentinelctlStatus(s1Status.replace(from, to)) });

  it('FAILs a disabled agent first, then disabled protection', () => {
    expect(judged(/(Agent Operational State: +)enabled/, '$1disabled').outcome).toEqual({ status: 'FAIL', rule: 'agent_disabled' });
    expect(judged(/(Protection: +)enabled/, '$1Disabled').outcome).toEqual({ status: 'FAIL', rule: 'protection_disabled' });
    const both = s1Status.replace(/(Protection: +)enabled/, '$1disabled').replace(/(Operational State: +)enabled/, '$1disabled');
    expect(judgeSentinelctlStatus({ ok: true, health: parseSentinelctlStatus(both) }).outcome).toMatchObject({ rule: 'agent_disabled' });
  });

  it('names every field missing or with a word whose meaning is not known, and never PASSes then', () => {
    expect(judged(/(Ready: +)yes/, '$1no').outcome).toEqual({
      status: 'UNKNOWN',
      reason: 'agent_health_unreadable',
      detail: { agent: 'sentinelone', fields_unread: ['Ready'] },
    });
    expect(judged(/(Agent Operational State: +)enabled/, '$1Disabled by user (maybe)').outcome).toMatchObject({
      detail: { fields_unread: ['Agent Operational State'] },
    });
    expect(judged(/ +Protection: +enabled\n/, '').outcome).toMatchObject({ detail: { fields_unread: ['Protection'] } });
    // Every field gone: all three named, in the report's order of importance.
    expect(judgeSentinelctlStatus({ ok: true, health: parseSentinelctlStatus('Agent\n') }).outcome).toMatchObject({
      detail: { fields_unread: ['Agent Operational State', 'Protection', 'Ready'] },
    });
  });

  it('keeps odd values out of the evidence', () => {
    const odd = judged(/(Agent Operational State: +)enabled/, '$1enabled; rm -rf /').evidence;
    expect(odd).toEqual({ sentinelone: { operational_state: null, protection: 'enabled', ready: 'yes', version: '23.4.1.7125' } });
    expect(parseSentinelctlStatus(s1Status.replace('23.4.1.7125', '23.4.x'))).toMatchObject({ version: undefined });
    expect(parseSentinelctlStatus(s1Status.replace('23.4.1.7125', 'v23.4.1.7125'))).toMatchObject({ version: undefined });
    expect(judged(/(Agent Operational State: +)enabled/, '$1-enabled').evidence).toMatchObject({
      sentinelone: { operational_state: null },
    });
  });
});

describe('reportFields', () => {
  it('takes a field by its whole name, whatever the case and indentation, once', () => {
    expect(reportFields('Ready: yes\n  READY: no\n', { ready: /^\w+$/ })).toEqual({ ready: 'yes' });
    expect(reportFields('Already Ready: yes\nReady: no\n', { ready: /^\w+$/ })).toEqual({ ready: 'no' });
    expect(reportFields('Ready:yes\nReady:\nReady: \n', { ready: /^\w+$/ })).toEqual({});
    // A value that does not fit is skipped, and a later one of the same name is not read instead.
    expect(reportFields('Ready: ??\nReady: yes\n', { ready: /^\w+$/ })).toEqual({});
    expect(reportFields('Ready:   yes   \n', { ready: /^yes$/ })).toEqual({ ready: 'yes' });
    expect(reportFields('constructor: x\n', { ready: /^\w+$/ })).toEqual({});
    // A name holds no colon: one line is one field.
    expect(reportFields('Status:Ready: yes\n', { ready: /^\w+$/ })).toEqual({});
  });
});

describe('falconctl stats', () => {
  it('reads nothing that decides from the recorded start of the report (no agent_info section)', () => {
    expect(parseFalconStats(falconStatsStart)).toEqual({ operational: undefined, version: undefined });
    expect(judgeFalconStats({ ok: true, health: parseFalconStats(falconStatsStart) })).toEqual({
      evidence: { falcon: { operational: null, version: null } },
      outcome: {
        status: 'UNKNOWN',
        reason: 'agent_health_unreadable',
        detail: { agent: 'falcon-sensor', fields_unread: ['Sensor operational'] },
      },
    });
  });

  it('PASSes an operational sensor and FAILs one that says it is not', () => {
    const report = (operational: string) => ({ ok: true as const, health: parseFalconStats(falconStatsStart + agentInfo(operational)) });
    expect(judgeFalconStats(report('true'))).toEqual({ evidence: { falcon: { operational: 'true', version: '7.10.19103.0' } } });
    expect(judgeFalconStats(report('false')).outcome).toEqual({ status: 'FAIL', rule: 'sensor_not_operational' });
    expect(judgeFalconStats(report('unknown')).outcome).toMatchObject({
      status: 'UNKNOWN',
      detail: { fields_unread: ['Sensor operational'] },
    });
  });

  it('says why a report could not be had', () => {
    expect(judgeFalconStats({ ok: false, error: 'exit_status' })).toEqual({
      evidence: {},
      outcome: { status: 'UNKNOWN', reason: 'agent_health_unreadable', detail: { agent: 'falcon-sensor', health_error: 'exit_status' } },
    });
    expect(judgeSentinelctlStatus({ ok: false, error: 'permission_denied' }).outcome).toMatchObject({
      detail: { agent: 'sentinelone', health_error: 'permission_denied' },
    });
  });
});

describe('mdatp health --output json', () => {
  it('reads the recorded report into the fields the text report has', () => {
    expect(parseMdatpHealthJson(JSON.parse(defenderJson) as Record<string, unknown>)).toEqual({
      healthy: true,
      licensed: true,
      realTimeProtection: true,
      passiveMode: false,
      definitionsStatus: 'up_to_date',
      definitionsAgeMinutes: 158,
      healthIssues: 0,
      unrecognizedLines: [],
    });
  });

  it('reads plain values (older reports) and leaves odd ones unread', () => {
    expect(
      parseMdatpHealthJson({
        realTimeProtectionEnabled: false,
        passiveModeEnabled: { value: true },
        definitionsStatus: 'outOfDate',
        healthIssues: ['a', 'b'],
        definitionsUpdatedMinutesAgo: 20160,
      }),
    ).toEqual({
      realTimeProtection: false,
      passiveMode: true,
      definitionsStatus: 'out_of_date',
      definitionsAgeMinutes: 20160,
      healthIssues: 2,
      unrecognizedLines: [],
    });
    expect(
      parseMdatpHealthJson({
        healthy: 'true',
        licensed: null,
        realTimeProtectionEnabled: null,
        passiveModeEnabled: { isManaged: false },
        definitionsStatus: { $type: 'up to date; more' },
        definitionsUpdatedMinutesAgo: -1,
        healthIssues: 'none',
      }),
    ).toStrictEqual({ unrecognizedLines: [] });
    expect(parseMdatpHealthJson({ definitionsStatus: null })).toStrictEqual({ unrecognizedLines: [] });
    expect(parseMdatpHealthJson({ definitionsUpdatedMinutesAgo: 1.5 }).definitionsAgeMinutes).toBeUndefined();
    expect(parseMdatpHealthJson({ definitionsUpdatedMinutesAgo: 0 }).definitionsAgeMinutes).toBe(0);
  });

  it('is unreadable when the answer is no JSON object or the tool failed', () => {
    expect(readMdatpHealthJson(ok('ATTENTION: No license found.\n'))).toEqual({ ok: false, error: 'parse_error' });
    expect(readMdatpHealthJson(ok('[]'))).toEqual({ ok: false, error: 'parse_error' });
    expect(readMdatpHealthJson(ok('null'))).toEqual({ ok: false, error: 'parse_error' });
    expect(readMdatpHealthJson(ok('5'))).toEqual({ ok: false, error: 'parse_error' });
    expect(readMdatpHealthJson(ok('{}', 1))).toEqual({ ok: false, error: 'exit_status' });
    expect(readMdatpHealthJson(missing)).toEqual({ ok: false, error: 'command_not_found' });
    expect(readMdatpHealthJson(ok(defenderJson))).toMatchObject({ ok: true, health: { licensed: true } });
  });
});

describe('collection', () => {
  const commands = [
    { argv: [FALCONCTL, 'stats'], stdout: falconStatsStart + agentInfo('true'), stderr: '', exitCode: 0 },
    { argv: [SENTINELCTL, 'status'], stdout: s1Status, stderr: '', exitCode: 0 },
    { argv: [MDATP, 'health', '--output', 'json'], stdout: defenderJson, stderr: '', exitCode: 0 },
  ];
  const collect = async (agents: string[]) => {
    const host = new FakeHost({ commands });
    const policy = resolvePolicy({ malware: { requiredAgents: { DARWIN: agents } } });
    const facts = await malwareProtection.collect(createContext(host, policy, NOW));
    const tools = host.commandsRun().filter((argv) => [FALCONCTL, SENTINELCTL, MDATP].includes(argv[0]!));
    return { facts, tools };
  };

  it('runs no product tool under the default policy', async () => {
    const { facts, tools } = await collect([]);
    expect(tools).toEqual([]);
    expect(facts.agents).toBeUndefined();
  });

  it('asks each required product once, whatever names the policy uses, and only those', async () => {
    const { facts, tools } = await collect(['crowdstrike', 'falcon-sensor', 'mdatp']);
    expect(tools).toEqual(
      expect.arrayContaining([
        [FALCONCTL, 'stats'],
        [MDATP, 'health', '--output', 'json'],
      ]),
    );
    expect(tools).toHaveLength(2);
    expect(facts.agents).toMatchObject({
      required: ['crowdstrike', 'falcon-sensor', 'mdatp'],
      reports: { 'falcon-sensor': { ok: true }, 'microsoft-defender': { ok: true } },
    });
    expect(facts.agents!.reports.sentinelone).toBeUndefined();
    expect((await collect(['sentinelone'])).tools).toEqual([[SENTINELCTL, 'status']]);
  });
});

describe('with Gatekeeper and XProtect', () => {
  const present = (dict: Record<string, unknown>): PlistFile => ({ state: 'present', dict: dict as never });
  const fresh = NOW.getTime() - 5 * 86_400_000;
  const base = (over: Partial<MalwareFacts>): MalwareFacts => ({
    spctl: ok('assessments enabled\n'),
    bundles: [{ location: 'library_apple', info: present({ CFBundleShortVersionString: '5272' }), mtimeMs: fresh }],
    remediator: { state: 'absent' },
    softwareUpdate: { managed: { state: 'absent' }, system: present({}), swVers: missing },
    ...over,
  });
  const s1 = (text = s1Status) => ({ ok: true as const, health: parseSentinelctlStatus(text) });
  const defender = (over: Record<string, unknown> = {}) => ({
    ok: true as const,
    health: parseMdatpHealthJson({ ...(JSON.parse(defenderJson) as Record<string, unknown>), ...over }),
  });
  const judge = (reports: AgentReports, over: Partial<MalwareFacts> = {}, required = Object.keys(reports), policy = resolvePolicy({})) =>
    evaluateMalwareProtection(base({ ...over, agents: { required, reports } }), policy, NOW);
  const s1Disabled = s1Status.replace(/(Agent Operational State: +)enabled/, '$1disabled');

  it('without required products, is judged as before', () => {
    expect(evaluateMalwareProtection(base({}), resolvePolicy({}), NOW)).toMatchObject({
      status: 'PASS',
      evidence: { rule: 'protected_and_current' },
    });
    expect(evaluateMalwareProtection(base({}), resolvePolicy({}), NOW).evidence.required).toBeUndefined();
  });

  it('PASSes when both the built-in protection and every required product protect', () => {
    const verdict = judge({ sentinelone: s1(), 'microsoft-defender': defender() });
    expect(verdict).toMatchObject({
      status: 'PASS',
      evidence: {
        rule: 'protected_and_agents_healthy',
        source: 'xprotect',
        gatekeeper: true,
        xprotect_version: '5272',
        required: ['sentinelone', 'microsoft-defender'],
        sentinelone: { operational_state: 'enabled' },
        // XProtect's limit stays the top-level one; Defender's is among its own fields.
        max_signature_age_days: 30,
        defender: { licensed: true, max_signature_age_days: 7, signature_age_days: 0 },
      },
    });
    expect(verdict.evidence.reason).toBeUndefined();
  });

  it('FAILs a required product that is not installed, naming every one missing', () => {
    const notFound = { ok: false as const, error: 'command_not_found' as const };
    expect(judge({ 'falcon-sensor': notFound, sentinelone: s1(s1Disabled), 'microsoft-defender': notFound })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'required_agent_not_installed', not_installed: ['falcon-sensor', 'microsoft-defender'] },
    });
    // A tool that exists but refuses is not "not installed".
    expect(judge({ 'falcon-sensor': { ok: false, error: 'permission_denied' } })).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', agent: 'falcon-sensor', health_error: 'permission_denied' },
    });
  });

  it("FAILs on a product's own report although Gatekeeper and XProtect pass", () => {
    expect(judge({ sentinelone: s1(s1Disabled) })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_disabled', gatekeeper: true },
    });
    expect(judge({ 'microsoft-defender': defender({ licensed: false }) })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'agent_unlicensed' },
    });
    expect(judge({ 'microsoft-defender': defender({ definitionsUpdatedMinutesAgo: 8 * 1440 }) })).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'signatures_outdated', max_signature_age_days: 30, defender: { signature_age_days: 8, max_signature_age_days: 7 } },
    });
  });

  it('lets a FAIL of either part decide before an UNKNOWN of the other, the built-in FAIL first', () => {
    const gatekeeperOff = { spctl: ok('assessments disabled\n', 1) } as Partial<MalwareFacts>;
    expect(judge({ sentinelone: s1(s1Disabled) }, gatekeeperOff)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'gatekeeper_disabled', sentinelone: { operational_state: 'disabled' }, required: ['sentinelone'] },
    });
    expect(judge({ 'falcon-sensor': { ok: false, error: 'timeout' } }, gatekeeperOff)).toMatchObject({
      status: 'FAIL',
      evidence: { rule: 'gatekeeper_disabled', required: ['falcon-sensor'] },
    });
    const spctlMissing = { spctl: missing };
    expect(judge({ sentinelone: s1(s1Disabled) }, spctlMissing)).toMatchObject({ status: 'FAIL', evidence: { rule: 'agent_disabled' } });
    const unknownBoth = judge({ 'falcon-sensor': { ok: false, error: 'timeout' } }, spctlMissing);
    expect(unknownBoth).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'command_not_found', step: 'gatekeeper', required: ['falcon-sensor'] },
    });
    expect(unknownBoth.evidence.rule).toBeUndefined();
    // The products' verdict carries its own word only, not the built-in one's.
    const agentFail = judge({ sentinelone: s1(s1Disabled) }, spctlMissing);
    expect(agentFail.evidence.reason).toBeUndefined();
    expect(agentFail.evidence.step).toBeUndefined();
    expect(judge({ sentinelone: s1() }, spctlMissing)).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'command_not_found' } });
    // The built-in part passing, a product's report undecided: UNKNOWN, never PASS.
    const undecided = judge({ 'falcon-sensor': { ok: true, health: parseFalconStats(falconStatsStart) } });
    expect(undecided).toMatchObject({
      status: 'UNKNOWN',
      evidence: { reason: 'agent_health_unreadable', fields_unread: ['Sensor operational'], gatekeeper: true },
    });
    expect(undecided.evidence.rule).toBeUndefined();
    // Defender unreadable: no Defender fields at all, XProtect's limit untouched.
    const defenderUnread = judge({ 'microsoft-defender': { ok: false, error: 'exit_status' } });
    expect(defenderUnread).toMatchObject({ status: 'UNKNOWN', evidence: { agent: 'microsoft-defender', max_signature_age_days: 30 } });
    expect(defenderUnread.evidence.defender).toBeUndefined();
  });
});
