// The OpenSSH readers every platform's REMOTE_LOGIN shares (checks/sshd.ts): `sshd -T`/`-G` output
// and sshd_config directives.
import { describe, expect, it } from 'vitest';
import { isHardened, parseSshdEffectiveConfig, readSshdEffectiveConfig, sshdConfigDirectives, sshdEvidence } from '../../checks/sshd';

const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '' });

describe('sshd -T / -G', () => {
  it('reads the three settings, the pre-8.7 keyword included', () => {
    expect(
      parseSshdEffectiveConfig(
        'port 22\npasswordauthentication no\nchallengeresponseauthentication no\npermitrootlogin prohibit-password\n',
      ),
    ).toEqual({
      passwordAuthentication: 'no',
      kbdInteractiveAuthentication: 'no',
      permitRootLogin: 'prohibit-password',
    });
  });

  it('prefers kbdinteractiveauthentication and keeps only tokens for evidence', () => {
    const settings = parseSshdEffectiveConfig(
      'challengeresponseauthentication yes\nkbdinteractiveauthentication no\npasswordauthentication /etc/x y\npermitrootlogin no\n',
    );
    expect(settings).toEqual({ passwordAuthentication: 'other', kbdInteractiveAuthentication: 'no', permitRootLogin: 'no' });
    expect(sshdEvidence(settings)).toEqual({
      password_authentication: 'other',
      kbd_interactive_authentication: 'no',
      permit_root_login: 'no',
    });
  });

  it('is hardened only with passwords, keyboard-interactive and root logins all off', () => {
    expect(isHardened({ passwordAuthentication: 'no', kbdInteractiveAuthentication: 'no', permitRootLogin: 'no' })).toBe(true);
    expect(isHardened({ passwordAuthentication: 'no', kbdInteractiveAuthentication: 'yes', permitRootLogin: 'no' })).toBe(false);
    expect(isHardened({ passwordAuthentication: 'no', kbdInteractiveAuthentication: 'no', permitRootLogin: 'prohibit-password' })).toBe(
      false,
    );
    expect(isHardened({ passwordAuthentication: 'no', permitRootLogin: 'no' })).toBe(false);
  });

  it('needs all three settings and says why a run gave none', () => {
    expect(readSshdEffectiveConfig(ok('passwordauthentication no\nkbdinteractiveauthentication no\npermitrootlogin no\n'))).toMatchObject({
      ok: true,
    });
    expect(readSshdEffectiveConfig(ok('port 22\npasswordauthentication no\n'))).toEqual({ ok: false, reason: 'parse_error' });
    expect(readSshdEffectiveConfig({ exitCode: 1, stdout: '', stderr: 'sshd: no hostkeys available -- exiting.\n' })).toEqual({
      ok: false,
      reason: 'sshd_config_unreadable',
    });
    expect(
      readSshdEffectiveConfig({ exitCode: 255, stdout: '', stderr: '/etc/ssh/sshd_config line 3: Bad configuration option: Foo\n' }),
    ).toEqual({ ok: false, reason: 'parse_error' });
    expect(readSshdEffectiveConfig({ exitCode: null, stdout: '', stderr: '', error: 'not_found' })).toEqual({
      ok: false,
      reason: 'command_not_found',
    });
  });
});

describe('sshd_config directives', () => {
  it('reads "Keyword value" and "Keyword=value" lines, lower-cases keywords, stops at the first Match', () => {
    const text =
      '# PasswordAuthentication no\r\nPort 2222 # custom\r\nPasswordAuthentication=no\r\nInclude /etc/ssh/sshd_config.d/*.conf\r\nMatch User admin\r\n  PasswordAuthentication yes\r\n';
    expect(sshdConfigDirectives(text)).toEqual([
      { keyword: 'port', value: '2222' },
      { keyword: 'passwordauthentication', value: 'no' },
      { keyword: 'include', value: '/etc/ssh/sshd_config.d/*.conf' },
    ]);
  });
});
