// The OpenSSH server's configuration, read the same way on every platform: the effective settings
// that `sshd -T` / `sshd -G` print, whether they keep passwords and root out (REMOTE_LOGIN with
// policy.remoteLogin.allowSshIfHardened), and the directives of an sshd_config file.
import type { CommandResult, Evidence } from './types';
import { commandFailureReason, type CommandFailureReason } from './verdict';

/** The OpenSSH server on Linux, macOS and FreeBSD alike. */
export const SSHD = '/usr/sbin/sshd';

/** The three effective settings that decide whether a password or root gets in (lower-case tokens). */
export interface SshdSettings {
  passwordAuthentication?: string;
  /** KbdInteractiveAuthentication, or ChallengeResponseAuthentication before OpenSSH 8.7 renamed it. */
  kbdInteractiveAuthentication?: string;
  permitRootLogin?: string;
}

/** Values go into evidence: a setting's token ("no", "prohibit-password"), anything else "other". */
const token = (value: string): string => (/^[a-z-]{1,20}$/.test(value) ? value : 'other');

/** `sshd -T` / `sshd -G` output: one lower-case "keyword value" line per setting. */
export function parseSshdEffectiveConfig(stdout: string): SshdSettings {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([a-z0-9]+) (.+)$/.exec(line.trim());
    if (m && !values.has(m[1]!)) values.set(m[1]!, m[2]!.trim());
  }
  const settings: SshdSettings = {};
  const password = values.get('passwordauthentication');
  const kbd = values.get('kbdinteractiveauthentication') ?? values.get('challengeresponseauthentication');
  const root = values.get('permitrootlogin');
  if (password !== undefined) settings.passwordAuthentication = token(password);
  if (kbd !== undefined) settings.kbdInteractiveAuthentication = token(kbd);
  if (root !== undefined) settings.permitRootLogin = token(root);
  return settings;
}

export type SshdReading = { ok: true; settings: SshdSettings } | { ok: false; reason: CommandFailureReason | 'sshd_config_unreadable' };

/** The effective settings from an `sshd -T`/`-G` run, or why they could not be read. */
export function readSshdEffectiveConfig(result: CommandResult): SshdReading {
  if (result.error) return { ok: false, reason: commandFailureReason(result) };
  // sshd -T refuses without root or host keys ("no hostkeys available", "Permission denied").
  if (result.exitCode !== 0)
    return {
      ok: false,
      reason: /privilege separation|Permission denied|not owned|no hostkeys/i.test(result.stderr)
        ? 'sshd_config_unreadable'
        : 'parse_error',
    };
  const settings = parseSshdEffectiveConfig(result.stdout);
  const complete =
    settings.passwordAuthentication !== undefined &&
    settings.kbdInteractiveAuthentication !== undefined &&
    settings.permitRootLogin !== undefined;
  return complete ? { ok: true, settings } : { ok: false, reason: 'parse_error' };
}

/**
 * Hardened: no password logins (also not through PAM's keyboard-interactive, which is how macOS
 * and FreeBSD take passwords by default) and no root logins.
 */
export function isHardened(settings: SshdSettings): boolean {
  return settings.passwordAuthentication === 'no' && settings.kbdInteractiveAuthentication === 'no' && settings.permitRootLogin === 'no';
}

/** The same evidence fields on every platform. */
export function sshdEvidence(settings: SshdSettings): Evidence {
  return {
    password_authentication: settings.passwordAuthentication ?? null,
    kbd_interactive_authentication: settings.kbdInteractiveAuthentication ?? null,
    permit_root_login: settings.permitRootLogin ?? null,
  };
}

export interface SshdDirective {
  /** Lower-cased: sshd_config keywords are case-insensitive. */
  keyword: string;
  /** The first argument. */
  value: string;
}

/**
 * The directives of an sshd_config file that apply to every connection: `Keyword value` or
 * `Keyword=value` lines before the first `Match` block, without comments and blank lines.
 */
export function sshdConfigDirectives(text: string): SshdDirective[] {
  const out: SshdDirective[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([^\s=]+)(?:\s*=\s*|\s+)([^\s#]+)/.exec(line);
    if (!m) continue;
    const keyword = m[1]!.toLowerCase();
    if (keyword === 'match') break;
    out.push({ keyword, value: m[2]! });
  }
  return out;
}
