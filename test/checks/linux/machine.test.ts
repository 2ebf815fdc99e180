// `device-agent check` run for real on this machine, as a child process of the built CLI. Each
// verdict is compared with what an independent tool (lsblk, ss, ps, nft, dpkg-query) or the raw
// files say about the machine, so the test asserts what the machine really is.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_KEYS, PostureResult } from '../../../src/protocol/schemas';
import { parseJson } from '../../support/json';

const CLI = path.resolve('dist/device-agent.cjs');
const onLinux = process.platform === 'linux';
const dir = mkdtempSync(path.join(tmpdir(), 'check-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, DEVICE_AGENT_POLICY: '', ...env },
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A tool's output, or undefined when the tool is not installed here. */
function tool(file: string, args: string[]): string | undefined {
  if (!existsSync(file)) return undefined;
  return execFileSync(file, args, { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
}

const byKey = new Map<string, PostureResult>();

describe.skipIf(!onLinux)('device-agent check on this machine', () => {
  beforeAll(() => {
    const { code, stdout, stderr } = cli(['check', '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const r of JSON.parse(stdout) as unknown[]) {
      const result = PostureResult.parse(r);
      byKey.set(result.check_key, result);
    }
  });

  it('reports all nine checks once, as wire-valid posture results', () => {
    expect([...byKey.keys()].sort()).toEqual([...CHECK_KEYS].sort());
  });

  it('DISK_ENCRYPTION matches the root device ancestry lsblk shows', (ctx) => {
    const r = byKey.get('DISK_ENCRYPTION')!;
    if (r.evidence?.container === true) return ctx.skip('running in a container: DISK_ENCRYPTION follows containers.mode');
    const source = tool('/usr/bin/findmnt', ['-n', '-o', 'SOURCE', '/'])?.trim();
    const types = source?.startsWith('/dev/')
      ? tool('/usr/bin/lsblk', ['-s', '-n', '-r', '-o', 'TYPE', source])?.trim().split('\n')
      : undefined;
    if (!types) return ctx.skip('findmnt/lsblk unavailable or root not on a /dev device');
    expect(r.status).toBe(types.includes('crypt') ? 'PASS' : 'FAIL');
    if (!types.includes('crypt')) expect(r.evidence).toMatchObject({ rule: 'root_not_encrypted', root_chain: types });
  });

  it('REMOTE_LOGIN agrees with the listening sockets ss reports', (ctx) => {
    const r = byKey.get('REMOTE_LOGIN')!;
    const listening = tool('/usr/bin/ss', ['-H', '-l', '-t', '-n']);
    if (listening === undefined) return ctx.skip('ss (iproute2) not installed');
    const sshExposed = listening
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[3] ?? '')
      .some((local) => /:22$/.test(local) && !/^(127\.|\[::1\]|\[::ffff:127\.)/.test(local));
    expect(r.evidence?.ssh_listening).toBe(sshExposed);
    if (!sshExposed) expect(r.status).toBe('PASS');
  });

  it('SCREEN_LOCK is NOT_APPLICABLE when no desktop is installed or running', (ctx) => {
    const r = byKey.get('SCREEN_LOCK')!;
    const desktops = tool('/usr/bin/ps', ['-e', '-o', 'comm='])
      ?.split('\n')
      .filter((c) => /^(gnome-shell|plasmashell|kwin_|xfce4-session|cinnamon|mate-session|Xorg|Xwayland|sway)/.test(c));
    const installed = ['/usr/share/xsessions', '/usr/share/wayland-sessions'].some((d) => existsSync(d));
    if (desktops === undefined || desktops.length > 0 || installed)
      return ctx.skip('a desktop is installed or running here (or ps is missing)');
    expect(r).toMatchObject({ status: 'NOT_APPLICABLE', evidence: { reason: 'headless' } });
  });

  it('OS_VERSION judges the release /etc/os-release names', () => {
    const r = byKey.get('OS_VERSION')!;
    const fields = Object.fromEntries(
      readFileSync('/etc/os-release', 'utf8')
        .split('\n')
        .map((l) => /^([A-Z_]+)=("?)(.*)\2$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1] ?? '', m[3] ?? '']),
    );
    expect(r.evidence).toMatchObject({ id: fields.ID, version_id: fields.VERSION_ID });
    if (fields.ID === 'debian' && existsSync('/etc/debian_version')) {
      expect(r.evidence?.version).toBe(readFileSync('/etc/debian_version', 'utf8').trim());
    }
  });

  it("PASSWORD_POLICY reports pam_unix's default 6 when the stack has nothing stricter", (ctx) => {
    const r = byKey.get('PASSWORD_POLICY')!;
    const stack = existsSync('/etc/pam.d/common-password') ? readFileSync('/etc/pam.d/common-password', 'utf8') : '';
    const active = stack.split('\n').filter((l) => /^\s*-?password\s/.test(l));
    if (active.length === 0 || active.some((l) => /pam_(pwquality|cracklib|passwdqc)|minlen=/.test(l)))
      return ctx.skip('this PAM stack sets its own minimum');
    expect(r).toMatchObject({ status: 'FAIL', evidence: { module: 'pam_unix', min_length: 6, rule: 'min_length' } });
  });

  it('AUTO_UPDATE fails when dpkg says unattended-upgrades is not installed', (ctx) => {
    const r = byKey.get('AUTO_UPDATE')!;
    if (r.evidence?.container === true || !existsSync('/usr/bin/dpkg-query')) return ctx.skip('container or not a dpkg system');
    const query = spawnSync('/usr/bin/dpkg-query', ['-W', '-f=${Status}', 'unattended-upgrades'], { encoding: 'utf8' });
    if (query.stdout === 'install ok installed') return ctx.skip('unattended-upgrades is installed here');
    expect(r).toMatchObject({ status: 'FAIL', evidence: { rule: 'not_installed', unattended_upgrades_installed: false } });
  });

  it('FIREWALL_ENABLED fails when nft shows no input chain and no legacy table is loaded', (ctx) => {
    const r = byKey.get('FIREWALL_ENABLED')!;
    if (r.evidence?.container === true || process.getuid?.() !== 0) return ctx.skip('container, or not root (nft needs root)');
    const ruleset = tool('/usr/sbin/nft', ['-j', 'list', 'ruleset']);
    const legacy = existsSync('/proc/net/ip_tables_names') && readFileSync('/proc/net/ip_tables_names', 'utf8').trim() !== '';
    if (ruleset === undefined || legacy || ruleset.includes('"hook": "input"'))
      return ctx.skip('nft missing, legacy iptables loaded, or an input chain exists');
    expect(r).toMatchObject({ status: 'FAIL', evidence: { rule: 'no_inbound_filtering', input_chains: 0 } });
  });

  it('TIME_SYNC fails when neither systemd nor any time daemon runs', (ctx) => {
    const r = byKey.get('TIME_SYNC')!;
    const comms = tool('/usr/bin/ps', ['-e', '-o', 'comm=']);
    if (r.evidence?.container === true || comms === undefined || existsSync('/run/systemd/system'))
      return ctx.skip('container, no ps, or systemd runs');
    if (comms.split('\n').some((c) => ['chronyd', 'ntpd', 'systemd-timesyn', 'openntpd'].includes(c.trim())))
      return ctx.skip('a time daemon runs here');
    expect(r).toMatchObject({ status: 'FAIL', evidence: { rule: 'no_time_sync_service', daemons: [] } });
  });

  it('MALWARE_PROTECTION is NOT_APPLICABLE under the default policy', () => {
    expect(byKey.get('MALWARE_PROTECTION')).toMatchObject({ status: 'NOT_APPLICABLE', evidence: { reason: 'no_builtin_antimalware' } });
  });
});

describe.skipIf(!onLinux)('device-agent check options', () => {
  it('prints a table with one line per check and exits 0 whatever the statuses', () => {
    const { code, stdout } = cli(['check']);
    expect(code).toBe(0);
    const lines = stdout.split('\n\n')[0]!.trimEnd().split('\n'); // the table; explanations follow a blank line
    expect(lines[0]).toMatch(/^CHECK\s+STATUS\s+DETAIL$/);
    expect(
      lines
        .slice(1)
        .map((l) => l.split(/\s+/)[0])
        .sort(),
    ).toEqual([...CHECK_KEYS].sort());
    for (const line of lines.slice(1)) expect(line).toMatch(/^[A-Z_]+\s+(PASS|FAIL|UNKNOWN|NOT_APPLICABLE)\s+\S/);
  });

  it('--only selects checks (case-insensitive, comma-separated)', () => {
    const { code, stdout } = cli(['check', '--json', '--only', 'os_version, FIREWALL_ENABLED']);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as PostureResult[]).map((r) => r.check_key).sort()).toEqual(['FIREWALL_ENABLED', 'OS_VERSION']);
  });

  it('exits 2 with a one-line message for an unknown key or an unusable policy file', () => {
    const unknown = cli(['check', '--only', 'DISK_ENCRYPTION,NO_SUCH_CHECK']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`device-agent: unknown check key in --only: NO_SUCH_CHECK (known: ${CHECK_KEYS.join(', ')})\n`);
    const missing = cli(['check', '--policy', path.join(dir, 'absent.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^device-agent: cannot read policy file .*absent\.json: ENOENT\n$/);
    writeFileSync(path.join(dir, 'bad.json'), '{"screenLock": {"maxIdleSeconds": "soon"}}');
    const bad = cli(['check'], { DEVICE_AGENT_POLICY: path.join(dir, 'bad.json') });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^device-agent: invalid policy at screenLock\.maxIdleSeconds: .*\n$/);
    expect(bad.stdout).toBe('');
  });

  it('applies a policy file from DEVICE_AGENT_POLICY: a threshold at the measured minimum turns PASSWORD_POLICY to PASS', (ctx) => {
    const measured = parseJson<PostureResult[]>(cli(['check', '--json', '--only', 'PASSWORD_POLICY']).stdout)[0]!;
    const minLength = measured.evidence?.min_length;
    if (typeof minLength !== 'number') return ctx.skip('PASSWORD_POLICY measured no minimum here');
    writeFileSync(path.join(dir, 'lenient.json'), JSON.stringify({ password: { minLength } }));
    const relaxed = parseJson<PostureResult[]>(
      cli(['check', '--json', '--only', 'PASSWORD_POLICY'], { DEVICE_AGENT_POLICY: path.join(dir, 'lenient.json') }).stdout,
    )[0]!;
    expect(relaxed).toMatchObject({ status: 'PASS', evidence: { min_length_required: minLength, rule: 'min_length_met' } });
  });
});
