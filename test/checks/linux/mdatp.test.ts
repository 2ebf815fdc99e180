// Microsoft Defender on Linux judged by its own health report (checks/linux/mdatp.ts): each field that
// decides, the ones that are missing, the report's lines it cannot read, and the ways mdatp fails.
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../checks/engine';
import { malwareProtection } from '../../../checks/linux/malwareProtection';
import { parseMdatpHealth, readMdatpHealth } from '../../../checks/mdatp';
import { resolvePolicy } from '../../../checks/policy';
import { FakeHost } from '../../support/fakeHost';
import { listFixtures } from '../../support/checkFixtures';

// The healthy report recorded in the fixture (Ubuntu 20.04, app 101.23062.0010).
const recorded = listFixtures().find((f) => f.platform === 'LINUX' && f.name === 'defender-health-report-healthy')!;
const healthyReport = recorded.fixture.host.commands![0]!.stdout as string;
const withField = (name: string, value: string) =>
  healthyReport.replace(new RegExp(`^${name}( +): .*$`, 'm'), (_, pad: string) => `${name}${pad}: ${value}`);
const withoutField = (name: string) => healthyReport.replace(new RegExp(`^${name} +: .*\\n`, 'm'), '');

const judge = async (report: { stdout?: string; exitCode?: number; error?: 'not_found' | 'timeout' }, maxSignatureAgeDays = 7) => {
  const host = new FakeHost({
    dirs: { '/proc': ['1', '1100'] },
    files: { '/proc/1/comm': 'systemd', '/proc/1100/comm': 'wdavdaemon' },
    commands: report.error
      ? []
      : [{ argv: ['/usr/bin/mdatp', 'health'], stdout: report.stdout ?? '', stderr: '', exitCode: report.exitCode ?? 0 }],
  });
  const policy = resolvePolicy({ malware: { requiredAgents: { LINUX: ['mdatp'] }, maxSignatureAgeDays } });
  const now = new Date('2026-11-21T12:00:00Z');
  return malwareProtection.evaluate(await malwareProtection.collect(createContext(host, policy, now)), policy, now);
};

describe('mdatp health', () => {
  it('reads the deciding fields and numbers the lines that are no field', () => {
    const h = parseMdatpHealth(
      'ATTENTION: notice\nhealthy        : true\nhealth_issues  : ["no active event provider", "x"]\n\n  wrapped"\n',
    );
    expect(h).toEqual({ healthy: true, healthIssues: 2, unrecognizedLines: [1, 5] });
    expect(parseMdatpHealth('healthy : maybe\ndefinitions_updated_minutes_ago : 12.5\n')).toEqual({ unrecognizedLines: [] });
  });

  it('reads a line whole: its name from the first character, a quoted value only when quoted at both ends', () => {
    expect(parseMdatpHealth('Xhealthy : false\nhealthy : true  \n')).toEqual({ healthy: true, unrecognizedLines: [1] });
    const status = (value: string) => parseMdatpHealth(`definitions_status : ${value}\n`).definitionsStatus;
    expect([status('"up_to_date"'), status('up_to_date'), status('x"up_to_date"'), status('"up_to_date"x')]).toEqual([
      'up_to_date',
      'up_to_date',
      'x"up_to_date"',
      '"up_to_date"x',
    ]);
  });

  it('dates the definitions from their own field only', () => {
    expect(parseMdatpHealth('log_level : 3\n')).toEqual({ unrecognizedLines: [] });
  });

  it('counts health issues only from health_issues written as a list', () => {
    const issues = (text: string) => parseMdatpHealth(text).healthIssues;
    expect(issues('health_issues : []\nedr_device_tags : ["x"]\n')).toBe(0);
    expect(issues('health_issues : ["a"]\n')).toBe(1);
    expect([issues('health_issues : none\n'), issues('health_issues : x[]\n'), issues('health_issues : []x\n')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('passes only on the healthy recorded report', async () => {
    const verdict = await judge({ stdout: healthyReport });
    expect(verdict.status).toBe('PASS');
    // Every deciding field in the evidence as read; no issue count or unread line when there is none.
    expect(verdict.evidence.defender).toEqual({
      healthy: true,
      licensed: true,
      real_time_protection: true,
      passive_mode: false,
      definitions_status: 'up_to_date',
      signature_age_days: 0,
      unrecognized_lines: [30],
    });
    const issues = await judge({ stdout: withField('health_issues', '["no active event provider"]') });
    expect(issues.evidence.defender).toMatchObject({ health_issues: 1 });
    // The wrapped value gone, no line is left unread.
    const unwrapped = await judge({ stdout: healthyReport.replace(/^edr_configuration_version .*\n.*\n/m, '') });
    expect(unwrapped.status).toBe('PASS');
    expect(unwrapped.evidence.defender).not.toHaveProperty('unrecognized_lines');
  });

  it.each([
    ['licensed', 'false', 'agent_unlicensed'],
    ['real_time_protection_enabled', 'false', 'realtime_protection_off'],
    ['passive_mode_enabled', 'true', 'passive_mode'],
    ['healthy', 'false', 'agent_unhealthy'],
  ])('FAILs when %s is %s (%s)', async (name, value, rule) => {
    const verdict = await judge({ stdout: withField(name, value) });
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule } });
  });

  it('reports passive mode as read, null when the report lacks it', async () => {
    expect((await judge({ stdout: withField('passive_mode_enabled', 'true') })).evidence.defender).toMatchObject({ passive_mode: true });
    expect((await judge({ stdout: withoutField('passive_mode_enabled') })).evidence.defender).toMatchObject({ passive_mode: null });
  });

  it('FAILs definitions older than the policy allows, by their age in minutes', async () => {
    const old = withField('definitions_updated_minutes_ago', String(8 * 1440));
    expect(await judge({ stdout: old })).toMatchObject({ status: 'FAIL', evidence: { rule: 'signatures_outdated' } });
    expect((await judge({ stdout: old }, 9)).status).toBe('PASS');
    // Exactly the limit is within it.
    expect((await judge({ stdout: withField('definitions_updated_minutes_ago', String(7 * 1440)) })).status).toBe('PASS');
  });

  it('never PASSes a definitions status it does not know, nor a report missing a deciding field', async () => {
    const updating = await judge({ stdout: withField('definitions_status', '"updating"') });
    expect(updating).toMatchObject({ status: 'UNKNOWN', evidence: { reason: 'definitions_status_unrecognized' } });
    for (const field of ['healthy', 'licensed', 'real_time_protection_enabled', 'definitions_updated_minutes_ago']) {
      const verdict = await judge({ stdout: withoutField(field) });
      expect(verdict).toMatchObject({
        status: 'UNKNOWN',
        evidence: { reason: 'agent_health_unreadable', agent: 'microsoft-defender', fields_unread: [field] },
      });
    }
    const undated = await judge({ stdout: withoutField('definitions_updated_minutes_ago') });
    expect(undated.evidence.defender).toMatchObject({ signature_age_days: null });
    // Older reports without definitions_status are judged on the definitions' age alone.
    expect((await judge({ stdout: withoutField('definitions_status') })).status).toBe('PASS');
  });

  it('is UNKNOWN when mdatp cannot answer, saying how it failed', async () => {
    expect(await judge({ error: 'not_found' })).toMatchObject({ status: 'UNKNOWN', evidence: { health_error: 'command_not_found' } });
    expect(await judge({ stdout: '', exitCode: 1 })).toMatchObject({ status: 'UNKNOWN', evidence: { health_error: 'exit_status' } });
    expect(readMdatpHealth({ exitCode: null, stdout: '', stderr: '', error: 'timeout' })).toEqual({ ok: false, error: 'timeout' });
  });

  it('does not ask mdatp when Defender is not running', async () => {
    const host = new FakeHost({ dirs: { '/proc': ['1'] }, files: { '/proc/1/comm': 'systemd' } });
    const policy = resolvePolicy({ malware: { requiredAgents: { LINUX: ['mdatp'] } } });
    const verdict = malwareProtection.evaluate(
      await malwareProtection.collect(createContext(host, policy, new Date())),
      policy,
      new Date(),
    );
    expect(verdict).toMatchObject({ status: 'FAIL', evidence: { rule: 'required_agent_not_running' } });
    expect(host.commandsRun()).toEqual([]);
  });
});
